-- Unreachable code (511), loops that run at most once (512), unbalanced
-- assignments (531, 532) and empty blocks (541, 542).
local function use(...) return ... end

local function after_do()
  do return end
  return 2 -- want: W511@3
end
local function after_if(x)
  if x then return 1 else return 2 end
  return 3 -- want: W511@3
end
local function after_infinite_loop()
  while true do end
  return 1 -- want: W511@3
end
local function breaking_loop()
  while true do if KEYS[1] then break end end
  return 1
end
local function once()
  while true do break end -- want: W512@3
  for i = 1, 2 do return i end -- want: W512@3
end
local function never()
  while false do end -- want: W512@3
  while nil do redis.call('GET', KEYS[1]) end -- want: W511@16
end
local function if_without_else(x)
  if x then return 1 end
  return 2
end

do local a, b a, b = 1 use(a, b) end -- want: W532@15
do local a = 1, 2 use(a) end -- want: W531@4
do local a, b a, b = redis.call('TIME') local c, d = 1 use(a, b, c, d) end -- want: W221

do end -- want: W541@1
if KEYS[1] then end -- want: W542@12
if KEYS[2] then use(1) else end -- want: W542@24

return use(after_do, after_if, after_infinite_loop, breaking_loop, once, never, if_without_else)
