#!lua flags=no-writes
return KEYS[1]
