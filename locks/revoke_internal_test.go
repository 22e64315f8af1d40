package locks

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/registry"
	"github.com/redlua/redlua/simulate"
)

// revokeFixture is a Client on the simulator, whose leases listen on its
// revoke channel.
type revokeFixture struct {
	srv *simulate.Server
	c   *Client
}

func newRevokeFixture(t *testing.T, wrap func(Backend) Backend) revokeFixture {
	t.Helper()
	srv := simulate.New()
	var b Backend = srv
	if wrap != nil {
		b = wrap(b)
	}
	c, err := NewWithBackend(b, WithTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	return revokeFixture{srv: srv, c: c}
}

// lock takes name with a Mutex of owner and waits until the lease's
// subscription is confirmed.
func (f revokeFixture) lock(t *testing.T, name, owner string) *Lease {
	t.Helper()
	m, err := f.c.Mutex(name, WithOwner(owner))
	if err != nil {
		t.Fatal(err)
	}
	l, err := m.TryLock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	f.waitSubscribed(t, name)
	return l
}

func (f revokeFixture) waitSubscribed(t *testing.T, name string) {
	t.Helper()
	f.c.revokes.mu.Lock()
	ready, started := f.c.revokes.ready, f.c.revokes.started
	f.c.revokes.mu.Unlock()
	if !started {
		t.Fatalf("no subscription on the Client's revoke channel while a lease of %s is held", name)
	}
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("the lease's subscription was not confirmed in 10s")
	}
}

// revokeMessage is lock.forceunlock's message revoking holds (attempt,
// owner pairs) of name.
func revokeMessage(name string, holds ...string) string {
	k, _ := keysFor(name)
	m := fmt.Sprintf("revoke %d %s\n", len(k.lock), k.lock)
	for i := 0; i+1 < len(holds); i += 2 {
		m += fmt.Sprintf("%s %d %s\n", holds[i], len(holds[i+1]), holds[i+1])
	}
	return m
}

// publish sends a revocation of the holds (attempt, owner pairs) of name
// on the Client's revoke channel.
func (f revokeFixture) publish(t *testing.T, name string, holds ...string) {
	t.Helper()
	f.publishRaw(t, revokeMessage(name, holds...))
}

// publishRaw sends payload on the Client's revoke channel.
func (f revokeFixture) publishRaw(t *testing.T, payload string) {
	t.Helper()
	if err := f.srv.Do(context.Background(), "PUBLISH", f.c.revokes.channel, payload).Err(); err != nil {
		t.Fatal(err)
	}
}

func attemptOf(l *Lease) string { return l.hold.(interface{ attemptID() string }).attemptID() }

func isDone(l *Lease) bool {
	select {
	case <-l.Done():
		return true
	default:
		return false
	}
}

func wantForced(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, ErrForced) || !errors.Is(err, ErrLockLost) || !strings.Contains(err.Error(), "forced unlock") {
		t.Fatalf("%s: err %v, want ErrForced and ErrLockLost, saying \"forced unlock\"", what, err)
	}
}

// A revocation of <attempt> <owner> of a lock on the holder's revoke
// channel ends the lease it names at once (the simulator delivers it
// before PUBLISH returns), and no other: another attempt of the same
// owner, another owner, or the same hold of another lock keeps its lease.
func TestRevokeMessageEndsTheNamedLease(t *testing.T) {
	f := newRevokeFixture(t, nil)
	l := f.lock(t, "job", "alice")
	other := f.lock(t, "job2", "alice")

	f.publish(t, "job", "not-"+attemptOf(l), "alice")
	f.publish(t, "job", attemptOf(l), "bob")
	f.publish(t, "job2", attemptOf(l), "alice")
	f.publishRaw(t, "revoke")
	f.publishRaw(t, "revoke "+attemptOf(l))
	f.publishRaw(t, "revoke "+attemptOf(l)+" alice")
	if isDone(l) {
		t.Fatalf("a revoke for another call, owner or lock ended the lease: %v", l.Err())
	}
	f.publish(t, "job", attemptOf(l), "alice")
	if !isDone(l) {
		t.Fatal("the lease named by a revoke message is still live")
	}
	wantForced(t, "Err after the revoke", l.Err())
	if isDone(other) {
		t.Fatal("a revoke on job's channel ended a lease of job2")
	}
	ctx, cancel := l.Context(context.Background())
	defer cancel()
	wantForced(t, "the lease context's cause", context.Cause(ctx))
	if got := f.c.Stats().Lost; got != 1 {
		t.Fatalf("Stats().Lost = %d, want 1", got)
	}
}

