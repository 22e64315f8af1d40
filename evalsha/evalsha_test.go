package evalsha_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/registry"
)

func testRegistry(t testing.TB) *registry.Registry {
	t.Helper()
	reg, err := registry.New(os.DirFS("testdata"))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func script(t testing.TB, reg *registry.Registry, name string) *registry.Script {
	t.Helper()
	s, err := reg.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func miniClient(t testing.TB) (*miniredis.Miniredis, *redis.Client) {
	mr := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { c.Close() })
	return mr, c
}

func newRunner(t testing.TB, c redis.UniversalClient, opts ...evalsha.Option) *evalsha.Runner {
	t.Helper()
	r, err := evalsha.New(c, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// The contract every backend must keep; run on miniredis here and on real
// servers in server_test.go.
func runContract(t *testing.T, client redis.UniversalClient) {
	ctx := context.Background()
	reg := testRegistry(t)
	r := newRunner(t, client)
	incr, get, fail := script(t, reg, "counter.incr"), script(t, reg, "counter.get"), script(t, reg, "echo.fail")

	if n, err := r.Run(ctx, incr, []string{"{c}n"}, 5).Int64(); err != nil || n != 5 {
		t.Fatalf("first run (cold cache) = %d, %v; want 5", n, err)
	}
	if n, err := r.Run(ctx, incr, []string{"{c}n"}, 2).Int64(); err != nil || n != 7 {
		t.Fatalf("second run = %d, %v; want 7", n, err)
	}
	if s := r.Stats(); s.Calls != 2 || s.NoScript != 1 || s.Evals != 1 {
		t.Errorf("stats after a cold start = %+v; want 2 calls, 1 NOSCRIPT, 1 EVAL", s)
	}
	if v, err := r.Run(ctx, get, []string{"{c}n"}).Text(); err != nil || v != "7" {
		t.Fatalf("no-writes script = %q, %v", v, err)
	}
	if err := r.Run(ctx, get, []string{"{c}missing"}).Err(); err != redis.Nil {
		t.Fatalf("nil reply = %v, want redis.Nil itself", err)
	}

	err := r.Run(ctx, fail, []string{"k"}, "boom: it broke").Err()
	var se *evalsha.ScriptError
	var rerr redis.Error
	if !errors.As(err, &se) || se.Script != "echo.fail@1" || !errors.As(err, &rerr) || !strings.Contains(err.Error(), "boom: it broke") {
		t.Fatalf("script error = %v (%T); want *ScriptError naming echo.fail@1 wrapping the redis error", err, err)
	}
	if !strings.HasPrefix(err.Error(), "echo.fail@1: ") {
		t.Errorf("error %q does not start with the script's name@version", err)
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := r.Run(cctx, incr, []string{"{c}n"}, 1).Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context = %v; want errors.Is(err, context.Canceled)", err)
	}
	if err := r.Run(ctx, incr, nil, 1).Err(); err == nil || err.Error() != "counter.incr@1: takes exactly 1 KEYS (counter), got 0; pass what the header's keys: and args: lines declare" {
		t.Fatalf("missing key = %v", err)
	}
	if err := r.Run(ctx, nil, nil).Err(); err == nil {
		t.Fatal("nil script accepted")
	}
}

func TestRunMiniredis(t *testing.T) {
	_, c := miniClient(t)
	runContract(t, c)
}

func TestNewRejectsNil(t *testing.T) {
	if _, err := evalsha.New(nil); err == nil {
		t.Fatal("New(nil) did not fail")
	}
}

// After SCRIPT FLUSH the next call falls back to EVAL once and then hits
// the cache again.
func TestRunAfterFlush(t *testing.T) {
	_, c := miniClient(t)
	ctx := context.Background()
	reg := testRegistry(t)
	if err := evalsha.Load(ctx, c, reg); err != nil {
		t.Fatal(err)
	}
	var events []evalsha.EventKind
	r := newRunner(t, c, evalsha.WithHook(func(e evalsha.Event) { events = append(events, e.Kind) }))
	incr := script(t, reg, "counter.incr")
	r.Run(ctx, incr, []string{"n"}, 1)
	if s := r.Stats(); s.NoScript != 0 {
		t.Fatalf("preloaded script hit NOSCRIPT: %+v", s)
	}
	c.ScriptFlush(ctx)
	if n, err := r.Run(ctx, incr, []string{"n"}, 1).Int64(); err != nil || n != 2 {
		t.Fatalf("after flush = %d, %v", n, err)
	}
	r.Run(ctx, incr, []string{"n"}, 1)
	if s := r.Stats(); s.NoScript != 1 || s.Evals != 1 {
		t.Errorf("stats = %+v; want exactly one fallback", s)
	}
	if len(events) != 1 || events[0] != evalsha.EventNoScript {
		t.Errorf("hook saw %v; want one EventNoScript", events)
	}
}

// miniredis cannot compile "#!lua": the Runner switches to legacy sources.
func TestRunLearnsLegacyServer(t *testing.T) {
	_, c := miniClient(t)
	ctx := context.Background()
	reg := testRegistry(t)
	var kinds []evalsha.EventKind
	r := newRunner(t, c, evalsha.WithHook(func(e evalsha.Event) { kinds = append(kinds, e.Kind) }))
	c.Set(ctx, "n", "41", 0)
	get := script(t, reg, "counter.get")
	for i := 0; i < 3; i++ {
		if v, err := r.Run(ctx, get, []string{"n"}).Text(); err != nil || v != "41" {
			t.Fatalf("run %d = %q, %v", i, v, err)
		}
	}
	want := []evalsha.EventKind{evalsha.EventNoScript, evalsha.EventLegacyServer}
	if len(kinds) != len(want) || kinds[0] != want[0] || kinds[1] != want[1] {
		t.Errorf("events %v, want %v", kinds, want)
	}
	if s := r.Stats(); s.Evals != 2 {
		t.Errorf("stats %+v: want two EVALs (canonical refused, legacy accepted), then EVALSHA", s)
	}
}

func TestIsNoScript(t *testing.T) {
	for msg, want := range map[string]bool{
		"NOSCRIPT No matching script. Please use EVAL.":     true,
		"ERR NOSCRIPT No matching script. Please use EVAL.": true,
		"ERR unknown command":                               false,
		"WRONGTYPE Operation against a key":                 false,
	} {
		if got := evalsha.IsNoScript(errors.New(msg)); got != want {
			t.Errorf("IsNoScript(%q) = %v", msg, got)
		}
	}
	if evalsha.IsNoScript(nil) {
		t.Error("IsNoScript(nil)")
	}
}

func pipelineContract(t *testing.T, client redis.UniversalClient, flush func()) {
	ctx := context.Background()
	reg := testRegistry(t)
	r := newRunner(t, client)
	if err := evalsha.Load(ctx, client, reg); err != nil {
		t.Fatal(err)
	}
	flush()
	// counter.get reads a key the pipeline does not write: on a server that
	// needs the legacy fallback its calls run in a later round trip.
	if err := client.Set(ctx, "{p}fixed", 42, 0).Err(); err != nil {
		t.Fatal(err)
	}
	incr, get, fail := script(t, reg, "counter.incr"), script(t, reg, "counter.get"), script(t, reg, "echo.fail")
	var calls []evalsha.Call
	for i := 0; i < 100; i++ {
		key := "{p}" + string(rune('a'+i%5))
		switch i % 3 {
		case 0:
			calls = append(calls, evalsha.Call{Script: incr, Keys: []string{key}, Args: []any{1}})
		case 1:
			calls = append(calls, evalsha.Call{Script: get, Keys: []string{"{p}fixed"}})
		default:
			calls = append(calls, evalsha.Call{Script: fail, Keys: []string{key}, Args: []any{""}})
		}
	}
	cmds, err := r.RunMany(ctx, calls)
	if err != nil {
		t.Fatalf("RunMany: %v", err)
	}
	counts := map[string]int64{}
	for i, cmd := range cmds {
		key := calls[i].Keys[0]
		switch i % 3 {
		case 0:
			counts[key]++
			if n, err := cmd.Int64(); err != nil || n != counts[key] {
				t.Fatalf("call %d incr %s = %d, %v; want %d", i, key, n, err, counts[key])
			}
		case 1:
			if v, err := cmd.Int64(); err != nil || v != 42 {
				t.Fatalf("call %d get = %d, %v; want 42", i, v, err)
			}
		default:
			if v, err := cmd.Text(); err != nil || v != key {
				t.Fatalf("call %d echo = %q, %v; want %q", i, v, err, key)
			}
		}
	}
	if s := r.Stats(); s.NoScript == 0 || s.Calls != 100 {
		t.Errorf("stats %+v: the flush should have caused NOSCRIPT fallbacks", s)
	}

	// A script error stays with its call; the rest succeed.
	cmds, err = r.RunMany(ctx, []evalsha.Call{
		{Script: incr, Keys: []string{"{p}z"}, Args: []any{1}},
		{Script: fail, Keys: []string{"{p}z"}, Args: []any{"nope"}},
		{Script: incr, Keys: []string{"{p}z"}, Args: []any{1}},
	})
	var se *evalsha.ScriptError
	if !errors.As(err, &se) || se.Script != "echo.fail@1" {
		t.Fatalf("RunMany error = %v; want the failing call's *ScriptError", err)
	}
	if n, _ := cmds[2].Int64(); n != 2 || cmds[1].Err() == nil {
		t.Fatalf("pipeline results %v", cmds)
	}
}

func TestRunManyMiniredis(t *testing.T) {
	_, c := miniClient(t)
	pipelineContract(t, c, func() { c.ScriptFlush(context.Background()) })
}

func TestRunManyRejectsBadCallsLocally(t *testing.T) {
	_, c := miniClient(t)
	reg := testRegistry(t)
	r := newRunner(t, c)
	cmds, err := r.RunMany(context.Background(), []evalsha.Call{
		{Script: script(t, reg, "counter.incr"), Keys: nil, Args: []any{1}},
		{Script: script(t, reg, "counter.incr"), Keys: []string{"k"}, Args: []any{3}},
	})
	if err == nil || cmds[0].Err() == nil {
		t.Fatal("a call without its key was sent")
	}
	if n, err := cmds[1].Int64(); err != nil || n != 3 {
		t.Fatalf("the valid call = %d, %v", n, err)
	}
}

// subscribeContract checks Subscribe on client. On a cluster PUBLISH counts
// only the subscribers of the node that ran it, so countReceivers is false
// there; the message itself reaches every node.
func subscribeContract(t *testing.T, client redis.UniversalClient, countReceivers bool, opts ...evalsha.Option) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reg := testRegistry(t)
	r := newRunner(t, client, opts...)
	pub := script(t, reg, "pub")
	var mu sync.Mutex
	got := map[string][]string{}
	recv := make(chan struct{}, 16)
	listen := func(ch string) func() {
		unsub, err := r.Subscribe(ctx, ch, func(p string) {
			mu.Lock()
			got[ch] = append(got[ch], p)
			mu.Unlock()
			select { // deliver must not block
			case recv <- struct{}{}:
			default:
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		return unsub
	}
	unsubA := listen("a")
	listen("b")
	// Subscribe returned: the server confirmed, so this publish cannot be
	// missed. On a cluster the message also crosses the cluster bus, whose
	// links in a cluster just formed may still be connecting, and Redis does
	// not queue messages for them: there the test publishes again until both
	// arrive (locks bound every wait by the lease for the same reason).
	publish := func() {
		if n, err := r.Run(ctx, pub, nil, "a", "hello").Int64(); err != nil || (countReceivers && n != 1) {
			t.Fatalf("PUBLISH a reached %d subscribers, %v; want 1 (one shared connection)", n, err)
		}
		r.Run(ctx, pub, nil, "b", "world")
	}
	publish()
	for delivered := func() bool { mu.Lock(); defer mu.Unlock(); return len(got["a"]) > 0 && len(got["b"]) > 0 }; !delivered(); {
		select {
		case <-recv:
		case <-time.After(200 * time.Millisecond):
			if !countReceivers {
				publish()
			}
		case <-ctx.Done():
			t.Fatal("messages not delivered")
		}
	}
	unsubA()
	unsubA() // idempotent
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, err := client.PubSubNumSub(ctx, "a").Result()
		if err == nil && n["a"] == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the last handler of channel a left but the server still has a subscriber")
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	for ch, want := range map[string]string{"a": "hello", "b": "world"} {
		for _, p := range got[ch] {
			if p != want {
				t.Fatalf("channel %s delivered %q; want only %q", ch, p, want)
			}
		}
		if countReceivers && len(got[ch]) != 1 {
			t.Fatalf("channel %s delivered %v; want exactly one message", ch, got[ch])
		}
	}
}

func TestSubscribeMiniredis(t *testing.T) {
	_, c := miniClient(t)
	subscribeContract(t, c, true)
}

func TestSubscribeRejectsBadInput(t *testing.T) {
	_, c := miniClient(t)
	r := newRunner(t, c)
	if _, err := r.Subscribe(context.Background(), "", func(string) {}); err == nil {
		t.Error("empty channel accepted")
	}
	if _, err := r.Subscribe(context.Background(), "x", nil); err == nil {
		t.Error("nil deliver accepted")
	}
}

// A subscription abandoned before its confirmation must not wedge the
// channel for the next subscriber, and Subscribe after Close is an error.
func TestSubscribeAfterCancelAndClose(t *testing.T) {
	_, c := miniClient(t)
	r, _ := evalsha.New(c)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Subscribe(cancelled, "ch", func(string) {}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled subscribe = %v", err)
	}
	ctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	unsub, err := r.Subscribe(ctx, "ch", func(string) {})
	if err != nil {
		t.Fatalf("subscribe after an abandoned one: %v", err)
	}
	unsub()
	r.Close()
	if _, err := r.Subscribe(ctx, "ch", func(string) {}); err == nil {
		t.Fatal("Subscribe after Close succeeded")
	}
	fresh, _ := evalsha.New(c)
	fresh.Close()
	if _, err := fresh.Subscribe(ctx, "ch", func(string) {}); err == nil {
		t.Fatal("Subscribe on a Runner closed before any subscription succeeded")
	}
}
