counter = 1
counter = counter + 1
redis.foo = 1
string.myfn = function() end
local t = table
t.insert({}, 1)
math.pi = 3
KEYS[1] = "x"
ARGV.extra = 1
cjson.nope()
return undefined_thing
