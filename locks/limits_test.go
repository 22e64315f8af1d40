package locks_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/locks"
	"github.com/redlua/redlua/registry"
	"github.com/redlua/redlua/simulate"
)

// countingBackend counts the scripts run through it: a refused value must
// cost no round trip.
type countingBackend struct {
	locks.Backend
	runs atomic.Int64
}

func (b *countingBackend) Run(ctx context.Context, s *registry.Script, keys []string, args ...any) *redis.Cmd {
	b.runs.Add(1)
	return b.Backend.Run(ctx, s, keys, args...)
}

// maxErrorText bounds the error texts of refusals: they quote a short
// prefix of a name or value, never the whole of it.
const maxErrorText = 512

// refused checks that err is a refusal of a caller's value: it matches
// ErrInvalidArgument, mentions want, and is short.
func refused(t *testing.T, what string, err error, want string) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s: accepted, want a refusal", what)
	case !errors.Is(err, locks.ErrInvalidArgument):
		t.Errorf("%s: %v, want an error matching ErrInvalidArgument", what, err)
	case !strings.Contains(err.Error(), want):
		t.Errorf("%s: %v, want an error that mentions %q", what, err, want)
	case len(err.Error()) > maxErrorText:
		t.Errorf("%s: a %d-byte error text, want at most %d: %.200s…", what, len(err.Error()), maxErrorText, err)
	}
}

