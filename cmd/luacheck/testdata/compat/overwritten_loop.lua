local total = 0
for i = 1, #ARGV do
  total = tonumber(ARGV[i])
end
local last = nil
while true do
  last = redis.call("LPOP", KEYS[1])
  if not last then break end
end
return total
