package otel_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/locks"
	redluaotel "github.com/redlua/redlua/otel"
	"github.com/redlua/redlua/simulate"
)

// Wire the metrics into a locks Client: its Runner's hook and counters,
// and the locks hook. In a program, pass otel.GetMeterProvider() instead of
// the SDK provider this example reads back.
func Example() {
	reader := sdkmetric.NewManualReader()
	metrics, _ := redluaotel.New(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
		// "invoice:42" -> lock="invoice": a bounded set of attribute values.
		redluaotel.WithLockName(func(name string) string { kind, _, _ := strings.Cut(name, ":"); return kind }))

	mr, _ := miniredis.Run()
	defer mr.Close()
	rc := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rc.Close()
	runner, _ := evalsha.New(rc, evalsha.WithHook(metrics.ScriptHook()))
	reg, _ := metrics.ObserveRunner(runner)
	defer reg.Unregister()
	c, _ := locks.NewWithBackend(runner, locks.WithHook(metrics.LockHook()))

	ctx := context.Background()
	m, _ := c.Mutex("invoice:42")
	lease, _ := m.Lock(ctx)
	_ = lease.Unlock(ctx)

	var rm metricdata.ResourceMetrics
	_ = reader.Collect(ctx, &rm)
	for _, metric := range rm.ScopeMetrics[0].Metrics {
		if sum, ok := metric.Data.(metricdata.Sum[int64]); ok && strings.HasPrefix(metric.Name, "redlua.lock.") {
			fmt.Println(metric.Name, sum.DataPoints[0].Value)
		}
	}
	// Output:
	// redlua.lock.acquisitions 1
	// redlua.lock.releases 1
	// redlua.lock.held 0
}

// Trace lock calls: each Lock and Unlock becomes a span, a child of the
// caller's span. In a program, pass otel.GetTracerProvider().
func ExampleTracing() {
	rec := tracetest.NewSpanRecorder()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tracing, _ := redluaotel.NewTracing(provider)
	c, _ := locks.NewWithBackend(simulate.New(), locks.WithHook(tracing.LockHook()))
	defer c.Close()

	ctx, request := provider.Tracer("app").Start(context.Background(), "request")
	m, _ := c.Mutex("invoice:42")
	_ = m.Do(ctx, func(ctx context.Context, lease *locks.Lease) error { return nil })
	request.End()

	for _, s := range rec.Ended() {
		fmt.Println(s.Name(), s.Parent().SpanID() == request.SpanContext().SpanID())
	}
	// Output:
	// redlua.lock true
	// redlua.unlock true
	// request false
}
