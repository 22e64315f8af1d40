// Package otel reports redlua's locks and script calls as OpenTelemetry
// metrics, and traces lock calls (Tracing: a span per Lock and Unlock, in
// the caller's trace, from the times and context locks.Event carries). It is a module of its own (github.com/redlua/redlua/otel), so
// programs that do not use OpenTelemetry do not depend on it.
//
// Metrics.LockHook is a locks hook (locks.WithHook) and Metrics.ScriptHook an
// evalsha hook (evalsha.WithHook); Metrics.ObserveRunner reads a Runner's
// counters at each collection. The instruments:
//
//	redlua.lock.acquisitions      counter    leases taken
//	redlua.lock.wait              histogram  seconds spent in Lock (outcome=acquired|failed)
//	redlua.lock.contentions       counter    attempts that found the lock held
//	redlua.lock.queue_place       histogram  place in the queue a Lock call was given (1: next)
//	redlua.lock.wait_failures     counter    Lock calls that gave up
//	redlua.lock.renewal_failures  counter    watchdog renewals that failed
//	redlua.lock.lost              counter    leases lost before Unlock
//	redlua.lock.releases          counter    leases released by Unlock
//	redlua.lock.held              updown     leases held now, by this process
//	redlua.script.calls           counter    script calls (ObserveRunner)
//	redlua.script.noscript        counter    NOSCRIPT fallbacks: the source was re-sent (ObserveRunner)
//	redlua.script.failures        counter    calls that failed (ObserveRunner)
//	redlua.script.events          counter    per script: event=noscript|legacy_server|no_readonly|error (ScriptHook)
//
// Lock names are often unbounded ("invoice:42"), so lock metrics carry no
// lock name unless WithLockName maps names to a bounded set.
package otel
