-- name: mutex.undo
-- version: 6
-- description: Undo a mutex acquisition whose caller gave up: refuse the attempt from now on, leave the queue, and drop the hold only if that attempt took it.
-- keys: lock queue gone
-- args: owner attempt gone_ttl_ms publish
-- returns: 3 when the dropped hold was handed to the next waiter, 1 when it was freed, 2 when the attempt's hold was a reentrant one (one hold dropped) or the owner's hold is another call's, 0 when another owner holds it, -1 when no one does
--
-- The layout is mutex.acquire's. The caller does not know whether its
-- attempt ran (a timeout): it may still reach the server later. The
-- attempt is recorded as g:<attempt> = until_ms (now + gone_ttl_ms), and
-- mutex.acquire and multi.acquire refuse an attempt with a live record.
-- gone ("{N}:gone") indexes the records: a sorted set of the fields
-- g:<attempt> by until_ms, living as long as the latest of them. Each call
-- first removes the records whose time passed (at most 100, the oldest
-- first, each once) from the hash and the index. The queue entry of the
-- owner is removed only when this attempt queued it (another call of the
-- owner may have queued since). A hold is dropped only when its attempt is
-- this one (attempts compare by their ids, the part before any "/": a
-- hold records the bare id from mutex.acquire@14 on, the attempt with its
-- mode before), and then handed over or freed as mutex.release does; when q's
-- time passed, the dead waiters go from the head of the queue as there.
--
-- Cost: O(log n) in the queue and the index, plus the expired records and
-- dead waiters it removes (at most 100 of each a call, each once): it
-- never scans the hash, the queue or the index.

-- A lock's name is at most MaxNameBytes (1024 bytes), its key "{name}"
-- 1026: the client refuses longer names, and so does the script, for
-- callers that are not this library.
if #KEYS[1] > 1026 then
  return redis.error_reply('ERR the lock key is ' .. #KEYS[1] ..
    ' bytes: a lock name is at most 1024 bytes (MaxNameBytes), its key "{name}" 1026')
end

local lock, queue, index = KEYS[1], KEYS[2], KEYS[3]
local owner, attempt, publish = ARGV[1], ARGV[2], ARGV[4]

local gone_ttl = tonumber(ARGV[3])
if not gone_ttl or gone_ttl < 1 or gone_ttl > 1209600000 or gone_ttl % 1 ~= 0 then
  return redis.error_reply('ERR gone_ttl_ms must be a whole number of milliseconds from 1 to 1209600000 (2 x MaxTTL)')
end
if publish ~= 'PUBLISH' and publish ~= 'SPUBLISH' then
  return redis.error_reply('ERR publish must be PUBLISH or SPUBLISH')
end
if attempt == '' or string.find(attempt, '\t', 1, true) then
  return redis.error_reply('ERR attempt must be a non-empty id without a tab')
end

local time = redis.call('TIME')
local now_us = time[1] * 1000000 + time[2]
local now = math.floor(now_us / 1000)
local now_text = string.format('%d', now)

