local x = 1
x = x + 1
local y = {}
y.a = y
local z = 0
z = z + 1
return x
