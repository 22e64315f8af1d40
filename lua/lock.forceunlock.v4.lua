-- name: lock.forceunlock
-- version: 4
-- description: Revoke the live holds of a lock name, of any kind, one page of shared holders per call, for operators freeing a stuck lock: each holder's client is told at once, and the name stays taken until the holder confirms with its release or the grace period ends.
-- keys: lock
-- args: grace_ms publish channel revoke_prefix cursor count
-- returns: {next_cursor, revoked}: HSCAN's cursor for the next call ("0" when done) and the number of live holds this call revoked (grace_ms > 0) or removed (grace_ms 0)
--
-- lock is the name's hash K ("{N}", see docs/layout.md). A live hold is the
-- single holder in field h (state h held, g granted, x revoked) while h's
-- until_ms is in the future, and every r:<owner> (RWMutex reader) or
-- p:<owner> (Semaphore permits) record whose expiry is in the future.
--
-- A forced unlock is a loop of calls: the first with cursor "0", each next
-- one with the cursor the last returned, until it returns "0" (as SCAN).
-- The first call handles h: a single holder (a Mutex, an RWMutex's writer)
-- is revoked there, and for shared holders h's until_ms (and a
-- Semaphore's fresh_until) is cut to the grace's end. Every call revokes
-- the r:/p: records of one page: one HSCAN of K with COUNT count (1 to
-- 1000; a listpack answers whole). Records granted while the loop runs may
-- or may not be revoked (the next holders after a forced unlock are not,
-- as before); every hold live when the first call ran is revoked when the
-- loop ends. A loop that outlasts the grace (one round trip per page)
-- lets the name's next holder in before its last pages are revoked, as
-- WithGrace(0) does.
--
-- grace_ms > 0: every live hold is marked x (revoked) with expiry
-- min(expiry, now + grace_ms), and h's until_ms becomes min(until_ms,
-- now + grace_ms), which is still at least every revoked hold's expiry.
-- Acquires treat an x hold as held until its expiry; the holder's release
-- drops it and hands over as usual (that is the confirmation that the
-- holder stopped); its extend replies -2.
-- grace_ms 0: every hold is removed at once (h in the first call, the
-- records page by page, dead ones too) and, when the loop ends and q says
-- someone waits for the name, "released" goes on channel, as a release
-- sends it; queued waiters take the name at their next look.
--
-- Either way each revoked holder's client is told on its revoke channel,
-- revoke_prefix .. client ("<key prefix>redlua:revoke:<client id>", one
-- per client whatever it holds), with classic PUBLISH whatever publish is:
-- the channel is not in the lock's slot, and a classic message reaches a
-- subscriber on any node of a cluster. One message per client and page:
-- "revoke <lock bytes> <lock>\n" (the lock's key: the channel carries the
-- revocations of every lock of the client), then
-- "<attempt> <owner bytes> <owner>\n" for each of its revoked holds (an
-- owner token may hold any byte but a tab, and an RWMutex call's identity
-- holds one: the lengths delimit the key and the owner). A hold that
-- recorded no client is not told. publish (PUBLISH, or SPUBLISH for
-- sharded pub/sub on a cluster) sends "released" on channel.
--
-- The fencing token (f), given-up attempts (g:), the limit (l) and waiter
-- entries stay. K's expiry is not touched: nothing written lives longer
-- than before. Cost per call: an HMGET and, for an RWMutex or Semaphore,
-- one HSCAN visiting about count fields, one HSET or HDEL of the page's
-- holds and one publish per holders' client in the page, whatever the
-- name holds.

local lock = KEYS[1]
local grace_arg, publish, channel, revoke_prefix = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local cursor, count = ARGV[5], tonumber(ARGV[6])

-- MaxTTL (locks/limits.go, 7 days): a grace longer than any lease changes nothing.
local max_grace = 604800000
local grace = tonumber(grace_arg)
if not grace or grace < 0 or grace > max_grace or grace % 1 ~= 0 then
  return redis.error_reply('ERR grace_ms must be a whole number of milliseconds from 0 to ' .. max_grace)
end
if publish ~= 'PUBLISH' and publish ~= 'SPUBLISH' then
  return redis.error_reply('ERR publish must be PUBLISH or SPUBLISH')
end
if not string.match(cursor, '^%d+$') or #cursor > 20 then
  return redis.error_reply('ERR cursor must be a whole number, as the last call returned it ("0" to start)')
end
if not count or count < 1 or count > 1000 or count % 1 ~= 0 then
  return redis.error_reply('ERR count must be a whole number from 1 to 1000')
end
local first = cursor == '0'

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local deadline = now + grace

