-- communication_share: communication as a share of device time, with two labelled denominators.
--
-- (a) comm_kernels_*: explicit communication kernels (device events of category `comm_kernel`);
--     a device with none falls back to the HCCL group ops of its file (process_role `hccl`,
--     thread `Group ...`), named in comm_kernels_source. comm_kernels_pct is a percent of
--     compute_kernel_ns, the sum of the device's compute-kernel durations.
-- (b) wait and copy tasks by kind, from the task type (else the name) upper-cased with ' ' and '-'
--     read as '_': EVENT_WAIT / STREAM_WAIT / MEM_WAIT* (event_and_mem_waits), NOTIFY_WAIT*
--     (notify_wait: the update_step_context sync, not a collective) and category `data_movement`;
--     each *_pct is a percent of device_task_ns, the sum of durations of every device task.
-- Times in ns. Same numbers as `profscope analyze` communication (overlap with compute: see
-- step_breakdown.sql).
WITH dev AS (
    SELECT run, rank, file, process, category, dur_ns,
           UPPER(REPLACE(REPLACE(CASE WHEN task_type = '' THEN name ELSE task_type END, ' ', '_'), '-', '_')) AS kind
    FROM events
    WHERE process_role IN ('ascend_hardware', 'kineto_device')
      AND category IN ('compute_kernel', 'comm_kernel', 'wait_sync', 'data_movement')
),
per_device AS (
    SELECT run, rank, file, process,
           SUM(CASE WHEN category = 'compute_kernel' THEN dur_ns ELSE 0 END) AS compute_kernel_ns,
           SUM(dur_ns) AS device_task_ns,
           SUM(CASE WHEN category = 'comm_kernel' THEN 1 ELSE 0 END) AS own_comm_count,
           SUM(CASE WHEN category = 'comm_kernel' THEN dur_ns ELSE 0 END) AS own_comm_ns,
           MAX(CASE WHEN category = 'comm_kernel' THEN dur_ns ELSE 0 END) AS own_comm_max_ns,
           SUM(CASE WHEN category = 'wait_sync' AND (kind LIKE 'EVENT_WAIT%' OR kind LIKE 'STREAM_WAIT%' OR kind LIKE 'MEM_WAIT%') THEN 1 ELSE 0 END) AS waits_count,
           SUM(CASE WHEN category = 'wait_sync' AND (kind LIKE 'EVENT_WAIT%' OR kind LIKE 'STREAM_WAIT%' OR kind LIKE 'MEM_WAIT%') THEN dur_ns ELSE 0 END) AS waits_ns,
           SUM(CASE WHEN category = 'wait_sync' AND kind LIKE 'NOTIFY_WAIT%' THEN 1 ELSE 0 END) AS notify_count,
           SUM(CASE WHEN category = 'wait_sync' AND kind LIKE 'NOTIFY_WAIT%' THEN dur_ns ELSE 0 END) AS notify_ns,
           SUM(CASE WHEN category = 'data_movement' THEN 1 ELSE 0 END) AS copy_count,
           SUM(CASE WHEN category = 'data_movement' THEN dur_ns ELSE 0 END) AS copy_ns
    FROM dev
    GROUP BY run, rank, file, process
),
group_ops AS (
    SELECT run, file, COUNT(*) AS ops, SUM(dur_ns) AS ops_ns, MAX(dur_ns) AS ops_max_ns
    FROM events
    WHERE process_role = 'hccl' AND category = 'comm_kernel' AND thread LIKE 'Group%'
    GROUP BY run, file
),
chosen AS (
    SELECT d.*,
           CASE WHEN d.own_comm_count = 0 AND g.ops IS NOT NULL THEN 'hccl_group_ops' ELSE 'device_comm_kernels' END AS comm_kernels_source,
           CASE WHEN d.own_comm_count = 0 AND g.ops IS NOT NULL THEN g.ops ELSE d.own_comm_count END AS comm_count,
           CASE WHEN d.own_comm_count = 0 AND g.ops IS NOT NULL THEN g.ops_ns ELSE d.own_comm_ns END AS comm_ns,
           CASE WHEN d.own_comm_count = 0 AND g.ops IS NOT NULL THEN g.ops_max_ns ELSE d.own_comm_max_ns END AS comm_max_ns
    FROM per_device d
    LEFT JOIN group_ops g ON d.run = g.run AND d.file = g.file
)
SELECT run, rank, process, comm_kernels_source,
       comm_count AS comm_kernels_count,
       comm_ns AS comm_kernels_sum_ns,
       comm_max_ns AS comm_kernels_max_ns,
       compute_kernel_ns,
       CASE WHEN compute_kernel_ns > 0 THEN 100 * CAST(comm_ns AS DOUBLE) / compute_kernel_ns ELSE CAST(0 AS DOUBLE) END AS comm_kernels_pct,
       device_task_ns,
       waits_count AS event_and_mem_waits_count,
       waits_ns AS event_and_mem_waits_sum_ns,
       CASE WHEN device_task_ns > 0 THEN 100 * CAST(waits_ns AS DOUBLE) / device_task_ns ELSE CAST(0 AS DOUBLE) END AS event_and_mem_waits_pct,
       notify_count AS notify_wait_count,
       notify_ns AS notify_wait_sum_ns,
       CASE WHEN device_task_ns > 0 THEN 100 * CAST(notify_ns AS DOUBLE) / device_task_ns ELSE CAST(0 AS DOUBLE) END AS notify_wait_pct,
       copy_count AS data_movement_count,
       copy_ns AS data_movement_sum_ns,
       CASE WHEN device_task_ns > 0 THEN 100 * CAST(copy_ns AS DOUBLE) / device_task_ns ELSE CAST(0 AS DOUBLE) END AS data_movement_pct
FROM chosen
ORDER BY run, rank, file, process
