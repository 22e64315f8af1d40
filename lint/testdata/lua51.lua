-- Lua 5.2+ syntax Redis's Lua 5.1 rejects (931); luacheck accepts it.
local function use(...) return ... end

for i = 1, 3 do
  if i == 2 then goto continue end -- want: E931@18
  redis.call('GET', KEYS[1])
  ::continue:: -- want: E931@3
end
use(7 // 2) -- want: E931@7
use(1 & 2, 1 | 2) -- want: E931@7 E931@14
use(1 ~ 2, ~1) -- want: E931@7 E931@12
use(1 << 2, 1 >> 2) -- want: E931@7 E931@15
do local x = 1;; use(x) end -- want: E931@16 W551@16

-- Plain Lua 5.1.
local t = {1, 2; 3}
return use(#t ~= 3 and t[1] .. 'x' or -t[2] ^ 2 % 3)
