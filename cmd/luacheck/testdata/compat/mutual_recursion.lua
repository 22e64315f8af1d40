local is_even, is_odd

function is_even(n)
  if n == 0 then return true end
  return is_odd(n - 1)
end

function is_odd(n)
  if n == 0 then return false end
  return is_even(n - 1)
end

local function a(n)
  if n > 0 then return a(n - 1) end
  return 0
end

local b, c
b = function(n) return c(n) end
c = function(n) return b(n) end

local d, e
d = function(n) return e(n) end
e = function(n) return d(n) end
return d(1)
