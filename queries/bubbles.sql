-- bubbles: idle gaps of each device of at least 1 us (1000 ns), with a size histogram.
--
-- The device is busy while any compute kernel or collective op runs (the same union as
-- step_breakdown.sql: HCCL group ops of the file for an Ascend device that has them, else the
-- device's own communication kernels). A gap is the time between one busy island's end and the
-- next one's start, inside the window (first busy start to last busy end). Columns: gaps (count)
-- and idle_ns (their sum) for gaps >= 1000 ns; idle_pct_of_window = idle_ns as a percent of
-- window_ns; largest_gap_ns; gap counts per size class [1us,10us), [10us,100us), [100us,1ms),
-- [1ms,10ms), [10ms,inf). Same numbers as `profscope analyze` bubbles at --min-gap-us 1 (the
-- causes of the gaps are left to `analyze`).
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
busy AS (
    SELECT run, rank, file, process, ts_ns AS s, ts_ns + dur_ns AS e
    FROM dev WHERE category = 'compute_kernel'
    UNION ALL
    SELECT d.run, d.rank, d.file, d.process, g.ts_ns AS s, g.ts_ns + g.dur_ns AS e
    FROM devices d
    JOIN group_ops g ON d.run = g.run AND d.file = g.file
    WHERE d.process_role = 'ascend_hardware'
    UNION ALL
    SELECT v.run, v.rank, v.file, v.process, v.ts_ns AS s, v.ts_ns + v.dur_ns AS e
    FROM dev v
    LEFT JOIN group_files f ON v.run = f.run AND v.file = f.file
    WHERE v.category = 'comm_kernel' AND (f.file IS NULL OR v.process_role <> 'ascend_hardware')
),
reach AS (
    SELECT run, rank, file, process, s, e,
           MAX(e) OVER (PARTITION BY run, rank, file, process ORDER BY s, e
                        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS reach
    FROM busy
),
gaps AS (
    SELECT run, rank, file, process, s, e,
           s - LAG(reach) OVER (PARTITION BY run, rank, file, process ORDER BY s, e) AS gap
    FROM reach
),
per_device AS (
    SELECT run, rank, file, process,
           MAX(e) - MIN(s) AS window_ns,
           SUM(CASE WHEN gap >= 1000 THEN 1 ELSE 0 END) AS gaps,
           SUM(CASE WHEN gap >= 1000 THEN gap ELSE 0 END) AS idle_ns,
           MAX(CASE WHEN gap >= 1000 THEN gap ELSE 0 END) AS largest_gap_ns,
           SUM(CASE WHEN gap >= 1000 AND gap < 10000 THEN 1 ELSE 0 END) AS gaps_1us_10us,
           SUM(CASE WHEN gap >= 10000 AND gap < 100000 THEN 1 ELSE 0 END) AS gaps_10us_100us,
           SUM(CASE WHEN gap >= 100000 AND gap < 1000000 THEN 1 ELSE 0 END) AS gaps_100us_1ms,
           SUM(CASE WHEN gap >= 1000000 AND gap < 10000000 THEN 1 ELSE 0 END) AS gaps_1ms_10ms,
           SUM(CASE WHEN gap >= 10000000 THEN 1 ELSE 0 END) AS gaps_10ms_up
    FROM gaps
    GROUP BY run, rank, file, process
)
SELECT run, rank, process, window_ns, gaps, idle_ns,
       CASE WHEN window_ns > 0 THEN 100 * CAST(idle_ns AS DOUBLE) / window_ns ELSE CAST(0 AS DOUBLE) END AS idle_pct_of_window,
       largest_gap_ns, gaps_1us_10us, gaps_10us_100us, gaps_100us_1ms, gaps_1ms_10ms, gaps_10ms_up
FROM per_device
ORDER BY run, rank, file, process
