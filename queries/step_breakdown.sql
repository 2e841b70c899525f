-- step_breakdown: computing, communication, overlapped and free time of each device.
--
-- The split of the vendor's step_trace_time.csv and msprof-analyze's cluster_time_summary, over
-- the whole capture.
-- computing_ns = length of the union of compute kernels; communication_ns = length of the union
-- of collective ops (the HCCL group ops of the file for an Ascend device that has them, else the
-- device's own communication kernels); overlapped_ns = their intersection;
-- communication_not_overlapped_ns = communication_ns - overlapped_ns; the window runs from the first
-- start to the last end of computing or communication; free_ns = window_ns - length of their union.
-- *_pct_of_window are percents of window_ns. Unions are computed as gaps and islands: intervals by
-- start, each one's reach = the largest end so far; a gap opens where a start passes the previous
-- reach. Same numbers as `profscope analyze` device_time.
WITH dev AS (
    SELECT run, rank, file, process, process_role, category, ts_ns, dur_ns
    FROM events
    WHERE process_role IN ('ascend_hardware', 'kineto_device')
      AND category IN ('compute_kernel', 'comm_kernel', 'wait_sync', 'data_movement')
),
devices AS (
    SELECT DISTINCT run, rank, file, process, process_role FROM dev
),
group_ops AS (
    SELECT run, file, ts_ns, dur_ns
    FROM events
    WHERE process_role = 'hccl' AND category = 'comm_kernel' AND thread LIKE 'Group%'
),
group_files AS (
    SELECT DISTINCT run, file FROM group_ops
),
comm AS (
    SELECT d.run, d.rank, d.file, d.process, g.ts_ns, g.dur_ns
    FROM devices d
    JOIN group_ops g ON d.run = g.run AND d.file = g.file
    WHERE d.process_role = 'ascend_hardware'
    UNION ALL
    SELECT v.run, v.rank, v.file, v.process, v.ts_ns, v.dur_ns
    FROM dev v
    LEFT JOIN group_files f ON v.run = f.run AND v.file = f.file
    WHERE v.category = 'comm_kernel' AND (f.file IS NULL OR v.process_role <> 'ascend_hardware')
),
intervals AS (
    SELECT run, rank, file, process, 'computing' AS part, ts_ns AS s, ts_ns + dur_ns AS e
    FROM dev WHERE category = 'compute_kernel'
    UNION ALL
    SELECT run, rank, file, process, 'communication' AS part, ts_ns AS s, ts_ns + dur_ns AS e FROM comm
    UNION ALL
    SELECT run, rank, file, process, 'busy' AS part, ts_ns AS s, ts_ns + dur_ns AS e
    FROM dev WHERE category = 'compute_kernel'
    UNION ALL
    SELECT run, rank, file, process, 'busy' AS part, ts_ns AS s, ts_ns + dur_ns AS e FROM comm
),
reach AS (
    SELECT run, rank, file, process, part, s, e,
           MAX(e) OVER (PARTITION BY run, rank, file, process, part ORDER BY s, e
                        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS reach
    FROM intervals
),
gaps AS (
    SELECT run, rank, file, process, part, s, e,
           s - LAG(reach) OVER (PARTITION BY run, rank, file, process, part ORDER BY s, e) AS gap
    FROM reach
),
unions AS (
    SELECT run, rank, file, process, part,
           MIN(s) AS first_start,
           MAX(e) AS last_end,
           MAX(e) - MIN(s) - SUM(CASE WHEN gap > 0 THEN gap ELSE 0 END) AS union_ns
    FROM gaps
    GROUP BY run, rank, file, process, part
),
per_device AS (
    SELECT run, rank, file, process,
           MAX(CASE WHEN part = 'busy' THEN first_start END) AS window_start_ns,
           MAX(CASE WHEN part = 'busy' THEN last_end END) AS window_end_ns,
           MAX(CASE WHEN part = 'busy' THEN union_ns END) AS busy_ns,
           SUM(CASE WHEN part = 'computing' THEN union_ns ELSE 0 END) AS computing_ns,
           SUM(CASE WHEN part = 'communication' THEN union_ns ELSE 0 END) AS communication_ns
    FROM unions
    GROUP BY run, rank, file, process
)
SELECT run, rank, process, window_start_ns, window_end_ns,
       window_end_ns - window_start_ns AS window_ns,
       computing_ns,
       communication_ns,
       computing_ns + communication_ns - busy_ns AS overlapped_ns,
       busy_ns - computing_ns AS communication_not_overlapped_ns,
       window_end_ns - window_start_ns - busy_ns AS free_ns,
       CASE WHEN window_end_ns > window_start_ns THEN 100 * CAST(computing_ns AS DOUBLE) / (window_end_ns - window_start_ns) ELSE CAST(0 AS DOUBLE) END AS computing_pct_of_window,
       CASE WHEN window_end_ns > window_start_ns THEN 100 * CAST(busy_ns - computing_ns AS DOUBLE) / (window_end_ns - window_start_ns) ELSE CAST(0 AS DOUBLE) END AS communication_not_overlapped_pct_of_window,
       CASE WHEN window_end_ns > window_start_ns THEN 100 * CAST(window_end_ns - window_start_ns - busy_ns AS DOUBLE) / (window_end_ns - window_start_ns) ELSE CAST(0 AS DOUBLE) END AS free_pct_of_window
FROM per_device
WHERE busy_ns IS NOT NULL
ORDER BY run, rank, file, process
