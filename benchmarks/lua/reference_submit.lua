-- The reference app's submit: the same JSON body shape as the capture submit.
function setup(thread)
  counter = (counter or 0) + 1
  thread:set("prefix", "t" .. counter)
end

local n = 0
function request()
  n = n + 1
  local body = '{"email":"bench-' .. prefix .. "-" .. n .. '@example.org",' ..
    '"name":"Bench User","message":"The export button does nothing when I click it, please fix.",' ..
    '"tags":["bug"],"properties":{"plan":"team","app_version":"4.2.0"}}'
  return wrk.format("POST", nil, { ["Content-Type"] = "application/json" }, body)
end