-- Drop the given-up records whose time passed, the oldest first. The
-- hash's value decides: a record that another writer moved later (the
-- index not told) stays, indexed again by its end.
local stale = redis.call('ZRANGE', index, '-inf', now_text, 'BYSCORE', 'LIMIT', 0, 100)
if #stale > 0 then
  local ends = redis.call('HMGET', lock, unpack(stale))
  local ended, later = {}, {}
  for i, name in ipairs(stale) do
    local ends_at = tonumber(ends[i])
    if ends_at and ends_at > now then
      later[#later + 1] = string.format('%d', ends_at)
      later[#later + 1] = name
    elseif ends_at then
      ended[#ended + 1] = name
    end
  end
  redis.call('ZREMRANGEBYRANK', index, 0, #stale - 1)
  if #ended > 0 then
    redis.call('HDEL', lock, unpack(ended))
  end
  if #later > 0 then
    redis.call('ZADD', index, unpack(later))
  end
end

local field = 'g:' .. attempt
local id = string.match(attempt, '^[^/]*')
local got = redis.call('HMGET', lock, 'h', 'q', 'f', 'w:' .. owner, field)
local h, q, f, mine, old = got[1], got[2], got[3], got[4], tonumber(got[5])

if mine and string.match(mine, '^%d+\t%d+\t%d+\t[^\t]*\t([^/\t]*)') == id then
  redis.call('ZREM', queue, owner)
  redis.call('HDEL', lock, 'w:' .. owner)
end
local until_gone = now + gone_ttl
if not old or old < until_gone then
  local until_text = string.format('%d', until_gone)
  redis.call('HSET', lock, field, until_text)
  redis.call('ZADD', index, until_text, field)
end
if redis.call('PEXPIRE', lock, gone_ttl, 'GT') == 0 then
  redis.call('PEXPIRE', lock, gone_ttl, 'NX')
end
if q then
  -- The queue lives as long as the hash while q is there: it is how the
  -- scripts find the entries of waiters that died.
  redis.call('PEXPIRE', queue, gone_ttl, 'GT')
end
if redis.call('PEXPIRE', index, gone_ttl, 'GT') == 0 then
  redis.call('PEXPIRE', index, gone_ttl, 'NX')
end

-- next_live finds the oldest live waiter: it looks at the head, and when
-- that one is dead, at the next 100 at once, and drops the dead ones ahead
-- of the first live one (each once). It returns that waiter and its entry
-- (still queued); nil when the queue is empty now, false when 100 dead
-- ones went and more may follow.
local function live(entry)
  local deadline = entry and tonumber(string.match(entry, '^(%d+)\t%d+\t%d+\t[^\t]*\t[^\t]*\t'))
  return deadline ~= nil and deadline > now
end
local function next_live()
  local head = redis.call('ZRANGE', queue, 0, 0)[1]
  if not head then
    return nil
  end
  local entry = redis.call('HGET', lock, 'w:' .. head)
  if live(entry) then
    return head, entry
  end
  local heads = redis.call('ZRANGE', queue, 0, 99)
  local fields = {}
  for i, who in ipairs(heads) do
    fields[i] = 'w:' .. who
  end
  local entries = redis.call('HMGET', lock, unpack(fields))
  local dead = #heads
  for i = 2, #heads do
    if live(entries[i]) then
      dead = i - 1
      head, entry = heads[i], entries[i]
      break
    end
  end
  redis.call('ZREMRANGEBYRANK', queue, 0, dead - 1)
  redis.call('HDEL', lock, unpack(fields, 1, dead))
  if dead < #heads then
    return head, entry
  end
  if #heads < 100 then
    return nil
  end
  return false
end

-- sweep removes the waiters at the head of the queue, at most 100 (all of
-- them dead: q's time passed), and q with the last of them; q stays while
-- dead waiters remain, so that the next calls sweep on.
local function sweep()
  local dead = redis.call('ZRANGE', queue, 0, 99)
  if #dead > 0 then
    local fields = {}
    for i, who in ipairs(dead) do
      fields[i] = 'w:' .. who
    end
    redis.call('HDEL', lock, unpack(fields))
    redis.call('ZREMRANGEBYRANK', queue, 0, #dead - 1)
  end
  if #dead < 100 then
    redis.call('HDEL', lock, 'q')
    q = nil
  end
end

if q and tonumber(q) <= now then
  -- q's time passed: every waiter's deadline is at most q, so none is live.
  sweep()
end
if not h then
  return -1
end
local kind, ends, count, held_attempt, holder =
  string.match(h, '^([^\t]*)\t(%d+)\t%a\t(%d+)\t[^\t]*\t([^/\t]*)[^\t]*\t([^\t]*)\t')
if not kind then
  kind, ends = string.match(h, '^([^\t]*)\t(%d+)')
end
if tonumber(ends) <= now then
  return -1
end
if kind ~= 'mutex' or holder ~= owner then
  return 0
end
if held_attempt ~= id then
  return 2 -- taken by (or handed to) another call of the same owner: not this attempt's to drop
end
if count ~= '1' then
  redis.call('HSET', lock, 'h', (string.gsub(h, '^([^\t]*\t%d+\t%a\t)%d+', '%1' .. (count - 1), 1)))
  return 2
end

if q and tonumber(q) > now then
  -- The oldest live waiter gets the lock; the dead ones ahead of it go,
  -- at most 100 a call. Past that many the lock is freed (q stays): the
  -- waiters behind look again when their keeper sees no holder.
  local head, entry = next_live()
  if head then
    redis.call('ZREM', queue, head)
    redis.call('HDEL', lock, 'w:' .. head)
    local _, ttl, waiter_ttl, client, next_attempt, meta =
      string.match(entry, '^(%d+)\t(%d+)\t(%d+)\t([^\t]*)\t([^\t]*)\t(.*)$')
    local first = math.min(tonumber(ttl), tonumber(waiter_ttl))
    local token = string.format('%d', math.max((tonumber(f) or 0) + 1, now_us))
    if meta == '~' then
      meta = '' -- the holder record's, as mutex.acquire@14 writes it
    end
    -- The attempt as the entry has it (see mutex.release@11).
    local grant = table.concat({'mutex', now + first, 'g', 1, client, next_attempt, head, meta}, '\t')
    redis.call('HSET', lock, 'h', grant, 'f', token)
    if redis.call('PTTL', lock) < first then
      redis.call('PEXPIRE', lock, first)
      redis.call('PEXPIRE', queue, first, 'GT') -- as long as the hash
    end
    redis.call(publish, lock .. ':grant:' .. client, 'grant ' .. token .. ' ' .. next_attempt .. ' ' .. head)
    return 3
  end
  if head == nil then
    redis.call('HDEL', lock, 'h', 'q')
  else
    redis.call('HDEL', lock, 'h')
  end
  redis.call(publish, lock .. ':released', 'released')
  return 1
end
redis.call('HDEL', lock, 'h')
return 1
