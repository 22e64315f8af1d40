-- name: rw.runlock
-- version: 5
-- description: Release one read hold of a read-write lock; the last reader out wakes the oldest waiting writer.
-- keys: lock
-- args: owner publish
-- returns: 1 when the owner's last read hold was released, 2 when read holds remain, -1 when the owner holds no read lease (it expired)
--
-- The layout is rw.rlock@4's. A revoked record (state x) is dropped like a
-- held one: that is its holder's word that it stopped. The reader that
-- takes h's count of reader records to 0 deletes h. A lapsed record is
-- dropped without touching the count (it may never have been counted: the
-- count may stay too high, never too low, until a scan sets it again).
--
-- Publishing is publish (PUBLISH, or SPUBLISH on a cluster with sharded
-- pub/sub) on the lock's channels, named after the key: "released" on
-- <lock>:released, "wake <owner>" on <lock>:grant:<client>. Only a live q
-- (someone waits) leads past the HMGET, TIME and HDEL or HSET: then, when
-- no live reader is left, the oldest live waiting writer (lowest deadline)
-- is woken alone, or, when none waits, everyone with "released". That
-- costs a scan proportional to the fields the hash holds.

local lock = KEYS[1]
local owner, publish = ARGV[1], ARGV[2]
if publish ~= 'PUBLISH' and publish ~= 'SPUBLISH' then
  return redis.error_reply('ERR publish must be PUBLISH or SPUBLISH')
end
local mine = 'r:' .. owner

local v = redis.call('HMGET', lock, 'h', 'q', mine)
if not v[3] then
  return -1
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local expiry, state, count, rest = string.match(v[3], '^(%d+)\t(%a)\t(%d+)\t(.*)$')
if not expiry or tonumber(expiry) <= now then
  redis.call('HDEL', lock, mine)
  return -1
end
if tonumber(count) > 1 then
  redis.call('HSET', lock, mine, expiry .. '\t' .. state .. '\t' .. (tonumber(count) - 1) .. '\t' .. rest)
  return 2
end

-- The owner's last read hold: its record goes, and h counts one fewer.
local h = v[1]
local kind, upto, h_state, n
if h then
  kind, upto, h_state, n = string.match(h, '^([^\t]*)\t(%d+)\t(%a)\t?(.*)$')
end
local left -- the reader records h still counts; nil when h is not the readers' (a writer's own read)
if kind == 'rwmutex' and h_state == 'r' then
  left = (tonumber(n) or 1) - 1
  if left <= 0 then
    redis.call('HDEL', lock, 'h', mine)
  else
    redis.call('HSET', lock, 'h', 'rwmutex\t' .. upto .. '\tr\t' .. left)
    redis.call('HDEL', lock, mine)
  end
else
  redis.call('HDEL', lock, mine)
end
local q = tonumber(v[2])
if not left or not q or q <= now then
  return 1 -- no one waits, or a writer (this owner) still holds the lock
end

-- Someone waits. Count the live readers (dropping the lapsed records,
-- writers and attempts) and find the oldest live waiting writer.
local all = redis.call('HGETALL', lock)
local lapsed, readers, oldest, oldest_at, client = {}, 0, nil, nil, nil
for i = 1, #all, 2 do
  local field = all[i]
  local kind_of = string.sub(field, 1, 2)
  if kind_of == 'r:' or kind_of == 'W:' or kind_of == 'g:' then
    local at = tonumber(string.match(all[i + 1], '^%d+'))
    if not at or at <= now then
      lapsed[#lapsed + 1] = field
      if #lapsed == 1000 then
        redis.call('HDEL', lock, unpack(lapsed))
        lapsed = {}
      end
    elseif kind_of == 'r:' then
      readers = readers + 1
    elseif kind_of == 'W:' and (not oldest_at or at < oldest_at) then
      oldest, oldest_at, client = string.sub(field, 3), at, string.match(all[i + 1], '\t(.*)$')
    end
  end
end
if #lapsed > 0 then
  redis.call('HDEL', lock, unpack(lapsed))
end
if left > 0 then
  if readers > 0 then
    if readers ~= left then
      redis.call('HSET', lock, 'h', 'rwmutex\t' .. upto .. '\tr\t' .. readers) -- the count, exact again
    end
    return 1 -- live readers remain: no waiter can take the lock yet
  end
  redis.call('HDEL', lock, 'h')
end
if oldest and client and client ~= '' then
  redis.call(publish, lock .. ':grant:' .. client, 'wake ' .. oldest)
else
  redis.call(publish, lock .. ':released', 'released')
end
return 1
