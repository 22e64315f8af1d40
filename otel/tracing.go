package otel

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/redlua/redlua/locks"
)

// Span names and attributes of Tracing.
const (
	// SpanLock is the span of a Lock, TryLock, RLock, TryRLock, Acquire or
	// TryAcquire call that took the lock or gave up: from the call's start,
	// so it covers the wait, to its end.
	SpanLock = "redlua.lock"
	// SpanUnlock is the span of an Unlock call.
	SpanUnlock = "redlua.unlock"
)

// Tracing records lock calls as spans in the caller's trace. Its hook is
// safe for concurrent use.
type Tracing struct {
	cfg    config
	tracer trace.Tracer
}

// NewTracing returns Tracing on a Tracer of provider (for example
// otel.GetTracerProvider(), or an SDK TracerProvider). WithLockName, when
// given, maps the lock name that spans carry; without it they carry the
// name itself (a trace, unlike a metric, is not aggregated by attribute).
func NewTracing(provider trace.TracerProvider, opts ...Option) (*Tracing, error) {
	if provider == nil {
		return nil, errors.New("otel: NewTracing needs a TracerProvider, such as otel.GetTracerProvider(); got nil")
	}
	t := &Tracing{tracer: provider.Tracer(ScopeName)}
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("otel: NewTracing: option %d is nil", i+1)
		}
		if err := o(&t.cfg); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// LockHook returns the hook to pass to locks.WithHook (on the Client, so
// that every lock it makes is traced). Each event that ends a call
// (locks.Event.Context set) becomes a span, a child of the span in the
// call's context, from Event.Start to Event.Time:
//
//	redlua.lock    EventAcquired (outcome=acquired, the fencing token)
//	               EventWaitFailed (outcome=failed, status error)
//	redlua.unlock  EventReleased (outcome=released)
//	               EventLost of an Unlock that could not release
//	               (outcome=not_released, status error)
//
// with the attributes redlua.lock.name, redlua.lock.outcome,
// redlua.lock.wait_seconds (a lock span's time waiting) and
// redlua.lock.fencing_token. Events of no call (contention, renewal
// failures, a lease lost in the background) make no span: Metrics counts
// them.
func (t *Tracing) LockHook() func(locks.Event) {
	return func(e locks.Event) {
		if e.Context == nil {
			return
		}
		name, outcome := SpanLock, ""
		switch e.Kind {
		case locks.EventAcquired:
			outcome = "acquired"
		case locks.EventWaitFailed:
			outcome = "failed"
		case locks.EventReleased:
			name, outcome = SpanUnlock, "released"
		case locks.EventLost:
			name, outcome = SpanUnlock, "not_released"
		default:
			return
		}
		attrs := []attribute.KeyValue{
			attribute.String("redlua.lock.name", t.lockName(e.Name)),
			attribute.String("redlua.lock.outcome", outcome),
		}
		if name == SpanLock {
			attrs = append(attrs, attribute.Float64("redlua.lock.wait_seconds", e.Wait.Seconds()))
		}
		if e.Token != 0 {
			attrs = append(attrs, attribute.Int64("redlua.lock.fencing_token", e.Token))
		}
		_, span := t.tracer.Start(e.Context, name, trace.WithTimestamp(e.Start), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
		if e.Err != nil {
			span.RecordError(e.Err, trace.WithTimestamp(e.Time))
			span.SetStatus(codes.Error, e.Err.Error())
		}
		span.End(trace.WithTimestamp(e.Time))
	}
}

func (t *Tracing) lockName(name string) string {
	if t.cfg.lockName != nil {
		return t.cfg.lockName(name)
	}
	return name
}
