-- Globals (1xx): Redis's sandbox is the standard; anything else is a
-- typo or a global Redis refuses at run time.

-- The standard globals are fine.
local std = {KEYS[1], ARGV[1], redis.call('GET', KEYS[1]), cjson.encode({}), bit.band(1, 2),
  struct.pack('>I', 1), cmsgpack.pack(1), string.format('%d', 1), math.floor(1.5),
  table.concat({}), tostring(1), unpack({}), _VERSION}

-- print, require and dofile are undefined: Redis removes them.
print(1) -- want: W113@1
local m = require('x') -- want: W113@11
dofile('y') -- want: W113@1

counter = 1 -- want: W111@1
function helper() end -- want: W111@10
cache.x = 1 -- want: W112@1
redis = nil -- want: W121@1
KEYS = {} -- want: W121@1
string.format = nil -- want: W122@1
redis.helper = 1 -- want: W142@1
string.format.x = 1 -- want: W142@1
local typo = redis.cal('GET', KEYS[1]) -- want: W143@14

-- KEYS and ARGV elements may be set.
KEYS[1] = 'a'
ARGV.x = 1

-- A local shadows the global.
do
  local print = function() end
  print(1)
end

local function undefined_inside() return missing end -- want: W113@42

return std, m, typo, undefined_inside
