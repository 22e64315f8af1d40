-- name: model.acquire
-- version: 1
-- description: The lock of the model check of fence.write (a test script, not one redlua runs): SET NX PX, and a token that always grows, the server's time in milliseconds or one above the last token, as a lease's token does.
-- keys: lock last
-- args: owner ttl_ms
-- returns: the token when the lock was taken, 0 when it is held

if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 0
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local last = tonumber(redis.call('GET', KEYS[2])) or 0
local token = math.max(now, last + 1)
redis.call('SET', KEYS[2], string.format('%d', token))
return token
