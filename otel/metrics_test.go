package otel_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/locks"
	"github.com/redlua/redlua/lua"
	redluaotel "github.com/redlua/redlua/otel"
	"github.com/redlua/redlua/registry"
	"github.com/redlua/redlua/simulate"
)

// collected is one ManualReader collection, by instrument name.
type collected map[string]metricdata.Aggregation

func collect(t *testing.T, r *sdkmetric.ManualReader) collected {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := collected{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

// sum adds up an int64 sum's data points.
func (c collected) sum(t *testing.T, name string) int64 {
	t.Helper()
	return c.sumWhere(t, name, "", "")
}

// sumWhere adds up the data points whose attribute key is value (all of
// them when key is empty).
func (c collected) sumWhere(t *testing.T, name, key, value string) int64 {
	t.Helper()
	s, ok := c[name].(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("%s: no int64 sum collected (got %T)", name, c[name])
	}
	var total int64
	for _, dp := range s.DataPoints {
		if v, _ := dp.Attributes.Value(attribute.Key(key)); key == "" || v.AsString() == value {
			total += dp.Value
		}
	}
	return total
}

func TestLockHook(t *testing.T) {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	m, err := redluaotel.New(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
		redluaotel.WithLockName(func(name string) string { kind, _, _ := strings.Cut(name, ":"); return kind }))
	if err != nil {
		t.Fatal(err)
	}
	srv := simulate.New()
	c, err := locks.NewWithBackend(srv, locks.WithHook(m.LockHook()))
	if err != nil {
		t.Fatal(err)
	}
	other, _ := locks.NewWithBackend(srv)
	mutex := func(c *locks.Client, name string) *locks.Mutex {
		mu, err := c.Mutex(name, locks.WithTTL(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		return mu
	}

	// Two plain acquisitions and releases.
	for range 2 {
		l, err := mutex(c, "invoice:1").Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// A contended TryLock, and a Lock that gives up.
	held, err := mutex(other, "invoice:2").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mutex(c, "invoice:2").TryLock(ctx); !errors.Is(err, locks.ErrNotAcquired) {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err = mutex(c, "invoice:2").Lock(short)
	cancel()
	if err == nil {
		t.Fatal("Lock on a held lock succeeded")
	}
	_ = held.Unlock(ctx)
	// A lost lease, and one still held.
	lost, err := mutex(c, "report:daily").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.ForceUnlock(ctx, "report:daily"); err != nil {
		t.Fatal(err)
	}
	if err := lost.Extend(ctx, 0); !errors.Is(err, locks.ErrLockLost) {
		t.Fatal(err)
	}
	if _, err := mutex(c, "report:weekly").Lock(ctx); err != nil {
		t.Fatal(err)
	}

	got := collect(t, reader)
	for _, tc := range []struct {
		name string
		want int64
	}{
		{"redlua.lock.acquisitions", 4},
		{"redlua.lock.releases", 2},
		{"redlua.lock.contentions", 2}, // the TryLock and the Lock that gave up
		{"redlua.lock.wait_failures", 1},
		{"redlua.lock.lost", 1},
		{"redlua.lock.held", 1},
	} {
		if n := got.sum(t, tc.name); n != tc.want {
			t.Errorf("%s = %d, want %d", tc.name, n, tc.want)
		}
	}
	if n := got.sumWhere(t, "redlua.lock.acquisitions", "lock", "report"); n != 2 {
		t.Errorf("acquisitions with lock=report = %d, want 2", n)
	}
	hist, ok := got["redlua.lock.wait"].(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("redlua.lock.wait is %T, want a float64 histogram", got["redlua.lock.wait"])
	}
	outcomes := map[string]uint64{}
	for _, dp := range hist.DataPoints {
		v, _ := dp.Attributes.Value("outcome")
		outcomes[v.AsString()] += dp.Count
	}
	if outcomes["acquired"] != 4 || outcomes["failed"] != 1 {
		t.Errorf("wait histogram counts = %v, want acquired 4, failed 1", outcomes)
	}
	// The Lock that gave up queued first in line; the TryLock did not queue.
	places, ok := got["redlua.lock.queue_place"].(metricdata.Histogram[int64])
	if !ok {
		t.Fatalf("redlua.lock.queue_place is %T, want an int64 histogram", got["redlua.lock.queue_place"])
	}
	var count uint64
	var sum int64
	for _, dp := range places.DataPoints {
		count, sum = count+dp.Count, sum+dp.Sum
	}
	if count != 1 || sum != 1 {
		t.Errorf("queue place histogram: %d records summing to %d, want 1 record of place 1", count, sum)
	}
}

func TestScriptMetrics(t *testing.T) {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	m, err := redluaotel.New(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	if err != nil {
		t.Fatal(err)
	}
	mr := miniredis.RunT(t)
	rc := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { rc.Close() })
	runner, err := evalsha.New(rc, evalsha.WithHook(m.ScriptHook()))
	if err != nil {
		t.Fatal(err)
	}
	reg, err := m.ObserveRunner(runner)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Unregister()
	scripts, err := registry.New(lua.FS)
	if err != nil {
		t.Fatal(err)
	}
	inspect, err := scripts.Lookup("lock.inspect@3")
	if err != nil {
		t.Fatal(err)
	}
	// Nothing is loaded: the first call comes back NOSCRIPT and is re-sent.
	for range 3 {
		if err := runner.Run(ctx, inspect, []string{"{a}", "{a}:queue", "{a}:squeue"}, "0", 100).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// A call with too few keys fails.
	_ = runner.Run(ctx, inspect, nil).Err()

	got := collect(t, reader)
	st := runner.Stats()
	if n := got.sum(t, "redlua.script.calls"); n != 4 || n != int64(st.Calls) {
		t.Errorf("redlua.script.calls = %d, want 4 (Stats: %+v)", n, st)
	}
	if n := got.sum(t, "redlua.script.noscript"); n < 1 || n != int64(st.NoScript) {
		t.Errorf("redlua.script.noscript = %d, want the Runner's %d (at least 1)", n, st.NoScript)
	}
	if n := got.sum(t, "redlua.script.failures"); n != 1 {
		t.Errorf("redlua.script.failures = %d, want 1", n)
	}
	if n := got.sumWhere(t, "redlua.script.events", "event", "noscript"); n != int64(st.NoScript) {
		t.Errorf("noscript events = %d, want %d", n, st.NoScript)
	}
	if n := got.sumWhere(t, "redlua.script.events", "script", "lock.inspect@3"); n < 2 {
		t.Errorf("events for lock.inspect@3 = %d, want the fallback and the failure", n)
	}
}

func TestBadInput(t *testing.T) {
	if _, err := redluaotel.New(nil); err == nil || !strings.Contains(err.Error(), "MeterProvider") {
		t.Errorf("New(nil) = %v", err)
	}
	mp := sdkmetric.NewMeterProvider()
	if _, err := redluaotel.New(mp, redluaotel.WithLockName(nil)); err == nil || !strings.Contains(err.Error(), "WithLockName") {
		t.Errorf("WithLockName(nil) = %v", err)
	}
	if _, err := redluaotel.New(mp, nil); err == nil {
		t.Error("a nil Option was accepted")
	}
	m, err := redluaotel.New(mp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.ObserveRunner(nil); err == nil {
		t.Error("ObserveRunner(nil) was accepted")
	}
}

// The core module must not depend on OpenTelemetry: only this module does.
func TestCoreModuleHasNoOpenTelemetry(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	cmd := exec.Command("go", "list", "-deps", "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./... in the core module: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.Contains(pkg, "opentelemetry") {
			t.Errorf("the core module depends on %s", pkg)
		}
	}
}
