local a, b, c = 1, 2
local d, e = 1, 2, 3
local f, g = redis.call("MGET", KEYS[1], KEYS[2])
local h = 1, 2
a, b = 3
return {a, b, c, d, e, f, g, h}
