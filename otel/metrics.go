package otel

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/redlua/redlua/evalsha"
	"github.com/redlua/redlua/locks"
)

// ScopeName is the instrumentation scope of the Meter that Metrics uses.
const ScopeName = "github.com/redlua/redlua/otel"

// Option configures Metrics.
type Option func(*config) error

type config struct {
	lockName func(string) string
}

// WithLockName adds the attribute lock=f(name) to lock metrics. f must map
// the unbounded set of lock names to a small one, such as "invoice:42" to
// "invoice"; an empty result leaves the attribute out.
func WithLockName(f func(name string) string) Option {
	return func(c *config) error {
		if f == nil {
			return errors.New("otel: WithLockName needs a function, got nil; leave the option out for no lock attribute")
		}
		c.lockName = f
		return nil
	}
}

// Metrics holds the instruments. Its hooks are safe for concurrent use.
type Metrics struct {
	cfg config

	acquisitions, contentions, waitFailures metric.Int64Counter
	renewFailures, lost, releases           metric.Int64Counter
	held                                    metric.Int64UpDownCounter
	wait                                    metric.Float64Histogram
	queuePlace                              metric.Int64Histogram
	scriptEvents                            metric.Int64Counter

	meter metric.Meter
}

// New creates the instruments on a Meter of provider (for example
// otel.GetMeterProvider(), or an SDK MeterProvider).
func New(provider metric.MeterProvider, opts ...Option) (*Metrics, error) {
	if provider == nil {
		return nil, errors.New("otel: New needs a MeterProvider, such as otel.GetMeterProvider(); got nil")
	}
	m := &Metrics{meter: provider.Meter(ScopeName)}
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("otel: New got a nil Option")
		}
		if err := o(&m.cfg); err != nil {
			return nil, err
		}
	}
	var errs []error
	counter := func(name, desc string) metric.Int64Counter {
		c, err := m.meter.Int64Counter(name, metric.WithDescription(desc), metric.WithUnit("{"+unitOf(name)+"}"))
		errs = append(errs, err)
		return c
	}
	m.acquisitions = counter("redlua.lock.acquisitions", "Leases taken")
	m.contentions = counter("redlua.lock.contentions", "Lock attempts that found the lock held by another owner")
	m.waitFailures = counter("redlua.lock.wait_failures", "Lock calls that gave up (context ended, server error)")
	m.renewFailures = counter("redlua.lock.renewal_failures", "Watchdog renewals that failed; they are retried until the lease would run out")
	m.lost = counter("redlua.lock.lost", "Leases lost before Unlock: expired or taken by another owner")
	m.releases = counter("redlua.lock.releases", "Leases released by Unlock")
	m.scriptEvents = counter("redlua.script.events", "Script calls beyond a plain EVALSHA, by script and event")
	var err error
	m.held, err = m.meter.Int64UpDownCounter("redlua.lock.held", metric.WithDescription("Leases this process holds now"), metric.WithUnit("{lease}"))
	errs = append(errs, err)
	m.wait, err = m.meter.Float64Histogram("redlua.lock.wait", metric.WithDescription("Time spent in Lock until the lease was taken or the wait gave up"), metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60))
	errs = append(errs, err)
	m.queuePlace, err = m.meter.Int64Histogram("redlua.lock.queue_place", metric.WithDescription("Place in the lock's queue a Lock call was given when it found the lock held (1: next in line)"), metric.WithUnit("{waiter}"),
		metric.WithExplicitBucketBoundaries(1, 2, 5, 10, 20, 50, 100, 500, 1000))
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("otel: creating instruments: %w", err)
	}
	return m, nil
}

func unitOf(name string) string {
	switch name {
	case "redlua.lock.acquisitions", "redlua.lock.lost", "redlua.lock.releases":
		return "lease"
	case "redlua.script.events":
		return "call"
	}
	return "attempt"
}

