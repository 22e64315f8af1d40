local obj = {}
function obj:get(k)
  return k
end
function obj:noself()
  return 1
end
function obj.dot(self2)
  return 2
end
return obj:get(1) + obj:noself() + obj.dot()
