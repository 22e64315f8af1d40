-- Commands (921-925), checked when the command name is a literal.
local function use(...) return ... end

redis.call('SET', KEYS[1], 'v')
use(redis.pcall('get', KEYS[1]))
use(redis.call('GETT', KEYS[1])) -- want: E922@16
use(redis.call('GET', KEYS[1], 'extra')) -- want: E923@16
use(redis.call('SET', KEYS[1])) -- want: E923@16
use(redis.call('DEL', unpack(KEYS)))
use(redis.call('BLPOP', KEYS[1], 0)) -- want: E925@16
use(redis.call('XREAD', 'BLOCK', 0, 'STREAMS', KEYS[1], '$')) -- want: W924@16
use(redis.call('OBJECT', 'ENCODING', KEYS[1]))
return redis.call(ARGV[1], KEYS[1])
