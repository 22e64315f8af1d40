local v = redis.call("GET", KEYS[1]) or "default"
local w = v and #v or 0
local unused_default = nil or false
local n = not v
return w, n
