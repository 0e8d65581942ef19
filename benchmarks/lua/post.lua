-- A plain POST with an optional body: BENCH_BODY (text) or BENCH_BODY_FILE (bytes of a file),
-- and BENCH_CONTENT_TYPE. Used for capture open, the 100 KB upload and agent replies.
wrk.method = "POST"
local path = os.getenv("BENCH_BODY_FILE")
if path and path ~= "" then
  local file = assert(io.open(path, "rb"))
  wrk.body = file:read("*a")
  file:close()
else
  wrk.body = os.getenv("BENCH_BODY") or ""
end
local content_type = os.getenv("BENCH_CONTENT_TYPE")
if content_type and content_type ~= "" then
  wrk.headers["Content-Type"] = content_type
end
