-- launch_latency: per device, the host calls that launched its tasks and each call's launch latency (first task start - call start).
--
-- Links: an Ascend task's connection_id equals the connection_id of the CANN API call that
-- launched it (process_role cann_api); a Kineto kernel's correlation_id equals its runtime
-- call's (process_role host). When several calls of a file share an id, the earliest is the
-- launcher. Device tasks are the events of category compute_kernel, comm_kernel, wait_sync or
-- data_movement of an ascend_hardware / kineto_device process. One latency per call: a call
-- that launches several tasks counts once, from its first task. Columns: tasks, linked_tasks,
-- calls, mean_latency_ns, max_latency_ns, negative_calls (calls whose first task starts before
-- the call: host and device clocks disagree). Same numbers as `profscope analyze` dispatch
-- (tasks, linked_tasks, latency.count / mean_ns / max_ns / negative). Devices linked only by
-- torch_to_npu flows (torch_npu Level0, no CANN calls in the file) have no row: `analyze` covers
-- them (link `flow`).
WITH tasks AS (
    SELECT run, rank, file, process, ts_ns,
           CASE WHEN process_role = 'kineto_device' THEN correlation_id ELSE connection_id END AS link
    FROM events
    WHERE process_role IN ('ascend_hardware', 'kineto_device')
      AND category IN ('compute_kernel', 'comm_kernel', 'wait_sync', 'data_movement')
),
host_calls AS (
    SELECT run, file, ts_ns,
           CASE WHEN process_role = 'host' THEN correlation_id ELSE connection_id END AS link
    FROM events
    WHERE (process_role = 'cann_api' AND connection_id >= 0)
       OR (process_role = 'host' AND correlation_id >= 0)
),
calls AS (
    SELECT run, file, link, MIN(ts_ns) AS call_ns
    FROM host_calls
    GROUP BY run, file, link
),
linked AS (
    SELECT t.run, t.rank, t.file, t.process, t.link, MIN(t.ts_ns) AS first_ns, COUNT(*) AS n,
           MIN(c.call_ns) AS call_ns
    FROM tasks t
    JOIN calls c ON t.run = c.run AND t.file = c.file AND t.link = c.link
    WHERE t.link >= 0
    GROUP BY t.run, t.rank, t.file, t.process, t.link
),
per_device AS (
    SELECT run, rank, file, process,
           SUM(n) AS linked_tasks,
           COUNT(*) AS calls,
           AVG(CAST(first_ns - call_ns AS DOUBLE)) AS mean_latency_ns,
           MAX(first_ns - call_ns) AS max_latency_ns,
           SUM(CASE WHEN first_ns < call_ns THEN 1 ELSE 0 END) AS negative_calls
    FROM linked
    GROUP BY run, rank, file, process
),
all_tasks AS (
    SELECT run, rank, file, process, COUNT(*) AS tasks
    FROM tasks
    GROUP BY run, rank, file, process
)
SELECT p.run, p.rank, p.process, a.tasks, p.linked_tasks, p.calls, p.mean_latency_ns,
       p.max_latency_ns, p.negative_calls
FROM per_device p
JOIN all_tasks a ON p.run = a.run AND p.rank = a.rank AND p.file = a.file AND p.process = a.process
ORDER BY p.run, p.rank, p.file, p.process
