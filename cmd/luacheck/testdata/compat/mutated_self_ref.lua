-- luacheck 1.1 does not count t on the right of "t.k = t" (no call on
-- either side) as an access: such a table is mutated but never accessed.
local Queue = {}
Queue.__index = Queue
local Node = {}
Node.next = Node.prev
local Pair = {}
Pair.a, Pair.b = Pair, 1
local Called = {}
Called.name = tostring(Called)
local Closure = {}
Closure.get = function() return Closure end
local Used = {}
Used.self = Used
return Used
