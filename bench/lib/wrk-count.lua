-- wrk script for bench/client-vs-wrk.sh: counts the responses with status
-- 200 (the only ones that count as successful, as in bench-client) and
-- prints one line after wrk's own summary:
--
--   wrk-count: status_200=N non_200=N responses=N duration_us=N connect=N read=N write=N timeout=N status_gt_399=N
--
-- parsed by wrk_counts in bench/lib/count.sh.
--
-- Why a script: wrk's own summary cannot give the number of 200s. Its
-- "Non-2xx or 3xx responses: N" line counts statuses > 399 only (a 3xx or a
-- 204 passes as a success), and its "Requests/sec" counts every response.
--
-- wrk's Lua API (wg/wrk, SCRIPTING, "Overview", "Setup" and "Done"; and
-- src/wrk.c, main() and response_complete()):
--   * every wrk thread runs this file in its own Lua state, and setup() and
--     done() run in another one, the main state, which sees no request;
--   * setup(thread) is called in the main state once per thread before the
--     threads start; thread:get(name) reads a global of that thread's state
--     (numbers may be transferred);
--   * response(status, headers, body) is called in the thread's state for
--     every complete response (wrk.c counts the same responses in
--     summary.requests);
--   * done(summary, latency, requests) is called in the main state after
--     every thread has been joined; summary.duration is the run's length in
--     microseconds, summary.errors holds connect, read, write, timeout and
--     status (> 399) counts.
-- So the counts live in per-thread globals and done() sums them through the
-- thread objects kept by setup().
--
-- Cost: defining response() makes wrk collect every response's headers and
-- body for Lua ("Parsing the headers and body is expensive", SCRIPTING), so
-- wrk spends more CPU per request with this script than without it.

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

-- Per-thread state (each thread's Lua state runs this chunk).
status_200 = 0
non_200 = 0

function response(status, headers, body)
  if status == 200 then
    status_200 = status_200 + 1
  else
    non_200 = non_200 + 1
  end
end

function done(summary, latency, requests)
  local ok, other = 0, 0
  for _, thread in ipairs(threads) do
    ok = ok + thread:get("status_200")
    other = other + thread:get("non_200")
  end
  local e = summary.errors
  io.write(string.format(
    "wrk-count: status_200=%d non_200=%d responses=%d duration_us=%d connect=%d read=%d write=%d timeout=%d status_gt_399=%d\n",
    ok, other, summary.requests, summary.duration, e.connect, e.read, e.write, e.timeout, e.status))
end
