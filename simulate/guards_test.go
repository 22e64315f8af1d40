package simulate

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redlua/redlua/internal/ctxcheck"
	"github.com/redlua/redlua/internal/testscripts"
	"github.com/redlua/redlua/registry"
)

// TestContextsAreCheckedEverywhere runs every exported call of simulate
// that takes a context with a nil context and with a cancelled one: each
// returns an error that says which (the nil one names the fix, the
// cancelled one wraps context.Canceled), nothing panics, and the server
// answers afterwards. It runs them on nil and zero receivers too.
func TestContextsAreCheckedEverywhere(t *testing.T) {
	reg, err := registry.New(testscripts.FS)
	if err != nil {
		t.Fatal(err)
	}
	script, err := reg.Lookup("mutex.release@1")
	if err != nil {
		t.Fatal(err)
	}
	keys, args := []string{"{g}:lock"}, []any{"token", "{g}:released"}
	srv := New()
	fr, err := NewFunctionRunner(srv, reg)
	if err != nil {
		t.Fatal(err)
	}
	deliver := func(string) {}
	table := map[string]func(ctx context.Context, s *Server, f *FunctionRunner) error{
		"Server.Do": func(ctx context.Context, s *Server, _ *FunctionRunner) error {
			return s.Do(ctx, "SET", "{g}:k", "v").Err()
		},
		"Server.DoReply": func(ctx context.Context, s *Server, _ *FunctionRunner) error {
			_, err := s.DoReply(ctx, "GET", "{g}:k")
			return err
		},
		"Server.Run": func(ctx context.Context, s *Server, _ *FunctionRunner) error {
			return s.Run(ctx, script, keys, args...).Err()
		},
		"Server.RunReply": func(ctx context.Context, s *Server, _ *FunctionRunner) error {
			_, err := s.RunReply(ctx, script, keys, args...)
			return err
		},
		"Server.RunSource": func(ctx context.Context, s *Server, _ *FunctionRunner) error {
			return s.RunSource(ctx, "return 1", nil).Err()
		},
		"Server.Subscribe": func(ctx context.Context, s *Server, _ *FunctionRunner) error {
			_, err := s.Subscribe(ctx, "{g}:released", deliver)
			return err
		},
		"Server.SubscribeClassic": func(ctx context.Context, s *Server, _ *FunctionRunner) error {
			_, err := s.SubscribeClassic(ctx, "redlua:revoke:g", deliver)
			return err
		},
		"Server.SSubscribe": func(ctx context.Context, s *Server, _ *FunctionRunner) error {
			_, err := s.SSubscribe(ctx, "{g}:released", deliver)
			return err
		},
		"FunctionRunner.Run": func(ctx context.Context, _ *Server, f *FunctionRunner) error {
			return f.Run(ctx, script, keys, args...).Err()
		},
		"FunctionRunner.Subscribe": func(ctx context.Context, _ *Server, f *FunctionRunner) error {
			_, err := f.Subscribe(ctx, "{g}:released", deliver)
			return err
		},
	}
	bound := make(map[string]func(context.Context) error, len(table))
	for name, call := range table {
		bound[name] = func(ctx context.Context) error { return call(ctx, srv, fr) }
	}
	ctxcheck.Check(t, ".", bound)
	for _, name := range slices.Sorted(maps.Keys(table)) {
		call := table[name]
		for _, recv := range []struct {
			what string
			s    *Server
			f    *FunctionRunner
		}{
			{"a nil receiver", nil, nil},
			{"a zero receiver", &Server{}, &FunctionRunner{}},
		} {
			err := ctxcheck.NoPanic(name, func() error { return call(context.Background(), recv.s, recv.f) })
			if err == nil || !strings.Contains(err.Error(), "was not made by") {
				t.Errorf("%s on %s = %v, want an error saying how to make one", name, recv.what, err)
			}
		}
		if got, err := srv.Do(context.Background(), "PING").Text(); err != nil || got != "PONG" {
			t.Fatalf("after %s the server answers PING with %q, %v", name, got, err)
		}
	}
	var nilServer *Server
	if nilServer.Clock() != nil || nilServer.Dump() != nil || (*FunctionRunner)(nil).Library() != nil {
		t.Error("the accessors of a nil Server or FunctionRunner report something")
	}
}

// TestNilReceiversDoNotPanic calls the methods that return no error on nil
// and zero receivers and with nil arguments: they answer as for an empty
// server, keyspace or snapshot.
func TestNilReceiversDoNotPanic(t *testing.T) {
	var (
		s     *Server
		ks    *Keyspace
		sn    *Snapshot
		d     *Delta
		vc    *VirtualClock
		now   = time.Unix(1700000000, 0)
		calls = map[string]func(){
			"Server.Trace":                          func() { _ = s.Trace() },
			"Server.Logs":                           func() { _ = s.Logs() },
			"Server.ResetTrace":                     func() { s.ResetTrace() },
			"Server.Snapshot":                       func() { _ = s.Snapshot() },
			"Server.Restore":                        func() { s.Restore(nil) },
			"Server.ReplyOrder":                     func() { _ = s.ReplyOrder("KEYS", "*") },
			"Server.Dump":                           func() { _ = s.Dump() },
			"Server.Clock":                          func() { _ = s.Clock() },
			"zero Server.Snapshot":                  func() { _ = (&Server{}).Snapshot() },
			"New().Restore(nil)":                    func() { New().Restore(nil) },
			"New(nil option)":                       func() { _ = New(nil) },
			"New(WithClock(nil VirtualClock)).Dump": func() { _ = New(WithClock(vc)).Dump() },
			"Keyspace.Exec":                         func() { _ = ks.Exec(&CallContext{}, []string{"GET", "k"}) },
			"Keyspace.Exec(nil CallContext)":        func() { _ = NewKeyspace().Exec(nil, []string{"GET", "k"}) },
			"Keyspace.Dump":                         func() { _ = ks.Dump(now) },
			"Keyspace.FlushAll":                     func() { ks.FlushAll() },
			"Snapshot.Len":                          func() { _ = sn.Len() },
			"Snapshot.AppendCanonical":              func() { _ = sn.AppendCanonical(nil) },
			"Snapshot.Live":                         func() { _ = sn.Live(now) },
			"Snapshot.Dump":                         func() { _ = sn.Dump(now) },
			"Snapshot.Apply":                        func() { _ = sn.Apply(d) },
			"Snapshot.NextExpiry":                   func() { _, _ = sn.NextExpiry(now) },
			"Snapshot.Lookup":                       func() { _, _ = sn.Lookup("k", now) },
			"Diff":                                  func() { _ = Diff(nil, nil) },
			"Delta.Empty":                           func() { _ = d.Empty() },
			"Delta.AppendCanonical":                 func() { _ = d.AppendCanonical(nil) },
		}
	)
	for name, call := range calls {
		if err := ctxcheck.NoPanic(name, func() error { call(); return nil }); err != nil {
			t.Error(err)
		}
	}
	srv := New()
	ctx := context.Background()
	if err := srv.Do(ctx, "SET", "k", "v").Err(); err != nil {
		t.Fatal(err)
	}
	srv.Restore(nil)
	if n := srv.Snapshot().Len(); n != 0 {
		t.Errorf("after Restore(nil) the server holds %d keys, want none", n)
	}
	if r := NewKeyspace().Exec(nil, []string{"GET", "k"}); r.Kind != KindError {
		t.Errorf("Exec with a nil CallContext = %+v, want an error reply", r)
	}
}
