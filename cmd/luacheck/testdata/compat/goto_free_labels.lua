local t = {}
t["goto"] = 1
local continue = 2
return t["goto"] + continue
