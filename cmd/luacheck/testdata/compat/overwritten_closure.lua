local a = 1
local function get() return a end
a = 2
local b = 1
b = 2
local c = 5
local f = function() c = 6 end
f()
return get() + b
