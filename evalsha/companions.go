package evalsha

import (
	"context"
	"errors"
	"time"

	"github.com/redlua/redlua/registry"
)

// companionLoadTimeout bounds the background load of a Runner's companion
// scripts.
const companionLoadTimeout = 10 * time.Second

// WithCompanions names scripts that belong together with the ones this
// Runner's callers run first, such as every script of a lock library. When a
// call meets NOSCRIPT (a cold start, a restarted server, SCRIPT FLUSH), the
// Runner re-sends that call with its source as always and, in the
// background, loads every companion on every node (one pipelined round trip
// per node). The server then holds the whole set after the first use of any
// of it, so `redlua scripts verify --loaded` finds them all and the first
// call of each other script needs no second round trip. A failed background
// load costs nothing but that round trip: each script still loads on its
// own first NOSCRIPT.
func WithCompanions(scripts ...*registry.Script) Option {
	return func(r *Runner) {
		for _, s := range scripts {
			if s == nil {
				r.setOptErr(errNilCompanion)
				return
			}
		}
		r.companions = append(r.companions, scripts...)
	}
}

var errNilCompanion = errors.New("evalsha: WithCompanions was given a nil script; pass scripts from a registry (reg.Lookup)")

// loadCompanions starts the background load of the companion scripts,
// unless one is under way. Close waits for it.
func (r *Runner) loadCompanions() {
	if len(r.companions) == 0 || !r.companionsLoading.CompareAndSwap(false, true) {
		return
	}
	r.backgroundMu.Lock()
	defer r.backgroundMu.Unlock()
	if r.closed {
		r.companionsLoading.Store(false)
		return
	}
	r.background.Add(1)
	go func() {
		defer r.background.Done()
		defer r.companionsLoading.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), companionLoadTimeout)
		defer cancel()
		if err := loadAll(ctx, r.client, r.companions); err != nil {
			r.emit(Event{Kind: EventCompanionLoadFailed, Err: err})
		}
	}()
}
