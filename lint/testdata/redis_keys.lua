-- Keys (901, 902): every key a script touches arrives in KEYS, whole.
local function use(...) return ... end

do
  local k = KEYS[1]
  redis.call('SET', k, ARGV[1])
  for _, key in ipairs(KEYS) do redis.call('DEL', key) end
  use(redis.call('MGET', KEYS[1], KEYS[2]))
end
use(redis.call('GET', 'config')) -- want: W901@23
use(redis.call('GET', ARGV[1])) -- want: W901@23
use(redis.call('GET', KEYS[1] .. ':meta')) -- want: W902@23
do
  local k = 'lock:' .. ARGV[1]
  use(redis.pcall('DEL', k)) -- want: W902@26
end
use(redis.call('GET', string.format('k:%s', ARGV[1]))) -- want: W902@23

-- Values are not keys; keynum commands are followed.
use(redis.call('SET', KEYS[1], 'literal value', 'PX', 100))
use(redis.call('EVAL_RO', 'return 1', 1, 'k')) -- want: E925@16 W901@42
use(redis.call('ZUNIONSTORE', KEYS[1], 2, KEYS[2], 'other')) -- want: W901@52

-- A key whose origin the linter cannot see is not reported.
local function get(k) return redis.call('GET', k) end
return get(KEYS[1])