// Unlock of a revoked lease still runs the release (the holder's
// confirmation that it stopped, which frees the name) and returns the
// lease's error.
func TestUnlockOfARevokedLeaseReleases(t *testing.T) {
	f := newRevokeFixture(t, nil)
	l := f.lock(t, "job", "alice")
	f.publish(t, "job", attemptOf(l), "alice")
	wantForced(t, "Unlock of a revoked lease", l.Unlock(context.Background()))
	m, _ := f.c.Mutex("job", WithOwner("bob"))
	l2, err := m.TryLock(context.Background())
	if err != nil {
		t.Fatalf("TryLock after the revoked holder's Unlock = %v; want the name free", err)
	}
	wantForced(t, "a second Unlock", l.Unlock(context.Background()))
	if err := l2.Unlock(context.Background()); err != nil {
		t.Fatalf("bob's Unlock after alice's second Unlock: %v", err)
	}
}

// An empty attempt (a reentrant owner's hold) names every lease of the
// owner of the lock on this Client.
func TestRevokeWithoutAttemptEndsTheOwnersLeases(t *testing.T) {
	f := newRevokeFixture(t, nil)
	m, _ := f.c.Mutex("job", WithOwner("alice"), WithReentrant())
	a, err := m.TryLock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.TryLock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	f.waitSubscribed(t, "job")
	f.publish(t, "job", "", "alice")
	if !isDone(a) || !isDone(b) {
		t.Fatal("a revoke without attempt left a reentrant owner's lease live")
	}
}

// A revoke that reaches the channel before its lease exists (a grant and a
// forced unlock right after it: the lease is built after the grant message
// was read) ends that lease when it starts.
func TestRevokeBeforeTheLeaseStarts(t *testing.T) {
	f := newRevokeFixture(t, nil)
	held := f.lock(t, "job", "carol") // subscribes the revoke channel
	f.publish(t, "job", "att-1", "alice")
	k, _ := keysFor("job")
	s := f.c.defaults
	l := newLease(f.c, &k, &s, mutexHold{attempt: "att-1"}, "alice", 7, 0, f.c.clock.Now(), time.Minute)
	if !isDone(l) {
		t.Fatal("a lease named by an earlier revoke started live")
	}
	wantForced(t, "Err", l.Err())
	l2 := newLease(f.c, &k, &s, mutexHold{attempt: "att-2"}, "alice", 8, 0, f.c.clock.Now(), time.Minute)
	if isDone(l2) || isDone(held) {
		t.Fatal("a revoke of att-1 ended another call's lease")
	}
	k2, _ := keysFor("job2")
	l3 := newLease(f.c, &k2, &s, mutexHold{attempt: "att-1"}, "alice", 9, 0, f.c.clock.Now(), time.Minute)
	if isDone(l3) {
		t.Fatal("a revoke of job's att-1 ended a lease of job2")
	}
}

// forcedExtend answers every extend script with -2, as the layout's extend
// scripts do for a revoked hold.
type forcedExtend struct{ Backend }

func (b forcedExtend) Run(ctx context.Context, s *registry.Script, keys []string, args ...any) *redis.Cmd {
	if strings.Contains(s.Name, "extend") {
		cmd := redis.NewCmd(ctx)
		cmd.SetVal(int64(-2))
		return cmd
	}
	return b.Backend.Run(ctx, s, keys, args...)
}

// An extend that replies -2 (the holder missed the message) ends the lease
// as the message would: ErrForced with ErrLockLost.
func TestExtendMinusTwoEndsTheLease(t *testing.T) {
	f := newRevokeFixture(t, func(b Backend) Backend { return forcedExtend{b} })
	l := f.lock(t, "job", "alice")
	wantForced(t, "Extend", l.Extend(context.Background(), 0))
	if !isDone(l) {
		t.Fatal("the lease is live after an extend replied -2")
	}
	wantForced(t, "Unlock", l.Unlock(context.Background()))
}

