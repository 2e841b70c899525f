-- top_kernels: the 10 compute kernels with the most device time on each device.
--
-- A device is one device process (Ascend `Ascend Hardware`, or a Kineto GPU process) of one file
-- of one run. Kernels are device events of category `compute_kernel`, grouped by name.
-- Columns: count; sum_ns, max_ns, min_ns, mean_ns (ns of device time); pct_of_compute = sum_ns as
-- a percent of the device's total compute-kernel time (sum of durations). Ranked by sum_ns, ties
-- by name (the window orders by -sum_ns: polars windows take one sort direction). Same numbers
-- as `profscope analyze` top_events (subset `compute`, by_sum).
WITH kernels AS (
    SELECT run, rank, file, process, name,
           COUNT(*) AS count,
           SUM(dur_ns) AS sum_ns,
           MAX(dur_ns) AS max_ns,
           MIN(dur_ns) AS min_ns
    FROM events
    WHERE process_role IN ('ascend_hardware', 'kineto_device')
      AND category = 'compute_kernel'
    GROUP BY run, rank, file, process, name
),
ranked AS (
    SELECT run, rank, file, process, name, count, sum_ns, max_ns, min_ns,
           SUM(sum_ns) OVER (PARTITION BY run, rank, file, process) AS compute_ns,
           ROW_NUMBER() OVER (PARTITION BY run, rank, file, process ORDER BY -sum_ns, name) AS pos
    FROM kernels
)
SELECT run, rank, process, pos, name, count, sum_ns, max_ns, min_ns,
       CAST(sum_ns AS DOUBLE) / count AS mean_ns,
       100 * CAST(sum_ns AS DOUBLE) / compute_ns AS pct_of_compute
FROM ranked
WHERE pos <= 10
ORDER BY run, rank, file, process, pos
