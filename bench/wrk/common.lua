-- Shared by every bench script: per-thread ids, non-2xx counting, and a JSON
-- summary on stdout (one line starting with BENCH_JSON) for bench/loadgen.py.
local threads = {}

function setup(thread)
  thread:set("id", #threads + 1)
  table.insert(threads, thread)
end

non2xx = 0
first_bad_status = 0

function response(status, headers, body)
  if status < 200 or status > 299 then
    non2xx = non2xx + 1
    if first_bad_status == 0 then
      first_bad_status = status
    end
  end
end

function done(summary, latency, requests)
  local bad, bad_status = 0, 0
  for _, thread in ipairs(threads) do
    bad = bad + (thread:get("non2xx") or 0)
    local status = thread:get("first_bad_status") or 0
    if status ~= 0 then
      bad_status = status
    end
  end
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d,'
      .. '"status_errors":%d,"non2xx":%d,"first_bad_status":%d,'
      .. '"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,"mean_us":%.1f}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.timeout,
    e.status, bad, bad_status,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end

-- Arguments after "--" on wrk's command line, for the scripts below.
function split_args(args)
  local list = {}
  for _, value in ipairs(args) do
    table.insert(list, value)
  end
  return list
end

wrk.headers["Content-Type"] = "application/json"
