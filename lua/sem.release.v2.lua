-- name: sem.release
-- version: 2
-- description: Give back the permits an owner holds and wake the waiters.
-- keys: permits
-- args: owner count channel publish
-- returns: the number of the owner's permits that were still held (0 when they had expired)
--
-- Version 2: publish is PUBLISH, or SPUBLISH on a cluster with sharded pub/sub.

local permits = KEYS[1]
local owner, count, channel, publish = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
if publish ~= 'PUBLISH' and publish ~= 'SPUBLISH' then
  return redis.error_reply('ERR publish must be PUBLISH or SPUBLISH')
end


local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

local held = 0
for i = 1, count do
  local member = owner .. ':' .. i
  local deadline = redis.call('ZSCORE', permits, member)
  if deadline and tonumber(deadline) > now then
    held = held + 1
  end
  redis.call('ZREM', permits, member)
end
redis.call(publish, channel, 'released')
return held
