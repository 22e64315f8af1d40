-- name: rw.runlock
-- version: 8
-- description: Release one read hold of a read-write lock; the last reader out wakes the oldest waiting writer.
-- keys: lock index
-- args: record
-- returns: 1 when the owner's last read hold was released, 2 when read holds remain, -1 when the owner holds no read lease (it expired)
--
-- The layout is rw.rlock@7's (docs/layout.md); record is the owner's
-- record field, r:<owner>. A revoked record (state x) is dropped like a
-- held one: that is its holder's word that it stopped. The record goes
-- with its index member, or with u when u names it; h counts one fewer
-- when it counted the record (a live one always; a lapsed one when it was
-- u, or a member while u is not set). The reader that takes h's count to
-- 0 deletes h; the lone reader u leaving beside rw.rlock@4's readers makes
-- n count the index's reader members, as n does without u.
--
-- The lone reader's last hold with no one waiting (u names it, h counts
-- it alone, its record's expiry has 13 digits, no q) is one HMGET, TIME
-- and HDEL, with a few string comparisons and no pattern or number parsed.
-- Only a live q (someone waits) leads past the HMGET, TIME, ZREM and HDEL
-- or HSET: then, when no live reader is left (the index's live members,
-- u; h may still count lapsed ones, or rw.rlock@4's readers, which the
-- woken writer's rw.lock@7 tells apart), the oldest live waiting writer
-- (lowest deadline, the first live W: member of the index) is woken alone
-- with "wake <owner>" on <lock>:grant:<client>, or, when none waits,
-- everyone with "released" on <lock>:released, published as the waiters
-- asked (field P:, PUBLISH by default). Each index command is logarithmic
-- in the index: two or three of them.

local lock, index = KEYS[1], KEYS[2]
local mine = ARGV[1]

local v = redis.call('HMGET', lock, 'h', 'q', mine, 'u')
local record = v[3]
if not record then
  return -1
end
local time = redis.call('TIME')
local u = v[4]
-- The lone reader's last hold, no one waiting: the record is
-- "<13 digits>\th\t1\t..." and h is "rwmutex\t<the same 13 digits>\tr\t1"
-- (rw.rlock's fast path writes both). The record, u and h go, as below;
-- its seconds decide whether it was live (the other cases go below).
if not v[2] and u and 'r:' .. u == mine and string.sub(record, 14, 18) == '\th\t1\t' then
  local expiry = string.sub(record, 1, 13)
  if v[1] == 'rwmutex\t' .. expiry .. '\tr\t1' and #time[1] == 10 then
    local secs = string.sub(expiry, 1, 10)
    if secs ~= time[1] then
      redis.call('HDEL', lock, mine, 'u', 'h')
      if secs > time[1] then
        return 1
      end
      return -1
    end
  end
end
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
if live and count ~= '1' then
  local state, rest = string.match(record, '^%d+\t(%a)\t%d+\t(.*)$')
  redis.call('HSET', lock, mine,
    expiry .. '\t' .. state .. '\t' .. string.format('%d', tonumber(count) - 1) .. '\t' .. rest)
  return 2
end

-- The owner's last read hold (or a lapsed one): the record goes, with u
-- when u names it, else with its index member.
local lone = u == string.sub(mine, 3)
local counted = live or lone
if lone then
  u = nil
elseif redis.call('ZREM', index, mine) == 1 and not u then
  counted = true
end
local h = v[1]
local left, upto, n -- the readers h still counts; nil when h is not the readers'
upto, n = string.match(h or '', '^rwmutex\t(%d+)\tr\t(%d+)$')
local gone = {mine}
if lone then
  gone[2] = 'u'
end
if n then
  n = tonumber(n)
  left = n
  if counted then
    left = left - 1
  end
  if lone and left > 0 then
    -- rw.rlock@4's readers remain: n counts the index's reader members too.
    left = left + redis.call('ZCOUNT', index, '-inf', '(10000000000000')
  end
  if left <= 0 then
    gone[#gone + 1] = 'h'
  elseif left ~= n then
    redis.call('HSET', lock, 'h', 'rwmutex\t' .. upto .. '\tr\t' .. string.format('%d', left))
  end
end
redis.call('HDEL', lock, unpack(gone))
local result = 1
if not live then
  result = -1
end
if not left or not v[2] then
  return result -- no one waits, or a writer (this owner) still holds the lock
end
local now = time[1] * 1000 + math.floor(time[2] / 1000)
if tonumber(v[2]) <= now or (not live and left > 0) then
  return result
end
-- Someone waits. Count the live readers (a live member has a live
-- record: whoever extends a record moves its member), and wake the oldest
-- live waiting writer when none is left; h stays with what it counts (the
-- writer's rw.lock@7 sees that they lapsed, and whether rw.rlock@4's
-- readers remain).
local BAND = 10000000000000
if left > 0 then
  local readers = redis.call('ZCOUNT', index, '(' .. string.format('%d', now), '(' .. string.format('%d', BAND))
  if u then
    local ue = tonumber(string.match(redis.call('HGET', lock, 'r:' .. u) or '', '^%d+'))
    if ue and ue > now then
      readers = readers + 1
    end
  end
  if readers > 0 then
    return result -- live readers remain: no waiter can take the lock yet
  end
end
local first = redis.call('ZRANGE', index, '(' .. string.format('%d', BAND + now), '(' .. string.format('%d', 2 * BAND),
  'BYSCORE', 'LIMIT', 0, 1)[1]
local waiting, publish
if first then
  local w = redis.call('HMGET', lock, first, 'P:')
  waiting, publish = w[1] and string.match(w[1], '\t(.*)$'), w[2] or 'PUBLISH'
else
  publish = redis.call('HGET', lock, 'P:') or 'PUBLISH'
end
if waiting and waiting ~= '' then
  redis.call(publish, lock .. ':grant:' .. waiting, 'wake ' .. string.sub(first, 3))
else
  redis.call(publish, lock .. ':released', 'released')
end
return result