// Every limit: the value at the limit is accepted, the next one is refused
// with ErrInvalidArgument, a short error naming the limit, and no script
// run.
func TestLimitsRefusedBeforeAnyRoundTrip(t *testing.T) {
	b := &countingBackend{Backend: simulate.New()}
	c, err := locks.NewWithBackend(b)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	atMax := strings.Repeat("n", locks.MaxNameBytes)
	over := atMax + "n"
	huge := strings.Repeat("é", 8<<20) // 16 MiB

	for _, name := range []string{over, huge} {
		what := fmt.Sprintf("a %d-byte name", len(name))
		_, err := c.Mutex(name)
		refused(t, "Mutex with "+what, err, "MaxNameBytes")
		_, err = c.RWMutex(name)
		refused(t, "RWMutex with "+what, err, "MaxNameBytes")
		_, err = c.Semaphore(name, 1)
		refused(t, "Semaphore with "+what, err, "MaxNameBytes")
		_, err = c.MultiLock([]string{"a", name})
		refused(t, "MultiLock with "+what, err, "MaxNameBytes")
		_, err = c.Inspect(ctx, name)
		refused(t, "Inspect with "+what, err, "MaxNameBytes")
		_, err = c.ForceUnlock(ctx, name)
		refused(t, "ForceUnlock with "+what, err, "MaxNameBytes")
	}
	if _, err := c.Mutex(atMax); err != nil {
		t.Errorf("a name of MaxNameBytes: %v", err)
	}

	for _, n := range []int{0, -1, locks.MaxPermits + 1, 1 << 60, math.MaxInt64} {
		_, err := c.Semaphore("s", n)
		refused(t, fmt.Sprintf("Semaphore(%d)", n), err, "MaxPermits")
	}
	sem, err := c.Semaphore("s", locks.MaxPermits)
	if err != nil {
		t.Fatalf("Semaphore(MaxPermits): %v", err)
	}
	for _, n := range []int{0, -1, locks.MaxPermits + 1, 1 << 60, math.MaxInt64, math.MinInt64} {
		_, err := sem.Acquire(ctx, n)
		refused(t, fmt.Sprintf("Acquire(%d)", n), err, "MaxPermits")
		_, err = sem.TryAcquire(ctx, n)
		refused(t, fmt.Sprintf("TryAcquire(%d)", n), err, "MaxPermits")
		refused(t, fmt.Sprintf("SetPermits(%d)", n), sem.SetPermits(ctx, n), "MaxPermits")
	}

	options := []struct {
		opt  locks.Option
		want string
	}{
		{locks.WithTTL(locks.MaxTTL + 1), "MaxTTL"},
		{locks.WithTTL(math.MaxInt64), "MaxTTL"},
		{locks.WithWaiterTTL(locks.MaxWaiterTTL + 1), "MaxWaiterTTL"},
		{locks.WithWaiterTTL(math.MaxInt64), "MaxWaiterTTL"},
		{locks.WithFair(locks.MaxWaiterTTL + 1), "MaxWaiterTTL"},
		{locks.WithFair(math.MaxInt64), "MaxWaiterTTL"},
		{locks.WithOwner(strings.Repeat("o", locks.MaxOwnerBytes+1)), "MaxOwnerBytes"},
		{locks.WithOwner(huge), "MaxOwnerBytes"},
		{locks.WithLabel(strings.Repeat("l", locks.MaxLabelBytes+1)), "MaxLabelBytes"},
		{locks.WithLabel(huge), "MaxLabelBytes"},
	}
	for i, o := range options {
		_, err := c.Mutex("m", o.opt)
		refused(t, fmt.Sprintf("option %d", i), err, o.want)
		_, err = locks.NewWithBackend(b, o.opt)
		refused(t, fmt.Sprintf("client option %d", i), err, o.want)
	}
	if _, err := c.Mutex("m", locks.WithTTL(locks.MaxTTL), locks.WithFair(locks.MaxWaiterTTL),
		locks.WithOwner(strings.Repeat("o", locks.MaxOwnerBytes)), locks.WithLabel(strings.Repeat("l", locks.MaxLabelBytes))); err != nil {
		t.Errorf("options at their limits: %v", err)
	}

	names := make([]string, locks.MaxMultiLockNames+1)
	for i := range names {
		names[i] = fmt.Sprintf("n%d", i)
	}
	_, err = c.MultiLock(names)
	refused(t, "MultiLock of MaxMultiLockNames+1 names", err, "MaxMultiLockNames")
	if _, err := c.MultiLock(names[:locks.MaxMultiLockNames]); err != nil {
		t.Errorf("MultiLock of MaxMultiLockNames names: %v", err)
	}
	_, err = c.MultiLock([]string{"a", "b", "a"})
	refused(t, "MultiLock with a name given twice", err, `"a" is given twice`)
	_, err = c.MultiLock([]string{atMax, "b", atMax})
	refused(t, "MultiLock with a long name given twice", err, "given twice")

	if runs := b.runs.Load(); runs != 0 {
		t.Errorf("%d scripts ran for refused values; want none", runs)
	}

	m, err := c.Mutex("held", locks.WithTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	l, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := b.runs.Load()
	for _, ttl := range []time.Duration{locks.MaxTTL + 1, math.MaxInt64, -1} {
		refused(t, fmt.Sprintf("Extend(%v)", ttl), l.Extend(ctx, ttl), "MaxTTL")
	}
	if runs := b.runs.Load() - before; runs != 0 {
		t.Errorf("%d scripts ran for refused Extend TTLs; want none", runs)
	}
	if err := l.Extend(ctx, locks.MaxTTL); err != nil {
		t.Errorf("Extend(MaxTTL): %v", err)
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// A forged or corrupted lease is refused with ErrInvalidArgument before
// anything is asked of the server, whatever its size.
func TestResumeRefusesForgedLeases(t *testing.T) {
	b := &countingBackend{Backend: simulate.New()}
	c, err := locks.NewWithBackend(b)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	long := strings.Repeat("x", locks.MaxNameBytes+1)
	huge := strings.Repeat("x", 16<<20)
	lease := func(fields string) string {
		return `{"name":"a","owner":"o","token":1,"ttl_ms":1000` + fields + `}`
	}
	for _, bad := range []struct{ s, want string }{
		{lease(`,"kind":"permits","permits":1152921504606846976`), "1152921504606846976 permits"},
		{lease(fmt.Sprintf(`,"kind":"permits","permits":%d`, locks.MaxPermits+1)), "MaxPermits"},
		{lease(`,"kind":"permits","permits":-3`), "-3 permits"},
		{lease(`,"kind":"permits","permits":9223372036854775807`), "permits"},
		{lease(`,"kind":"read","permits":2`), "permits 2"},
		{lease(`,"kind":"write","fair":true`), "fair"},
		{lease(`,"kind":"mutex"`), "unknown lease kind"},
		{lease(`,"kind":"` + strings.Repeat("k", 5000) + `"`), "unknown lease kind"},
		{lease(`,"attempt":"` + strings.Repeat("a", 65) + `"`), "attempt"},
		{`{"name":"a","owner":"o","token":1,"ttl_ms":` + fmt.Sprint(locks.MaxTTL.Milliseconds()+1) + `}`, "ttl_ms"},
		{`{"name":"a","owner":"o","token":1,"ttl_ms":-1}`, "ttl_ms"},
		{`{"name":"a","owner":"o","token":-1,"ttl_ms":1000}`, "token -1"},
		{`{"name":"a","owner":"` + strings.Repeat("o", locks.MaxOwnerBytes+100) + `","token":1,"ttl_ms":1000}`, "MaxOwnerBytes"},
		{`{"name":"` + long + `","owner":"o","token":1,"ttl_ms":1000}`, "MaxNameBytes"},
		{`{"name_b64":"` + base64.StdEncoding.EncodeToString([]byte(long)) + `","owner":"o","token":1,"ttl_ms":1000}`, "MaxNameBytes"},
		{`{"name":"` + huge + `","owner":"o","token":1,"ttl_ms":1000}`, "longer than any marshalled lease"},
		{huge, "longer than any marshalled lease"},
		{`{"name":"a"`, "not a marshalled lease"},
	} {
		what := fmt.Sprintf("Resume(%.60s… (%d bytes))", bad.s, len(bad.s))
		_, err := c.Resume(bad.s)
		refused(t, what, err, bad.want)
		if err != nil && !strings.HasPrefix(err.Error(), "locks: Resume: ") {
			t.Errorf("%s: %v, want an error that names Resume", what, err)
		}
	}
	if runs := b.runs.Load(); runs != 0 {
		t.Errorf("%d scripts ran for forged leases; want none", runs)
	}

	// The largest lease the limits allow resumes.
	name := strings.Repeat("\xff", locks.MaxNameBytes) // not UTF-8: carried as base64
	s := fmt.Sprintf(`{"name_b64":%q,"owner":%q,"token":1,"ttl_ms":%d,"kind":"permits","permits":%d}`,
		base64.StdEncoding.EncodeToString([]byte(name)), strings.Repeat("o", locks.MaxOwnerBytes), locks.MaxTTL.Milliseconds(), locks.MaxPermits)
	l, err := c.Resume(s)
	if err != nil {
		t.Fatalf("the largest lease within the limits: %v", err)
	}
	if l.Name() != name {
		t.Errorf("resumed a %d-byte name, want the %d-byte one", len(l.Name()), len(name))
	}
}

// Errors quote a short prefix of a long name, cut at a character boundary,
// with the name's length; short names appear whole.
func TestErrorsQuoteAShortPrefixOfAName(t *testing.T) {
	c, err := locks.NewWithBackend(simulate.New())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	// A 3-byte character straddles byte 64: the prefix stops before it.
	name := strings.Repeat("a", 62) + strings.Repeat("€", 300)
	other, _ := c.Mutex(name)
	held, err := other.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock(ctx)
	m, _ := c.Mutex(name)
	_, err = m.TryLock(ctx)
	if !errors.Is(err, locks.ErrNotAcquired) {
		t.Fatalf("TryLock of a held lock: %v", err)
	}
	want := "locks: " + strings.Repeat("a", 62) + "… (962 bytes): "
	if !strings.HasPrefix(err.Error(), want) || !utf8.ValidString(err.Error()) {
		t.Errorf("TryLock: %q, want it to start with %q", err, want)
	}
	if err := held.Extend(ctx, locks.MaxTTL+1); err == nil || !strings.Contains(err.Error(), "… (962 bytes)") || len(err.Error()) > maxErrorText {
		t.Errorf("Extend over MaxTTL: %v, want a short error quoting a prefix of the name", err)
	}
	_, err = c.Mutex(strings.Repeat("{", 100))
	refused(t, "a name with braces", err, `"{{{{`)
	if !strings.Contains(err.Error(), "… (100 bytes)") {
		t.Errorf("a long name with braces: %v, want its length", err)
	}
	short, _ := c.Mutex("orders:42")
	if _, err := short.TryLock(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := short.TryLock(ctx); err == nil || err.Error() != "locks: orders:42: lock is held by another owner" {
		t.Errorf("a short name: %v, want it whole", err)
	}
}
