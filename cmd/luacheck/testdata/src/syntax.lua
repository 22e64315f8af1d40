local x = 
if then end
