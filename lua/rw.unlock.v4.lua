-- name: rw.unlock
-- version: 4
-- description: Release one write hold of a read-write lock and, when someone waits, wake the oldest waiting writer and the readers.
-- keys: lock index
-- args: owner record...
-- returns: 1 when freed, 2 when a reentrant hold remains, 0 when another owner holds it, -1 when no one does (the lease ran out)
--
-- The layout is rw.rlock@6's (docs/layout.md). record (r:<owner>) is
-- passed for a reentrant owner only, whose read holds may remain when its
-- write hold ends: h then becomes the readers' h with that one record (the
-- owner has downgraded; n counts u when u names the owner, else the
-- index's reader members, and the record when it is not one of them).
-- Otherwise h goes, with the owner's lapsed record, its member and u when
-- u names it; the fencing token (f) stays. A revoked hold (state x) is
-- dropped like a held one. The owner's own h is freed without asking the
-- server's time: while h is still this owner's, no one has held the name
-- since (a hold of any kind replaces h), so an expired hold that no one
-- replaced is freed too (1).
--
-- Only a live q (someone waits, or the owner's read holds remain) leads
-- past the HMGET and HDEL or HSET: then a sweep of at most 8 due
-- waiting writers, "released" on <lock>:released (waiting readers, and other
-- waiters of the name, look again) and "wake <owner>" on
-- <lock>:grant:<client> to the oldest live waiting writer alone (the
-- first live W: member of the index), published as the waiters asked
-- (field P:, PUBLISH by default). Each index command is logarithmic in
-- the index.

local lock, index = KEYS[1], KEYS[2]
local owner, mine = ARGV[1], ARGV[2]

local v
if mine then
  v = redis.call('HMGET', lock, 'h', 'q', mine, 'u')
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
local BAND = 10000000000000
local BAND_END = '(' .. string.format('%d', BAND)
local lone = v[4] == owner
local e = own and tonumber(string.match(own, '^%d+'))
if e and e > now then
  -- Downgraded: the owner's read hold stays, and h counts it.
  local n = 1
  if not lone then
    n = redis.call('ZCOUNT', index, '-inf', BAND_END)
    if not redis.call('ZSCORE', index, mine) then
      n = n + 1
    end
  end
  redis.call('HSET', lock, 'h', 'rwmutex\t' .. string.format('%d', e) .. '\tr\t' .. string.format('%d', n))
elseif own then
  if lone then
    redis.call('HDEL', lock, 'h', mine, 'u')
  else
    redis.call('HDEL', lock, 'h', mine)
    redis.call('ZREM', index, mine)
  end
else
  redis.call('HDEL', lock, 'h')
end
q = tonumber(q)
if not q or q <= now then
  return 1
end

-- Someone waits: sweep the waiting writers' band, then find the oldest
-- live waiting writer.
-- sweep drops at most 8 entries of one band of the index whose time
-- passed (0 readers, 1 waiting writers, 2 given-up attempts), with their
-- records (an entry whose record's time moved on is filed again under
-- it), and returns how many went. Band 0 comes first in the index, so its
-- due entries are its first ranks.
local function sweep(band)
  local lo = band * BAND
  local due = redis.call('ZRANGE', index, lo, string.format('%d', lo + now), 'BYSCORE', 'LIMIT', 0, 8)
  if #due == 0 then
    return 0
  end
  local values = redis.call('HMGET', lock, unpack(due))
  local drop, refile = {}, {}
  for i = 1, #due do
    local at = values[i] and tonumber(string.match(values[i], '^%d+'))
    if at and at > now then
      refile[#refile + 1] = string.format('%d', lo + at)
      refile[#refile + 1] = due[i]
    elseif values[i] then
      drop[#drop + 1] = due[i]
    end
  end
  if band == 0 then
    redis.call('ZREMRANGEBYRANK', index, 0, #due - 1)
  else
    redis.call('ZREM', index, unpack(due))
  end
  if #refile > 0 then
    redis.call('ZADD', index, unpack(refile))
  end
  if #drop > 0 then
    redis.call('HDEL', lock, unpack(drop))
  end
  return #due - #refile / 2
end

sweep(1)
local first = redis.call('ZRANGE', index, '(' .. string.format('%d', BAND + now), '(' .. string.format('%d', 2 * BAND),
  'BYSCORE', 'LIMIT', 0, 1)[1]
local waiting, publish
if first then
  local w = redis.call('HMGET', lock, first, 'P:')
  waiting, publish = w[1] and string.match(w[1], '\t(.*)$'), w[2] or 'PUBLISH'
else
  publish = redis.call('HGET', lock, 'P:') or 'PUBLISH'
end
redis.call(publish, lock .. ':released', 'released')
if waiting and waiting ~= '' then
  redis.call(publish, lock .. ':grant:' .. waiting, 'wake ' .. string.sub(first, 3))
end
return 1
