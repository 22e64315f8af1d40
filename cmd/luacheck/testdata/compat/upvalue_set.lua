local count = 0
local function bump()
  count = count + 1
end
bump()
local unused_up = 1
local function set_only()
  unused_up = 2
end
set_only()
return count
