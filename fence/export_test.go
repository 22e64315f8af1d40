package fence

// Script is the fence's script, for tests that call it directly.
var Script = fenceScript
