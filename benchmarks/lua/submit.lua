-- Capture submit: a JSON body with a new sender, tags and properties on every request.
local counter = 0
local tags = { '["bug"]', '["billing","ui"]', '["feature request"]', '[]', '["performance","mobile","export"]' }

function setup(thread)
  counter = counter + 1
  thread:set("prefix", "t" .. counter)
end

local n = 0
function request()
  n = n + 1
  local body = '{"email":"bench-' .. prefix .. "-" .. n .. '@example.org",' ..
    '"name":"Bench User","message":"The export button does nothing when I click it, please fix.",' ..
    '"tags":' .. tags[(n % #tags) + 1] .. ',' ..
    '"properties":{"plan":"team","app_version":"4.2.0","seats":' .. (n % 50) .. '},' ..
    '"nps":' .. (n % 11) .. ',"url":"https://app.example.com/reports"}'
  return wrk.format("POST", nil, { ["Content-Type"] = "application/json" }, body)
end
