-- Agent replies spread over BENCH_SPREAD threads (ids BENCH_THREAD_ID - spread + 1 ..
-- BENCH_THREAD_ID) of BENCH_APPLICATION, so no single thread grows by thousands of replies; the
-- bench points them at older threads, which no reading scenario shows (benchmarks/run.py).
local application = os.getenv("BENCH_APPLICATION")
local top = tonumber(os.getenv("BENCH_THREAD_ID"))
local spread = tonumber(os.getenv("BENCH_SPREAD") or "1000")
local body = '{"message":"Thanks for the report, a fix ships today."}'
local headers = nil

function init(args)
  -- wrk.format replaces wrk.headers (the -H options, e.g. Authorization) when given headers.
  headers = {}
  for key, value in pairs(wrk.headers) do
    headers[key] = value
  end
  headers["Content-Type"] = "application/json"
end

function request()
  local id = top - math.random(0, spread - 1)
  local path = "/applications/" .. application .. "/feedback/" .. id .. "/replies"
  return wrk.format("POST", path, headers, body)
end
