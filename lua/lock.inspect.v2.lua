#!lua flags=no-writes
-- name: lock.inspect
-- version: 2
-- description: Report what a lock name holds, whatever its kind: the server's time, every field of the name's hash and the members of its queues, for operators asking who holds a lock.
-- keys: lock queue squeue
-- args:
-- returns: {server_time_ms, {field, value, ...} of lock, {{member, ...} of each queue key, in KEYS order}}
--
-- lock is the name's hash K ("{N}", see docs/layout.md); the client reads the
-- holds from it (h, r:<owner>, p:<owner>), the last fencing token (f), a
-- Semaphore's limit (l) and waiter entries (w:<owner>), and judges every
-- expiry against the server time returned with them; an RWMutex's waiting
-- writers are K's W:<owner> fields. The other keys are the queues of a
-- Mutex and of a Semaphore: sorted sets, whose members are reported in order
-- (their scores are each kind's own). A key of another type (written by
-- another tool) reads as empty rather than failing the report.
--
-- Read-only, so it may run on replicas with EVALSHA_RO: operators asking
-- "who holds this lock?" need not load the primary. Cost: proportional to
-- K's fields and the queues' members (live holders and waiters).

local lock = KEYS[1]

local function is(key, type_name)
  return redis.call('TYPE', key).ok == type_name
end

-- The server's time in ms. miniredis (2.40) refuses TIME in a read-only
-- script, which Redis allows; there the time is read as K's expiry time
-- less its remaining time (K has an expiry while it holds anything). When
-- K has none, 0.
local function server_ms()
  local time = redis.pcall('TIME')
  if not time.err then
    return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  end
  local at, left = redis.call('PEXPIRETIME', lock), redis.call('PTTL', lock)
  if at > 0 and left >= 0 then
    return at - left
  end
  return 0
end

local fields = {}
if is(lock, 'hash') then
  fields = redis.call('HGETALL', lock)
end
local queues = {}
for i = 2, #KEYS do
  local members = {}
  if is(KEYS[i], 'zset') then
    members = redis.call('ZRANGE', KEYS[i], 0, -1)
  end
  queues[#queues + 1] = members
end
return {server_ms(), fields, queues}
