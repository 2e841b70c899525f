-- stream_composition: compute time per physical stream of each device.
--
-- Only device compute kernels count (category `compute_kernel`; waits, copies and communication
-- are excluded). Columns: kernels (count); compute_ns (sum of kernel durations, ns);
-- pct_of_compute = compute_ns as a percent of the device's total compute-kernel time. Streams by
-- compute_ns, largest first. Same numbers as `profscope analyze` composition.streams.
WITH per_stream AS (
    SELECT run, rank, file, process, stream,
           COUNT(*) AS kernels,
           SUM(dur_ns) AS compute_ns
    FROM events
    WHERE process_role IN ('ascend_hardware', 'kineto_device')
      AND category = 'compute_kernel'
    GROUP BY run, rank, file, process, stream
)
SELECT run, rank, process, stream, kernels, compute_ns,
       100 * CAST(compute_ns AS DOUBLE) / SUM(compute_ns) OVER (PARTITION BY run, rank, file, process) AS pct_of_compute
FROM per_stream
ORDER BY run, rank, file, process, compute_ns DESC, stream
