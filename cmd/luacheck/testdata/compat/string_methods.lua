local s = ARGV[1]
local n = s:len() + s:upper():len()
local parts = {}
for part in s:gmatch("[^,]+") do
  parts[#parts + 1] = part
end
local unused_fmt = ("%d"):format(n)
return #parts
