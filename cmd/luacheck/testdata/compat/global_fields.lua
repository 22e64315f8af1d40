local r = redis.call("GET", KEYS[1])
local p = redis.pcall("GET", KEYS[1])
local e = redis.error_reply("x")
local s = redis.status_reply("ok")
local n = redis.nocall()
local j = cjson.encode({}) .. cjson.decoder
local m = math.floor(1.5) + math.pow(2, 2) + math.mod(3, 2)
local q = string.gfind
local z = table.getn({}) + table.unknown
return {r, p, e, s, n, j, m, q, z}
