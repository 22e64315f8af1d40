-- name: mutex.undo
-- version: 4
-- description: Undo a mutex acquisition whose caller gave up: refuse the attempt from now on, leave the queue, and drop the hold only if that attempt took it.
-- keys: lock queue
-- args: owner attempt gone_ttl_ms publish
-- returns: 3 when the dropped hold was handed to the next waiter, 1 when it was freed, 2 when the attempt's hold was a reentrant one (one hold dropped) or the owner's hold is another call's, 0 when another owner holds it, -1 when no one does
--
-- The layout is mutex.acquire's. The caller does not know whether its
-- attempt ran (a timeout): it may still reach the server later. The
-- attempt is recorded as g:<attempt> = until_ms (now + gone_ttl_ms), and
-- mutex.acquire and multi.acquire refuse an attempt with a live record.
-- The queue entry of the owner is removed only when this attempt queued it
-- (another call of the owner may have queued since). A hold is dropped only
-- when its attempt is this one, and then handed over or freed as
-- mutex.release does. This is also where records whose time passed are
-- removed from the hash, and waiter entries when q's time passed.
--
-- Cost: proportional to the fields of the lock hash (live waiters and
-- given-up records), plus the dead waiters a hand-over skips.

-- A lock's name is at most MaxNameBytes (1024 bytes), its key "{name}"
-- 1026: the client refuses longer names, and so does the script, for
-- callers that are not this library.
if #KEYS[1] > 1026 then
  return redis.error_reply('ERR the lock key is ' .. #KEYS[1] ..
    ' bytes: a lock name is at most 1024 bytes (MaxNameBytes), its key "{name}" 1026')
end

local lock, queue = KEYS[1], KEYS[2]
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

-- Drop the given-up records whose time passed, and read the rest.
local fields = redis.call('HGETALL', lock)
local got, stale = {}, {}
for i = 1, #fields, 2 do
  local name, value = fields[i], fields[i + 1]
  if string.sub(name, 1, 2) == 'g:' and tonumber(value) <= now then
    stale[#stale + 1] = name
  else
    got[name] = value
  end
end
if #stale > 0 then
  redis.call('HDEL', lock, unpack(stale))
end

local entry = got['w:' .. owner]
if entry and string.match(entry, '^%d+\t%d+\t%d+\t[^\t]*\t([^\t]*)\t') == attempt then
  redis.call('ZREM', queue, owner)
  redis.call('HDEL', lock, 'w:' .. owner)
end
local until_gone = now + gone_ttl
local old = tonumber(got['g:' .. attempt])
if not old or old < until_gone then
  redis.call('HSET', lock, 'g:' .. attempt, string.format('%d', until_gone))
end
if redis.call('PEXPIRE', lock, gone_ttl, 'GT') == 0 then
  redis.call('PEXPIRE', lock, gone_ttl, 'NX')
end

-- drop_queue is for when no waiter is live: q goes, with every waiter
-- entry and the queue (and h, when the lock is freed).
local function drop_queue(also)
  local names = {'q', also}
  for name in pairs(got) do
    if string.sub(name, 1, 2) == 'w:' then
      names[#names + 1] = name
    end
  end
  for _, name in ipairs(names) do
    redis.call('HDEL', lock, name)
  end
  redis.call('DEL', queue)
end

local h, q = got.h, got.q
if q and tonumber(q) <= now then
  -- q's time passed: every waiter's deadline is at most q, so none is live.
  drop_queue('q')
  q = nil
end
if not h then
  return -1
end
local kind, ends, count, held_attempt, holder =
  string.match(h, '^([^\t]*)\t(%d+)\t%a\t(%d+)\t[^\t]*\t([^\t]*)\t([^\t]*)\t')
if not kind then
  kind, ends = string.match(h, '^([^\t]*)\t(%d+)')
end
if tonumber(ends) <= now then
  return -1
end
if kind ~= 'mutex' or holder ~= owner then
  return 0
end
if held_attempt ~= attempt then
  return 2 -- taken by (or handed to) another call of the same owner: not this attempt's to drop
end
if count ~= '1' then
  redis.call('HSET', lock, 'h', (string.gsub(h, '^([^\t]*\t%d+\t%a\t)%d+', '%1' .. (count - 1), 1)))
  return 2
end

if q and tonumber(q) > now then
  while true do
    local head = redis.call('ZRANGE', queue, 0, 0)[1]
    if head == nil then
      break
    end
    local next_entry = redis.call('HGET', lock, 'w:' .. head)
    redis.call('ZREM', queue, head)
    redis.call('HDEL', lock, 'w:' .. head)
    if next_entry then
      local deadline, ttl, waiter_ttl, client, next_attempt, meta =
        string.match(next_entry, '^(%d+)\t(%d+)\t(%d+)\t([^\t]*)\t([^\t]*)\t(.*)$')
      if deadline and tonumber(deadline) > now then
        local first = math.min(tonumber(ttl), tonumber(waiter_ttl))
        local token = string.format('%d', math.max((tonumber(got.f) or 0) + 1, now_us))
        local grant = table.concat({'mutex', now + first, 'g', 1, client, next_attempt, head, meta}, '\t')
        redis.call('HSET', lock, 'h', grant, 'f', token)
        if redis.call('PTTL', lock) < first then
          redis.call('PEXPIRE', lock, first)
        end
        redis.call(publish, lock .. ':grant:' .. client, 'grant ' .. token .. ' ' .. next_attempt .. ' ' .. head)
        return 3
      end
    end
  end
  drop_queue('h')
  redis.call(publish, lock .. ':released', 'released')
  return 1
end
redis.call('HDEL', lock, 'h')
return 1
