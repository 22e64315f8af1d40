-- Redefined and shadowed locals (4xx).
local function use(...) return ... end

do
  local w = 1
  local w = w + 1 -- want: W411@9
  use(w)
end
do local function f(a) local a = 1 return a end use(f) end -- want: W412@30 W212
do
  local x = 1
  do local x = 2 use(x) end -- want: W421@12
  use(x)
end
do local function f(a) if a then local a = 2 return a end end use(f) end -- want: W422@40
for i = 1, 2 do if i then local i = 3 use(i) end end -- want: W423@33
do
  local w = 1
  local function g() local w = 3 return w end -- want: W431@28
  use(g, w)
end

-- Distinct names and sibling scopes are fine.
do local a = 1 local b = 2 use(a, b) end
do local a = 1 use(a) end
do local a = 2 use(a) end

return use
