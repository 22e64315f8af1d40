-- Unused variables and values (2xx, 3xx), as luacheck judges them.
local function use(...) return ... end

do local x = 1 end -- want: W211@10
do local x = 1 use(x) end
do local function f() end end -- want: W211@19
do local function f(n) return f(n - 1) end end -- want: W211@19

-- Mutual recursion nothing reaches is unused; luacheck reports each
-- function where it is given.
do
  local even, odd
  function even(n) return odd(n) end -- want: W211@12
  function odd(n) return even(n) end -- want: W211@12
end
do
  local a, b
  a = function() return b() end -- want: W211@3
  b = function() return a() end -- want: W211@3
end
do
  local a, b
  a = function() return b() end
  b = function() return a() end
  use(a())
end

-- Arguments, varargs and self.
do local function f(a, b) return a end use(f) end -- want: W212@24
do local function f(...) end use(f) end -- want: W212@21
do
  local function f(...) return select('#', ...) end
  local function g(...) local x = ... return x end
  use(f, g)
end
do local t = {} function t:m() return 1 end use(t) end -- want: W212@27
do local function f(_a, b) return b end use(f) end

-- Names beyond the values are never set; a call fills every name.
do local a, b, c = 1, 2 use(a, b, c) end -- want: W221@16
do local a, b, c = redis.call('TIME') use(a, b, c) end

-- "_" is exempt; loop variables are 213.
do local _ = 1 for _, v in ipairs(KEYS) do use(v) end end
for i = 1, 3 do end -- want: W213@5
for k, v in pairs(KEYS) do use(v) end -- want: W213@5

do local x use(x) end -- want: W221@10
do local x = 1 x = 2 end -- want: W231@10
do local t = {} t.x = 1 end -- want: W241@10

-- Values (311): overwritten, or dead after a branch.
do local x = 1 x = 2 use(x) end -- want: W311@10
do local q = 1 if q then q = 2 end end -- want: W311@26
do local n = 0 for i = 1, 3 do n = n + i end use(n) end
do
  local last
  while true do
    if last then break end
    last = 1
  end
end
do local s = 1 local function g() return s end s = 2 use(g) end
do
  local r = 1
  r = r + 1 -- want: W311@3
  local function c() r = 5 end -- want: W311@22
  use(c)
end
repeat local done = true until done
do local x = 0 while KEYS[1] do x = 1 break end use(x) end -- want: W512
do local x = 0 while true do x = 1 break end use(x) end -- want: W311@10 W512

-- Reads in unreachable code, and closures created there, do not count.
local function dead_reads()
  local x = KEYS[1] -- want: W211@9
  do return end
  local c = x -- want: W211@9 W511@3
end
local function dead_closure()
  local b = KEYS[1] -- want: W211@9
  do return end
  local g = function() return b end -- want: W511@3
  return g
end

return use(dead_reads, dead_closure)