// LockHook returns the hook to pass to locks.WithHook (on the Client, so
// every lock it makes is counted).
func (m *Metrics) LockHook() func(locks.Event) {
	return func(e locks.Event) {
		ctx := context.Background()
		opt := m.lockAttrs(e.Name)
		switch e.Kind {
		case locks.EventAcquired:
			m.acquisitions.Add(ctx, 1, opt)
			m.held.Add(ctx, 1, opt)
			m.wait.Record(ctx, e.Wait.Seconds(), m.lockAttrs(e.Name, attribute.String("outcome", "acquired")))
		case locks.EventWaitFailed:
			m.waitFailures.Add(ctx, 1, opt)
			m.wait.Record(ctx, e.Wait.Seconds(), m.lockAttrs(e.Name, attribute.String("outcome", "failed")))
		case locks.EventContended:
			m.contentions.Add(ctx, 1, opt)
			if e.Position > 0 { // 0: the attempt did not queue (TryLock, other kinds)
				m.queuePlace.Record(ctx, e.Position, opt)
			}
		case locks.EventRenewFailed:
			m.renewFailures.Add(ctx, 1, opt)
		case locks.EventLost:
			m.lost.Add(ctx, 1, opt)
			m.held.Add(ctx, -1, opt)
		case locks.EventReleased:
			m.releases.Add(ctx, 1, opt)
			m.held.Add(ctx, -1, opt)
		}
	}
}

func (m *Metrics) lockAttrs(name string, extra ...attribute.KeyValue) metric.MeasurementOption {
	if m.cfg.lockName != nil {
		if v := m.cfg.lockName(name); v != "" {
			extra = append(extra, attribute.String("lock", v))
		}
	}
	return metric.WithAttributes(extra...)
}

// ScriptHook returns the hook to pass to evalsha.WithHook: it counts
// NOSCRIPT fallbacks, downgrades and errors per script (name@version).
func (m *Metrics) ScriptHook() func(evalsha.Event) {
	return func(e evalsha.Event) {
		script := "unknown"
		if e.Script != nil {
			script = e.Script.ID()
		}
		m.scriptEvents.Add(context.Background(), 1, metric.WithAttributes(
			attribute.String("script", script), attribute.String("event", scriptEventName(e.Kind))))
	}
}

func scriptEventName(k evalsha.EventKind) string {
	switch k {
	case evalsha.EventNoScript:
		return "noscript"
	case evalsha.EventLegacyServer:
		return "legacy_server"
	case evalsha.EventNoReadOnlyCommands:
		return "no_readonly"
	case evalsha.EventError:
		return "error"
	}
	return fmt.Sprintf("kind_%d", int(k))
}

// ObserveRunner reports r's counters (script calls, NOSCRIPT fallbacks,
// failures) at every collection. Unregister the returned registration when
// the Runner is closed.
func (m *Metrics) ObserveRunner(r *evalsha.Runner) (metric.Registration, error) {
	if r == nil {
		return nil, errors.New("otel: ObserveRunner needs an *evalsha.Runner, got nil")
	}
	calls, err1 := m.meter.Int64ObservableCounter("redlua.script.calls", metric.WithDescription("Script calls made"), metric.WithUnit("{call}"))
	noScript, err2 := m.meter.Int64ObservableCounter("redlua.script.noscript", metric.WithDescription("Calls that came back NOSCRIPT and were re-sent with the source"), metric.WithUnit("{call}"))
	failures, err3 := m.meter.Int64ObservableCounter("redlua.script.failures", metric.WithDescription("Calls that ended in an error other than a nil reply"), metric.WithUnit("{call}"))
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, fmt.Errorf("otel: creating instruments: %w", err)
	}
	reg, err := m.meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		s := r.Stats()
		o.ObserveInt64(calls, int64(s.Calls))
		o.ObserveInt64(noScript, int64(s.NoScript))
		o.ObserveInt64(failures, int64(s.Failures))
		return nil
	}, calls, noScript, failures)
	if err != nil {
		return nil, fmt.Errorf("otel: registering the Runner callback: %w", err)
	}
	return reg, nil
}
