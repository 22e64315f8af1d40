local a = 1
a = 2
local b
b = 3
local c = 4
c = c
local d = redis.call("GET", KEYS[1])
d = nil
return b
