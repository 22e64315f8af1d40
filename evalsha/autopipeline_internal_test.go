package evalsha

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/registry"
)

// gate is a go-redis hook that holds the first single command until opened,
// and records the size of every pipeline.
type gate struct {
	open      chan struct{}
	first     atomic.Bool
	mu        sync.Mutex
	pipelines []int
}

func (g *gate) DialHook(next redis.DialHook) redis.DialHook { return next }

func (g *gate) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if isScriptCmd(cmd) && g.first.CompareAndSwap(false, true) {
			<-g.open
		}
		return next(ctx, cmd)
	}
}

func (g *gate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) == 0 || !isScriptCmd(cmds[0]) {
			return next(ctx, cmds) // go-redis's connection set-up (HELLO, CLIENT SETINFO)
		}
		g.mu.Lock()
		g.pipelines = append(g.pipelines, len(cmds))
		g.mu.Unlock()
		return next(ctx, cmds)
	}
}

func isScriptCmd(cmd redis.Cmder) bool {
	switch cmd.Name() {
	case "evalsha", "eval", "evalsha_ro", "eval_ro":
		return true
	}
	return false
}

func (g *gate) sizes() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]int(nil), g.pipelines...)
}

func gatedRunner(t *testing.T, opts ...Option) (*Runner, *gate, *registry.Registry) {
	t.Helper()
	mr := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { c.Close() })
	g := &gate{open: make(chan struct{})}
	c.AddHook(g)
	r, err := New(c, opts...)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(os.DirFS("testdata"))
	if err != nil {
		t.Fatal(err)
	}
	return r, g, reg
}

// waitQueued waits until n calls sit in r's queue.
func waitQueued(t *testing.T, r *Runner, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.batch.mu.Lock()
		got := len(r.batch.queue)
		r.batch.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d calls queued after 10s, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// Calls that arrive while the slot is taken go out together as one
// pipeline, NOSCRIPT fallback included, each caller getting its own reply.
func TestAutoPipeliningBatchesQueuedCalls(t *testing.T) {
	r, g, reg := gatedRunner(t, WithAutoPipelining(1))
	ctx := context.Background()
	incr, _ := reg.Get("counter.incr")
	fail, _ := reg.Get("echo.fail")

	pub, _ := reg.Get("pub")
	lone := make(chan *redis.Cmd, 1)
	go func() { lone <- r.Run(ctx, pub, nil, "ch", "x") }() // held by the gate
	waitFirst(t, g)
	const n = 10
	results := make([]*redis.Cmd, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == 3 {
				results[i] = r.Run(ctx, fail, []string{"k"}, "boom")
				return
			}
			results[i] = r.Run(ctx, incr, []string{"n"}, 1)
		}()
	}
	waitQueued(t, r, n)
	close(g.open)
	wg.Wait()
	if v, err := (<-lone).Int64(); err != nil || v != 0 {
		t.Fatalf("lone call = %d, %v", v, err)
	}
	seen := map[int64]bool{}
	for i, cmd := range results {
		if i == 3 {
			var se *ScriptError
			if !errors.As(cmd.Err(), &se) || se.Script != "echo.fail@1" {
				t.Fatalf("the failing call in the batch = %v; want its own *ScriptError", cmd.Err())
			}
			continue
		}
		v, err := cmd.Int64()
		if err != nil || seen[v] {
			t.Fatalf("call %d = %d, %v (values so far %v)", i, v, err, seen)
		}
		seen[v] = true
	}
	// Cold cache: the batch of 10 came back NOSCRIPT and went out again as
	// 10 EVALs, in a second pipeline.
	if sizes := g.sizes(); len(sizes) != 2 || sizes[0] != n || sizes[1] != n {
		t.Errorf("pipelines of sizes %v; want [%d %d] (EVALSHA batch, then its EVAL fallback)", sizes, n, n)
	}
	if s := r.Stats(); s.Calls != n+1 || s.NoScript != n+1 {
		t.Errorf("stats %+v", s)
	}
}

func waitFirst(t *testing.T, g *gate) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !g.first.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the first call never reached the client")
		}
		time.Sleep(time.Millisecond)
	}
}

// A queued caller whose context ends returns at once with its context's
// error; its call is never sent and the others are unaffected.
func TestAutoPipeliningCancelledCaller(t *testing.T) {
	r, g, reg := gatedRunner(t, WithAutoPipelining(1))
	ctx := context.Background()
	incr, _ := reg.Get("counter.incr")
	go r.Run(ctx, incr, []string{"lone"}, 1)
	waitFirst(t, g)

	var wg sync.WaitGroup
	others := make([]*redis.Cmd, 3)
	for i := range others {
		wg.Add(1)
		go func() { defer wg.Done(); others[i] = r.Run(ctx, incr, []string{"n"}, 1) }()
	}
	waitQueued(t, r, 3)
	cctx, cancel := context.WithCancel(ctx)
	gone := make(chan error, 1)
	go func() { gone <- r.Run(cctx, incr, []string{"n"}, 100).Err() }()
	waitQueued(t, r, 4)
	cancel()
	err := <-gone // returns while the slot is still held
	var se *ScriptError
	if !errors.Is(err, context.Canceled) || !errors.As(err, &se) || se.Script != "counter.incr@1" {
		t.Fatalf("cancelled caller = %v; want a *ScriptError wrapping context.Canceled", err)
	}
	close(g.open)
	wg.Wait()
	for i, cmd := range others {
		if err := cmd.Err(); err != nil {
			t.Fatalf("caller %d failed with another's cancellation: %v", i, err)
		}
	}
	if v, err := r.client.Get(ctx, "n").Int64(); err != nil || v != 3 {
		t.Fatalf("n = %d, %v; want 3 (the cancelled call was sent anyway)", v, err)
	}
	if sizes := g.sizes(); len(sizes) == 0 || sizes[0] != 3 {
		t.Errorf("pipelines %v; want the first of the 3 calls still waiting", sizes)
	}
}

// Without auto-pipelining every call goes out on its own.
func TestWithoutAutoPipelining(t *testing.T) {
	r, g, reg := gatedRunner(t, WithoutAutoPipelining())
	close(g.open)
	incr, _ := reg.Get("counter.incr")
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); r.Run(context.Background(), incr, []string{"n"}, 1) }()
	}
	wg.Wait()
	if sizes := g.sizes(); len(sizes) != 0 {
		t.Errorf("pipelines %v without auto-pipelining", sizes)
	}
}

func TestWithAutoPipeliningRejectsZero(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", Dialer: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no dialing in this test")
	}})
	defer c.Close()
	if _, err := New(c, WithAutoPipelining(0)); err == nil {
		t.Error("WithAutoPipelining(0) accepted")
	}
	if _, err := New(c, nil); err == nil {
		t.Error("a nil Option accepted")
	}
}
