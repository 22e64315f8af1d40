local function helper()
  return 1
end
local other = function() return 2 end
local function rec(n)
  if n > 0 then return rec(n - 1) end
  return 0
end
local t = {}
function t.m() return 1 end
return t
