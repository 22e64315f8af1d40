package otel_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/redlua/redlua/locks"
	redluaotel "github.com/redlua/redlua/otel"
	"github.com/redlua/redlua/simulate"
)

// Lock and Unlock calls become spans in the caller's trace (children of
// the caller's span), spanning the call, with the outcome, the wait and
// the fencing token; a Lock that gave up is an error span.
func TestTracingSpansJoinTheCallersTrace(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tracing, err := redluaotel.NewTracing(provider)
	if err != nil {
		t.Fatal(err)
	}
	c, err := locks.NewWithBackend(simulate.New(), locks.WithHook(tracing.LockHook()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ctx, parent := provider.Tracer("test").Start(ctx, "request")
	m, _ := c.Mutex("invoice:42")
	lease, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	gone, stop := context.WithCancel(ctx)
	stop()
	if _, err := m.Lock(gone); err == nil {
		t.Fatal("Lock with a cancelled context succeeded")
	}
	if err := lease.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	parent.End()

	type want struct {
		name, outcome string
		failed        bool
	}
	wants := []want{{redluaotel.SpanLock, "acquired", false}, {redluaotel.SpanLock, "failed", true}, {redluaotel.SpanUnlock, "released", false}}
	spans := rec.Ended()
	if len(spans) != len(wants)+1 {
		t.Fatalf("%d spans ended, want %d (the lock calls and the request)", len(spans), len(wants)+1)
	}
	for i, w := range wants {
		s := spans[i]
		attrs := map[attribute.Key]attribute.Value{}
		for _, kv := range s.Attributes() {
			attrs[kv.Key] = kv.Value
		}
		if s.Name() != w.name || attrs["redlua.lock.outcome"].AsString() != w.outcome || attrs["redlua.lock.name"].AsString() != "invoice:42" {
			t.Errorf("span %d: %s %v, want %s with outcome %s", i, s.Name(), s.Attributes(), w.name, w.outcome)
		}
		if s.Parent().SpanID() != parent.SpanContext().SpanID() || s.SpanContext().TraceID() != parent.SpanContext().TraceID() {
			t.Errorf("span %d (%s) is not a child of the caller's span", i, s.Name())
		}
		if s.EndTime().Before(s.StartTime()) || s.StartTime().IsZero() {
			t.Errorf("span %d (%s) runs from %v to %v", i, s.Name(), s.StartTime(), s.EndTime())
		}
		if failed := s.Status().Code == codes.Error; failed != w.failed {
			t.Errorf("span %d (%s): status %v, want an error %v", i, s.Name(), s.Status(), w.failed)
		}
	}
	if tok := spans[0].Attributes(); !hasAttr(tok, "redlua.lock.fencing_token", lease.Token()) {
		t.Errorf("the acquiring span's attributes %v lack the fencing token %d", tok, lease.Token())
	}
}

func hasAttr(attrs []attribute.KeyValue, key string, v int64) bool {
	for _, kv := range attrs {
		if string(kv.Key) == key && kv.Value.AsInt64() == v {
			return true
		}
	}
	return false
}

func TestNewTracingRefusesNil(t *testing.T) {
	if _, err := redluaotel.NewTracing(nil); err == nil {
		t.Error("NewTracing(nil) succeeded")
	}
	if _, err := redluaotel.NewTracing(sdktrace.NewTracerProvider(), nil); err == nil {
		t.Error("NewTracing with a nil option succeeded")
	}
}
