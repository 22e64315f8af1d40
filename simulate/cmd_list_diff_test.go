package simulate

import "testing"

// listCases cover LPUSHX, RPUSHX, LINSERT, LMPOP and BLMPOP (which a
// direct call with a zero timeout and a script answer at once).
var listCases = [][]string{
	{"LPUSHX l a", "RPUSHX l a", "EXISTS l", "RPUSH l a", "LPUSHX l b c", "RPUSHX l d e", "LRANGE l 0 -1", "SET s v", "LPUSHX s a", "RPUSHX s a", "LPUSHX l"},
	{"RPUSH l a b c b", "LINSERT l BEFORE b x", "LINSERT l after b y", "LRANGE l 0 -1", "LINSERT l BEFORE nope z", "LINSERT l MIDDLE b z", "LINSERT missing BEFORE a b", "LINSERT missing FOO a b", "SET s v", "LINSERT s BEFORE a b", "LINSERT s FOO a b", "LINSERT l AFTER c", "LINSERT l AFTER c end", "LRANGE l 0 -1"},
	{"RPUSH a 1 2 3", "RPUSH b 4 5", "LMPOP 2 a b LEFT", "LMPOP 2 a b RIGHT COUNT 5", "EXISTS a", "LMPOP 2 a b LEFT COUNT 1", "LMPOP 2 a b LEFT", "LMPOP 1 a LEFT", "RPUSH c x y", "LMPOP 3 a b c right count 1", "LRANGE c 0 -1"},
	{"RPUSH a 1", "LMPOP 0 a LEFT", "LMPOP -1 a LEFT", "LMPOP x a LEFT", "LMPOP 2 a LEFT", "LMPOP 5 a LEFT", "LMPOP 1 a UP", "LMPOP 1 a LEFT COUNT 0", "LMPOP 1 a LEFT COUNT -1", "LMPOP 1 a LEFT COUNT x", "LMPOP 1 a LEFT COUNT", "LMPOP 1 a LEFT COUNT 1 COUNT 1", "LMPOP 1 a LEFT FOO", "SET s v", "LMPOP 2 missing s LEFT", "LMPOP 2 a s LEFT", "LMPOP 9223372036854775807 a LEFT", "LMPOP 1 a"},
	{"RPUSH a 1 2 3", "BLMPOP 0 1 a LEFT COUNT 2", "BLMPOP 0.5 1 a RIGHT", "BLMPOP x 1 a LEFT", "BLMPOP -1 1 a LEFT", "BLMPOP 0 0 a LEFT", "BLMPOP 0 1 a FOO", "BLMPOP x 1 a FOO", "BLMPOP x 0 a LEFT", "SET s v", "BLMPOP 0 1 s LEFT", "BLMPOP 0 1 a"},
	{"RPUSH a 1 2 3 4 5 6 7 8 9 10 11 12 13 14", "BLMPOP inf 1 a LEFT", "BLMPOP 1e20 1 a LEFT", "BLMPOP 0x10 1 a LEFT", "BLMPOP -0.0001 1 a LEFT", "BLMPOP -0.001 1 a LEFT", "BLMPOP ' 1' 1 a LEFT", "BLMPOP nan 1 a LEFT", "BLMPOP 1e3 1 a LEFT", "BLPOP a -0.0001", "BLPOP a inf", "BLPOP a 0x1", "BRPOP a 9223372036854775", "BRPOP a 9223372036854776"},
}

func TestListCommandsMatchRedis(t *testing.T) { runCommandCases(t, listCases) }

// hashCases cover HSTRLEN and the HRANDFIELD calls whose reply is not
// random: counts covering the whole hash, one-field hashes and errors.
var hashCases = [][]string{
	{"HSET h a hello b 12 c ''", "HSTRLEN h a", "HSTRLEN h b", "HSTRLEN h c", "HSTRLEN h zz", "HSTRLEN missing a", "SET s v", "HSTRLEN s a", "HSTRLEN h"},
	{"HSET h z 1 a 2 m 3", "HRANDFIELD h 3", "HRANDFIELD h 10", "HRANDFIELD h 3 WITHVALUES", "HRANDFIELD h 100 withvalues", "HRANDFIELD h 0", "HRANDFIELD h 0 WITHVALUES", "HRANDFIELD missing", "HRANDFIELD missing 5", "HRANDFIELD missing -5 WITHVALUES", "HRANDFIELD h x", "HRANDFIELD h 1 FOO", "HRANDFIELD h 1 WITHVALUES x", "HRANDFIELD h -9223372036854775808", "HRANDFIELD h 4611686018427387904 WITHVALUES", "HRANDFIELD h -4611686018427387904 WITHVALUES", "HRANDFIELD h 4611686018427387903 WITHVALUES", "SET s v", "HRANDFIELD s", "HRANDFIELD s 1", "HRANDFIELD s x"},
	{"HSET one f v", "HRANDFIELD one", "HRANDFIELD one 1", "HRANDFIELD one -3", "HRANDFIELD one -2 WITHVALUES", "HRANDFIELD one 1 WITHVALUES"},
}

func TestHashCommandsMatchRedis(t *testing.T) { runCommandCases(t, hashCases) }
