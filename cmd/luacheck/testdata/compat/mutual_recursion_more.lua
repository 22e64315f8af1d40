-- Mutual recursion that is reachable, or broken by a second value.
local ping, pong
function ping(n) if n > 0 then return pong(n - 1) end return 0 end
function pong(n) if n > 0 then return ping(n - 1) end return 1 end

local three_a, three_b, three_c
three_a = function(n) return three_b(n) end
three_b = function(n) return three_c(n) end
three_c = function(n) return three_a(n) end

local outer = function()
  local inner_a, inner_b
  inner_a = function() return inner_b() end
  inner_b = function() return inner_a() end
end

return ping(KEYS[1]), outer