// A lease's listening ends with it: the lock's leases go back to zero
// (the Client's revoke channel stays subscribed), and a revoke after
// Unlock changes nothing.
func TestLeaseStopsListeningWhenItEnds(t *testing.T) {
	f := newRevokeFixture(t, nil)
	l := f.lock(t, "job", "alice")
	k, _ := keysFor("job")
	users := func() int {
		f.c.revokes.mu.Lock()
		defer f.c.revokes.mu.Unlock()
		return len(f.c.revokes.leases[k.lock])
	}
	if n := users(); n != 1 {
		t.Fatalf("users with a lease held = %d, want 1", n)
	}
	if err := l.Unlock(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := users(); n != 0 {
		t.Fatalf("users after Unlock = %d, want 0", n)
	}
	f.publish(t, "job", attemptOf(l), "alice")
	if err := l.Err(); !errors.Is(err, ErrNotHeld) || errors.Is(err, ErrForced) {
		t.Fatalf("Err of an unlocked lease after a revoke = %v, want ErrNotHeld", err)
	}
}

// revokedBy matches the identities the layout's records carry: an owner
// token, an RWMutex call's token joined to its id, and a Semaphore call's
// own token (which is also its attempt).
func TestRevokedByMatchesRecordedIdentities(t *testing.T) {
	c := &Client{}
	lease := func(hold holdKind, owner string) *Lease { return &Lease{c: c, hold: hold, owner: owner} }
	for _, tc := range []struct {
		l              *Lease
		attempt, owner string
		want           bool
	}{
		{lease(mutexHold{attempt: "a1"}, "alice"), "a1", "alice", true},
		{lease(mutexHold{attempt: "a1"}, "alice"), "a2", "alice", false},
		{lease(mutexHold{attempt: "a1"}, "alice"), "", "alice", true},
		{lease(mutexHold{attempt: "a1"}, "alice"), "a1", "alicia", false},
		{lease(mutexHold{}, "alice"), "a9", "alice", true}, // a reentrant owner's hold
		{lease(readHold{}, "alice\ta1"), "a1", "alice", true},
		{lease(readHold{}, "alice\ta1"), "a2", "alice", false},
		{lease(readHold{}, "alice\ta1"), "a1", "alice\ta1", true},
		{lease(readHold{}, "r-token"), "r-token", "r-token", true},
		{lease(permitHold{}, "p-token"), "p-token", "p-token", true},
		{lease(permitHold{}, "p-token"), "p-token", "q-token", false},
	} {
		if got := tc.l.revokedBy(tc.attempt, tc.owner); got != tc.want {
			t.Errorf("lease (%T, %q): revokedBy(%q, %q) = %v, want %v", tc.l.hold, tc.l.owner, tc.attempt, tc.owner, got, tc.want)
		}
	}
}

// A revoke message names its lock, then several holds of one Client; a
// lock name or an owner may hold spaces, a tab (an RWMutex call's
// identity) or a newline.
func TestParseRevocations(t *testing.T) {
	for _, tc := range []struct {
		payload string
		lock    string
		want    []revocation
	}{
		{"revoke 3 {j}\na1 5 alice\n", "{j}", []revocation{{attempt: "a1", owner: "alice"}}},
		{"revoke 3 {j}\n 11 alice smith\n", "{j}", []revocation{{attempt: "", owner: "alice smith"}}},
		{"revoke 3 {j}\na1 5 alice\na2 8 tok\ta2 b\n", "{j}", []revocation{{attempt: "a1", owner: "alice"}, {attempt: "a2", owner: "tok\ta2 b"}}},
		{"revoke 3 {j}\na1 6 al\nice\n", "{j}", []revocation{{attempt: "a1", owner: "al\nice"}}},
		{"revoke 6 {a\n b}\na1 1 x\n", "{a\n b}", []revocation{{attempt: "a1", owner: "x"}}},
		{"revoke 3 {j}\na1 50 alice\n", "{j}", nil},
		{"revoke 3 {j}\na1 x alice\n", "{j}", nil},
		{"revoke 9 {j}\na1 5 alice\n", "", nil},
		{"revoke", "", nil},
		{"revoke a1 alice", "", nil},
		{"revoked 3 {j}\na1 5 alice\n", "", nil},
	} {
		lock, got := parseRevocations(tc.payload)
		if len(got) != len(tc.want) || (tc.want != nil && lock != tc.lock) {
			t.Errorf("parseRevocations(%q) = %q, %v, want %q, %v", tc.payload, lock, got, tc.lock, tc.want)
			continue
		}
		for i := range got {
			if got[i].attempt != tc.want[i].attempt || got[i].owner != tc.want[i].owner || got[i].lock != tc.lock {
				t.Errorf("parseRevocations(%q)[%d] = %+v, want %+v of %q", tc.payload, i, got[i], tc.want[i], tc.lock)
			}
		}
	}
}

// One message for several leases of one Client ends each of them.
func TestBatchedRevokeEndsEveryNamedLease(t *testing.T) {
	f := newRevokeFixture(t, nil)
	a := f.lock(t, "job", "alice")
	b := f.lock(t, "job2", "bob")
	m, _ := f.c.Mutex("job", WithOwner("carol"))
	if _, err := m.TryLock(context.Background()); err == nil {
		t.Fatal("carol took a held lock")
	}
	f.publish(t, "job", attemptOf(a), "alice", "zz", "bob")
	if !isDone(a) {
		t.Fatal("alice's lease is live after a batched revoke naming it")
	}
	if isDone(b) {
		t.Fatal("bob's lease of job2 ended by a revoke of job")
	}
}