local head = redis.call('HMGET', lock, 'h', 'q')
local h, q = head[1], head[2]
local kind, until_text, state, rest, until_ms
if h then
  kind, until_text, state, rest = string.match(h, '^([^\t]*)\t([^\t]*)\t([^\t]*)(.*)$')
  until_ms = tonumber(until_text)
end
local live_h = until_ms and until_ms > now
if first and not live_h then
  return {'0', 0} -- every hold recorded under the name has ended
end
-- h's new until_ms: still at least every live hold's (cut) expiry.
local new_until = live_h and string.format('%d', math.min(until_ms, deadline))

-- split returns the tab-separated fields of s (empty ones included).
local function split(s)
  local out = {}
  for part in string.gmatch(s .. '\t', '([^\t]*)\t') do
    out[#out + 1] = part
  end
  return out
end

-- told[client] lists the revoked holds of that client, sent once at the end.
local revoked, told, clients = 0, {}, {}
local function tell(client, attempt, owner)
  revoked = revoked + 1
  if client and client ~= '' then
    if not told[client] then
      told[client] = {}
      clients[#clients + 1] = client
    end
    local list = told[client]
    list[#list + 1] = attempt or ''
    list[#list + 1] = owner or ''
  end
end

-- Writes go in batches: one HSET or HDEL per 500 fields, not one per hold.
local sets, dels = {}, {}
local function flush(command, args, per)
  for i = 1, #args, per do
    redis.call(command, lock, unpack(args, i, math.min(i + per - 1, #args)))
  end
end

-- The first call: the single holder (h = kind, until, state, count, client,
-- attempt, owner, meta) is revoked, and shared holders' h is cut.
if first then
  if state == 'h' or state == 'g' or state == 'x' then
    local f = split(string.sub(rest, 2))
    tell(f[2], f[3], f[4])
    if grace > 0 then
      sets[#sets + 1] = 'h'
      sets[#sets + 1] = kind .. '\t' .. new_until .. '\tx' .. rest
    end
  end
  if grace == 0 then
    dels[#dels + 1] = 'h'
  elseif state == 'r' then
    sets[#sets + 1] = 'h'
    sets[#sets + 1] = kind .. '\t' .. new_until .. '\t' .. state .. rest
  elseif state == 'p' then
    -- A Semaphore's h also says until when no record expires (fresh_until):
    -- the records end by the deadline, so that time may not be later.
    local fresh, used = string.match(rest, '^\t(%d+)\t(%d+)$')
    if fresh then
      rest = '\t' .. string.format('%d', math.min(tonumber(fresh), deadline)) .. '\t' .. used
    end
    sets[#sets + 1] = 'h'
    sets[#sets + 1] = kind .. '\t' .. new_until .. '\t' .. state .. rest
  end
end

-- Shared holders of this page: r:<owner> / p:<owner> = expiry, state,
-- count, client, attempt, meta. A Mutex has none: its first call is its last.
local next_cursor = '0'
if not (first and kind == 'mutex') then
  local scan = redis.call('HSCAN', lock, cursor, 'MATCH', '[rp]:*', 'COUNT', count)
  next_cursor = scan[1]
  local page = scan[2]
  for i = 1, #page, 2 do
    local field = page[i]
    local prefix = string.sub(field, 1, 2)
    if prefix == 'r:' or prefix == 'p:' then
      -- rest = \t count \t client \t attempt \t meta, in one match.
      local expiry_text, record_rest, client, attempt =
        string.match(page[i + 1], '^([^\t]*)\t[^\t]*(\t[^\t]*\t([^\t]*)\t([^\t]*).*)$')
      local expiry = tonumber(expiry_text)
      local live = expiry and expiry > now
      if live then
        tell(client, attempt, string.sub(field, 3))
      end
      if grace == 0 then
        dels[#dels + 1] = field -- a dead record goes too: no hold is left under the name
      elseif live then
        sets[#sets + 1] = field
        sets[#sets + 1] = string.format('%d', math.min(expiry, deadline)) .. '\tx' .. record_rest
      end
    end
  end
end
flush('HSET', sets, 1000)
flush('HDEL', dels, 500)

local head_line = 'revoke ' .. #lock .. ' ' .. lock .. '\n'
for _, client in ipairs(clients) do
  local list = told[client]
  local parts = {head_line}
  for i = 1, #list, 2 do
    parts[#parts + 1] = list[i] .. ' ' .. #list[i + 1] .. ' ' .. list[i + 1] .. '\n'
  end
  redis.call('PUBLISH', revoke_prefix .. client, table.concat(parts))
end
if grace == 0 and next_cursor == '0' then
  local waiting = tonumber(q)
  if waiting and waiting > now then
    redis.call(publish, channel, 'released')
  end
end
return {next_cursor, revoked}
