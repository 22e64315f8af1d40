package lua_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/redlua/redlua/internal/redistest"
)

// Every script that can write a lock hash refuses a key longer than a
// name of MaxNameBytes (1024) in braces, naming the limit, before it
// touches the server's data: the client refuses such names first, and the
// scripts refuse them for callers that are not this library. A name of
// 1024 bytes passes the check. multi.acquire also refuses more than
// MaxMultiLockNames (100) keys.
func TestScriptsRefuseLockNamesOverTheLimit(t *testing.T) {
	srv := redistest.Standalone(t)
	_, call := scriptCaller(t, srv)
	reg := scripts(t)
	long := "{" + strings.Repeat("n", 1025) + "}"
	most := "{" + strings.Repeat("n", 1024) + "}"
	for _, id := range []string{"mutex.acquire@14", "mutex.undo@6", "multi.acquire@6", "rw.rlock@7", "rw.lock@7", "rw.leave@6",
		"sem.take@5", "sem.acquire@11", "sem.setlimit@8", "sem.undo@5"} {
		s, err := reg.Lookup(id)
		if err != nil {
			t.Fatal(err)
		}
		keys := func(lock string) []string {
			out := []string{lock}
			for _, name := range s.Keys[1:] {
				out = append(out, lock+":"+name)
			}
			return out
		}
		args := make([]any, len(s.Args))
		for i := range args {
			args[i] = "x" // any value: the key is checked first
		}
		_, err = call(id, keys(long), args...)
		if err == nil || !strings.Contains(err.Error(), "at most 1024 bytes (MaxNameBytes)") {
			t.Errorf("%s with a %d-byte key: %v, want the name limit named", id, len(long), err)
		}
		if n, _ := srv.Client().Exists(t.Context(), long, long+":queue").Result(); n != 0 {
			t.Errorf("%s with a %d-byte key wrote it", id, len(long))
		}
		if _, err := call(id, keys(most), args...); err != nil && strings.Contains(err.Error(), "MaxNameBytes") {
			t.Errorf("%s refused a key of a %d-byte name: %v", id, len(most)-2, err)
		}
	}

	var many []string
	for i := range 101 {
		many = append(many, fmt.Sprintf("{m}%d", i))
	}
	if _, err := call("multi.acquire@6", many, "o", 1000, "a", "c", "{}"); err == nil || !strings.Contains(err.Error(), "at most 100 lock keys (MaxMultiLockNames)") {
		t.Errorf("multi.acquire of 101 keys: %v, want the MultiLock limit named", err)
	}
	if _, err := call("multi.acquire@6", many[:100], "o", 1000, "a", "c", "{}"); err != nil {
		t.Errorf("multi.acquire of 100 keys: %v", err)
	}
}
