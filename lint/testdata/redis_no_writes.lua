#!lua flags=no-writes
-- A no-writes script may read, not write or publish (921).
redis.call('PUBLISH', 'c', 'm') -- want: E921@12
local v = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], v) -- want: E921@12
return v
