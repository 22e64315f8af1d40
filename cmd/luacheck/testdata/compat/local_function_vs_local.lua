local f = function(n)
  if n <= 0 then return 0 end
  return f(n - 1)
end
local function g(n)
  if n <= 0 then return 0 end
  return g(n - 1)
end
return f(1) + g(1)
