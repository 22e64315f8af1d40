for i = 10, 1, -1 do
  if i == 5 then
    break
  end
end
local step = tonumber(ARGV[1]) or 1
for j = 1, 3, step do
  redis.call("RPUSH", KEYS[1], j)
end
return step
