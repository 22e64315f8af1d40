-- name: sem.extend
-- version: 1
-- description: Reset the leases of the permits an owner holds, when it still holds all of them.
-- keys: permits
-- args: owner count ttl_ms
-- returns: 1 when extended, -1 when any of the owner's permits expired

local permits = KEYS[1]
local owner, count, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

for i = 1, count do
  local deadline = redis.call('ZSCORE', permits, owner .. ':' .. i)
  if not deadline or tonumber(deadline) <= now then
    return -1
  end
end
for i = 1, count do
  redis.call('ZADD', permits, now + ttl, owner .. ':' .. i)
end
if redis.call('PTTL', permits) < ttl then
  redis.call('PEXPIRE', permits, ttl)
end
return 1
