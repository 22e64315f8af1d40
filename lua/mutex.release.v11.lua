-- name: mutex.release
-- version: 11
-- description: Release one hold of a mutex and hand the lock to the call that queued next.
-- keys: lock queue
-- args: hold publish...
-- returns: 3 when handed to the next waiter, 1 when freed, 2 when a reentrant hold remains, 0 when another owner (or another call of this owner, or another kind) holds it, -1 when no one does
--
-- The layout is mutex.acquire's. hold names the hold this Unlock drops:
-- "\t<id>\t<owner>\t" for the hold that attempt (its bare id) took
-- (holds written before mutex.acquire@14 carry the attempt with its mode:
-- the fast path does not find them, and the ids compare below; when another
-- call of the same owner holds the lock now, because the first call's
-- lease ran out, the hold is left alone: 0), or "\t\t<owner>\t" for any
-- hold of the owner (a reentrant owner, whose calls are one holder; its
-- hold count goes down by one). A granted (g) or revoked (x) hold is
-- dropped like a held one. A hand-over writes the attempt as the waiter's
-- entry has it (the bare id from mutex.acquire@14 on; an older version's
-- entry has the attempt with its mode, which that version's claim compares
-- whole) and its meta ("" for "~", the holder record's, as
-- mutex.acquire@14 writes it).
--
-- Only when q says someone may wait does the release look at the clock
-- and the queue: it hands the lock to the oldest live waiter inside the
-- script, telling only that waiter's client ("grant <token> <attempt>
-- <owner>", the attempt as its entry has it, on lock ..
-- ':grant:' .. client), with min(its lease, its waiter lease) at first,
-- so that a waiter that died since its last refresh holds the lock no
-- longer than that; with no live waiter left it frees the lock
-- and publishes "released" on lock .. ':released' (callers that wait
-- without queueing). f stays in the hash, whose TTL covers the released
-- lease, so the next token is larger even within the same microsecond.
-- publish is SPUBLISH for a client that subscribes with SSUBSCRIBE
-- (cluster); PUBLISH when left out.
--
-- Without q, the release does not read the clock: a hold of this call
-- that ended but that no one replaced is dropped as a live one would be
-- (1). (The hash, whose TTL the acquire sets to the lease, has usually
-- expired with it: -1.)
--
-- Cost: uncontended, one HMGET, one plain string search and one HDEL.
-- Otherwise O(log n) in the queue of n waiters, plus the dead waiters it
-- removes (at most 100 a call, each once): it never scans the hash or the
-- queue.

local lock, hold = KEYS[1], ARGV[1]
local v = redis.call('HMGET', lock, 'h', 'q')
local h, q = v[1], v[2]
if h and not q and string.find(h, hold, 7, true) then
  -- Fields hold no tab, and only the attempt ids and client ids (11
  -- base64url characters) are alike: the segment "\t<id>\t<owner>\t" is
  -- found only as this hold's attempt and owner.
  -- No field is empty, so "\t\t<owner>\t" is never found here.
  redis.call('HDEL', lock, 'h')
  return 1
end
if not h then
  return -1
end

local queue = KEYS[2]
local time = redis.call('TIME')
local now_us = time[1] * 1000000 + time[2]
local now = math.floor(now_us / 1000)
local kind, ends, count, held_attempt, holder =
  string.match(h, '^([^\t]*)\t(%d+)\t%a\t(%d+)\t[^\t]*\t([^\t]*)\t([^\t]*)\t')
if not kind then
  kind, ends = string.match(h, '^([^\t]*)\t(%d+)')
end
if tonumber(ends) <= now then
  return -1 -- the hold ended with its lease
end
local lease_attempt, owner = string.match(hold, '^\t([^\t]*)\t([^\t]+)\t$')
if kind ~= 'mutex' or holder ~= owner then
  return 0
end
if lease_attempt ~= '' and string.match(held_attempt, '^[^/]*') ~= string.match(lease_attempt, '^[^/]*') then
  return 0 -- another call of this owner took the lock after this call's lease ran out
end
if count ~= '1' then
  redis.call('HSET', lock, 'h', (string.gsub(h, '^([^\t]*\t%d+\t%a\t)%d+', '%1' .. (count - 1), 1)))
  return 2
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
-- them dead: q's time passed), and q with the last of them. q stays while
-- dead waiters remain, so that the next calls sweep on: no call scans the
-- hash or the queue.
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
  end
end

if q and tonumber(q) > now then
  local publish = ARGV[2] or 'PUBLISH'
  if publish ~= 'PUBLISH' and publish ~= 'SPUBLISH' then
    return redis.error_reply('ERR publish must be PUBLISH or SPUBLISH')
  end
  -- The oldest live waiter gets the lock; the dead ones ahead of it go,
  -- at most 100 a call. Past that many the lock is freed (q stays): the
  -- waiters behind look again when their keeper sees no holder.
  local head, entry = next_live()
  if head then
    redis.call('ZREM', queue, head)
    redis.call('HDEL', lock, 'w:' .. head)
    local _, ttl, waiter_ttl, client, attempt, meta =
      string.match(entry, '^(%d+)\t(%d+)\t(%d+)\t([^\t]*)\t([^\t]*)\t(.*)$')
    local first = math.min(tonumber(ttl), tonumber(waiter_ttl))
    local token = string.format('%d', math.max((tonumber(redis.call('HGET', lock, 'f')) or 0) + 1, now_us))
    if meta == '~' then
      meta = ''
    end
    local grant = table.concat({'mutex', now + first, 'g', 1, client, attempt, head, meta}, '\t')
    redis.call('HSET', lock, 'h', grant, 'f', token)
    if redis.call('PTTL', lock) < first then
      redis.call('PEXPIRE', lock, first)
      redis.call('PEXPIRE', queue, first, 'GT') -- as long as the hash
    end
    redis.call(publish, lock .. ':grant:' .. client, 'grant ' .. token .. ' ' .. attempt .. ' ' .. head)
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
if q then
  -- q's time passed: every waiter's deadline is at most q, so none is live.
  sweep()
end
return 1
