local a = (1);
local b = ((a));
(function() return b end)();
local f = function(...) return ... end
local c = (f(1, 2))
return c
