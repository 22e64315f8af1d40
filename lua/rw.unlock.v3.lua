-- name: rw.unlock
-- version: 3
-- description: Release one write hold of a read-write lock and, when someone waits, wake the oldest waiting writer and the readers.
-- keys: lock
-- args: owner record...
-- returns: 1 when freed, 2 when a reentrant hold remains, 0 when another owner holds it, -1 when no one does (the lease ran out)
--
-- The layout is docs/layout.md's. record (r:<owner>) is passed for a
-- reentrant owner only, whose read holds may remain when its write hold
-- ends: h then becomes the readers' h with that one record (the owner has
-- downgraded). Otherwise h goes; the fencing token (f) stays. A revoked
-- hold (state x) is dropped like a held one. The owner's own h is freed
-- without asking the server's time: while h is still this owner's, no one
-- has held the name since (a hold of any kind replaces h), so an expired
-- hold that no one replaced is freed too (1).
--
-- Only a live q (someone waits, or the owner's read holds remain) leads
-- past the HMGET and HDEL or HSET: then "released" goes on <lock>:released
-- (waiting readers, and other waiters of the name, look again) and "wake
-- <owner>" on <lock>:grant:<client> to the oldest live waiting writer
-- alone, published as the waiters asked (field P:, PUBLISH by default),
-- after a scan proportional to the fields the hash holds.

local lock = KEYS[1]
local owner, mine = ARGV[1], ARGV[2]

local v
if mine then
  v = redis.call('HMGET', lock, 'h', 'q', mine)
else
  v = redis.call('HMGET', lock, 'h', 'q')
end
local h = v[1]
if not h then
  return -1
end
local upto, state, count, took, holder = string.match(h,
  '^rwmutex\t(%d+)\t([hx])\t(%d+)\t[^\t]*\t([^\t]*)\t([^\t]*)\t')
-- The hold is owner's when its owner field is owner (a reentrant owner's
-- calls are one holder), or when owner is one call's identity (token \t
-- attempt id, for calls that share a token) and the hold is that call's.
if not upto or (holder ~= owner and holder .. '\t' .. took ~= owner) then
  -- Readers', another owner's, another kind's, or none that parses: 0
  -- while it lasts.
  local time = redis.call('TIME')
  local other = tonumber(string.match(h, '^[^\t]*\t(%d+)\t'))
  if other and other > time[1] * 1000 + math.floor(time[2] / 1000) then
    return 0
  end
  return -1
end
if count ~= '1' then
  local tail = string.match(h, '^rwmutex\t%d+\t%a\t%d+\t(.*)$')
  local n = string.format('%d', tonumber(count) - 1)
  redis.call('HSET', lock, 'h', 'rwmutex\t' .. upto .. '\t' .. state .. '\t' .. n .. '\t' .. tail)
  return 2
end

local q, own = v[2], v[3]
if not q and not own then
  redis.call('HDEL', lock, 'h')
  return 1
end
local time = redis.call('TIME')
local now = time[1] * 1000 + math.floor(time[2] / 1000)
own = own and tonumber(string.match(own, '^%d+'))
if own and own > now then
  -- Downgraded: the owner's read hold stays.
  redis.call('HSET', lock, 'h', 'rwmutex\t' .. string.format('%d', own) .. '\tr\t1')
else
  redis.call('HDEL', lock, 'h')
end
q = tonumber(q)
if not q or q <= now then
  return 1
end

-- Someone waits: find the oldest live waiting writer, dropping the lapsed ones.
local all = redis.call('HGETALL', lock)
local lapsed, oldest, oldest_at, client, publish = {}, nil, nil, nil, 'PUBLISH'
for i = 1, #all, 2 do
  local field = all[i]
  if string.sub(field, 1, 2) == 'W:' then
    local at = tonumber(string.match(all[i + 1], '^%d+'))
    if not at or at <= now then
      lapsed[#lapsed + 1] = field
      if #lapsed == 1000 then
        redis.call('HDEL', lock, unpack(lapsed))
        lapsed = {}
      end
    elseif not oldest_at or at < oldest_at then
      oldest, oldest_at, client = string.sub(field, 3), at, string.match(all[i + 1], '\t(.*)$')
    end
  elseif field == 'P:' and all[i + 1] == 'SPUBLISH' then
    publish = 'SPUBLISH'
  end
end
if #lapsed > 0 then
  redis.call('HDEL', lock, unpack(lapsed))
end
redis.call(publish, lock .. ':released', 'released')
if oldest and client and client ~= '' then
  redis.call(publish, lock .. ':grant:' .. client, 'wake ' .. oldest)
end
return 1
