-- Redis builds Lua 5.1 with LUA_COMPAT_VARARG: a vararg function has a
-- hidden local "arg" holding its extra arguments, so reading arg there
-- reads no global and uses "...". The main chunk has no such local: a
-- top-level arg is a global Redis's sandbox does not define (W113).
local function first(...)
  return arg[1]
end
local function count(...)
  return function() return arg.n end
end
local function shadowed(a, ...)
  local arg = a
  return arg
end
return first, count, shadowed, arg
