package simulate

import "testing"

// lposCases cover LPOS's options, their errors, and Redis 7.0's treatment
// of RANK -9223372036854775808 (negating it overflows back to itself).
var lposCases = [][]string{
	{"RPUSH l a b c 1 2 3 c c", "LPOS l c", "LPOS l c RANK 2", "LPOS l c RANK -1", "LPOS l c RANK -2", "LPOS l c RANK 4", "LPOS l c RANK -4", "LPOS l x", "LPOS l 1", "LPOS l 01", "LPOS l c COUNT 2", "LPOS l c COUNT 0", "LPOS l c COUNT 10", "LPOS l c COUNT 0 RANK -1", "LPOS l c RANK 2 COUNT 2", "LPOS l c RANK 3 COUNT 0", "LPOS l x COUNT 1", "LPOS l c MAXLEN 3", "LPOS l c MAXLEN 2", "LPOS l c MAXLEN 3 COUNT 0", "LPOS l c RANK -1 MAXLEN 2 COUNT 0", "LPOS l c RANK -1 MAXLEN 1", "LPOS l c MAXLEN 0 COUNT 0", "LPOS l c rank 1 count 1 maxlen 0", "LPOS l c RANK 1 RANK 2"},
	{"RPUSH l a b a c a", "LPOS l a RANK 0", "LPOS l a RANK x", "LPOS l a RANK 9223372036854775808", "LPOS l a RANK -9223372036854775808", "LPOS l a RANK -9223372036854775808 COUNT 1", "LPOS l a RANK -9223372036854775808 COUNT 0 MAXLEN 4", "LPOS l a RANK -9223372036854775807", "LPOS l a RANK 9223372036854775807 COUNT 0", "LPOS l a COUNT -1", "LPOS l a COUNT x", "LPOS l a COUNT 9223372036854775808", "LPOS l a MAXLEN -1", "LPOS l a MAXLEN 1.5", "LPOS l a RANK", "LPOS l a COUNT", "LPOS l a FOO 1", "LPOS l a COUNT 1 FOO", "LPOS l"},
	{"LPOS missing a", "LPOS missing a COUNT 0", "LPOS missing a RANK 0", "SET s x", "LPOS s a", "LPOS s a COUNT 1", "LPOS s a COUNT -1", "HSET h f v", "LPOS h f RANK -1"},
}

func TestLPosMatchesRedis(t *testing.T) { runCommandCases(t, lposCases) }
