-- name: rw.runlock
-- version: 6
-- description: Release one read hold of a read-write lock; the last reader out wakes the oldest waiting writer.
-- keys: lock
-- args: record
-- returns: 1 when the owner's last read hold was released, 2 when read holds remain, -1 when the owner holds no read lease (it expired)
--
-- The layout is docs/layout.md's; record is the owner's record field,
-- r:<owner>. A revoked record (state x) is dropped like a held one: that
-- is its holder's word that it stopped. The reader that takes h's count of
-- reader records to 0 deletes h. A lapsed record is dropped without
-- touching the count (it may never have been counted: the count may stay
-- too high, never too low, until a scan sets it again).
--
-- Only a live q (someone waits) leads past the HMGET, TIME and HDEL or
-- HSET: then, when no live reader is left, the oldest live waiting writer
-- (lowest deadline) is woken alone with "wake <owner>" on
-- <lock>:grant:<client>, or, when none waits, everyone with "released" on
-- <lock>:released, published as the waiters asked (field P:, PUBLISH by
-- default). That costs a scan proportional to the fields the hash holds.

local lock = KEYS[1]
local mine = ARGV[1]

local v = redis.call('HMGET', lock, 'h', 'q', mine)
local record = v[3]
if not record then
  return -1
end
local time = redis.call('TIME')
-- The record is live while its expiry (ms) is after the server's time:
-- its seconds compare as strings with TIME's when their lengths match (no
-- number is parsed on the way); only within the same second are the
-- milliseconds compared.
local expiry, secs, count = string.match(record, '^((%d+)%d%d%d)\t%a\t(%d+)\t')
local live
if not secs then
  live = false
elseif #secs == #time[1] and secs ~= time[1] then
  live = secs > time[1]
else
  live = tonumber(expiry) > time[1] * 1000 + math.floor(time[2] / 1000)
end
if not live then
  redis.call('HDEL', lock, mine)
  return -1
end
if count ~= '1' then
  local state, rest = string.match(record, '^%d+\t(%a)\t%d+\t(.*)$')
  redis.call('HSET', lock, mine,
    expiry .. '\t' .. state .. '\t' .. string.format('%d', tonumber(count) - 1) .. '\t' .. rest)
  return 2
end

-- The owner's last read hold: its record goes, and h counts one fewer. A
-- reader alone has the h it wrote, until and all.
local h = v[1]
local left, upto -- the reader records h still counts; nil when h is not the readers' (a writer's own read)
if h == 'rwmutex\t' .. expiry .. '\tr\t1' then
  left = 0
  redis.call('HDEL', lock, 'h', mine)
else
  local n
  upto, n = string.match(h or '', '^rwmutex\t(%d+)\tr\t(%d+)$')
  if n then
    left = tonumber(n) - 1
    if left <= 0 then
      redis.call('HDEL', lock, 'h', mine)
    else
      redis.call('HSET', lock, 'h', 'rwmutex\t' .. upto .. '\tr\t' .. string.format('%d', left))
      redis.call('HDEL', lock, mine)
    end
  else
    redis.call('HDEL', lock, mine)
  end
end
if not left or not v[2] then
  return 1 -- no one waits, or a writer (this owner) still holds the lock
end
local now = time[1] * 1000 + math.floor(time[2] / 1000)
if tonumber(v[2]) <= now then
  return 1
end

-- Someone waits. Count the live readers (dropping the lapsed records,
-- writers and attempts) and find the oldest live waiting writer.
local all = redis.call('HGETALL', lock)
local lapsed, readers, oldest, oldest_at, client, publish = {}, 0, nil, nil, nil, 'PUBLISH'
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
  elseif field == 'P:' and all[i + 1] == 'SPUBLISH' then
    publish = 'SPUBLISH'
  end
end
if #lapsed > 0 then
  redis.call('HDEL', lock, unpack(lapsed))
end
if left > 0 then
  if readers > 0 then
    if readers ~= left then
      -- The count, exact again.
      redis.call('HSET', lock, 'h', 'rwmutex\t' .. upto .. '\tr\t' .. string.format('%d', readers))
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
