local function f(x)
  if x then
    return 1
  else
    return 2
  end
  return 3
end
local function g()
  do return 1 end
  local y = 2
  return y
end
return f(ARGV[1]) + g()
