local v = redis.call("GET", KEYS[1])
if v then
end
if v == "a" then
  v = "b"
elseif v == "c" then
else
end
do end
while false do end
for _ = 1, 2 do end
;
return v
