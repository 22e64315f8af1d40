local function f(...)
  return select("#", ...)
end
local function g(a, ...)
  return a
end
local function h(...)
  local x, y = ...
  return x
end
return f(1) + g(1) + h(1, 2)
