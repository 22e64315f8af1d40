package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/redlua/redlua/locks"
)

// lockView is one lock in `redlua inspect --json`.
type lockView struct {
	Name    string  `json:"name"`
	Held    bool    `json:"held"`
	Owner   string  `json:"owner,omitempty"`
	Token   int64   `json:"token,omitempty"`
	Holds   int64   `json:"holds,omitempty"`
	TTLms   int64   `json:"ttl_ms,omitempty"`
	Holder  *holder `json:"holder,omitempty"`
	Waiters int64   `json:"waiters,omitempty"`
}

type holder struct {
	Host  string `json:"host,omitempty"`
	PID   int    `json:"pid,omitempty"`
	Label string `json:"label,omitempty"`
	Raw   string `json:"raw,omitempty"`
}

func viewOf(info locks.LockInfo) lockView {
	v := lockView{Name: info.Name, Held: info.Held, Owner: info.Owner, Token: info.Token, Holds: info.HoldCount,
		TTLms: info.TTL.Milliseconds(), Waiters: info.Waiters}
	if h := info.Holder; h != (locks.Metadata{}) {
		v.Holder = &holder{Host: h.Host, PID: h.PID, Label: h.Label, Raw: h.Raw}
	}
	return v
}

func cmdInspect(ctx context.Context, args []string, io stdio, getenv func(string) string) error {
	c := newCommand("inspect", "redlua inspect [--json] NAME...", getenv)
	asJSON := c.fs.Bool("json", false, "print a JSON array of objects (name, held, owner, token, holds, ttl_ms, holder, waiters)")
	if err := c.parse(args, io.out); err != nil {
		return err
	}
	names := c.fs.Args()
	if len(names) == 0 {
		return usageErrorf("inspect: name at least one lock, as in: redlua inspect nightly-report")
	}
	lc, closeAll, err := lockClient(ctx, c)
	if err != nil {
		return err
	}
	defer closeAll()
	if err := checkNames(lc, names); err != nil {
		return err
	}
	views := make([]lockView, 0, len(names))
	for _, name := range names {
		info, err := lc.Inspect(ctx, name)
		if err != nil {
			return unavailable(err)
		}
		views = append(views, viewOf(info))
	}
	if *asJSON {
		enc := json.NewEncoder(io.out)
		enc.SetIndent("", "  ")
		return enc.Encode(views)
	}
	for i, info := range views {
		if i > 0 {
			fmt.Fprintln(io.out)
		}
		printView(io, info)
	}
	return nil
}

func printView(io stdio, v lockView) {
	if !v.Held {
		fmt.Fprintf(io.out, "%s: free", v.Name)
		if v.Waiters > 0 {
			fmt.Fprintf(io.out, " (%d queued)", v.Waiters)
		}
		fmt.Fprintln(io.out)
		return
	}
	fmt.Fprintf(io.out, "%s: held\n", v.Name)
	fmt.Fprintf(io.out, "  owner    %s\n", v.Owner)
	fmt.Fprintf(io.out, "  token    %d\n", v.Token)
	if v.Holds > 1 {
		fmt.Fprintf(io.out, "  holds    %d\n", v.Holds)
	}
	if v.TTLms > 0 {
		fmt.Fprintf(io.out, "  ttl      %v\n", time.Duration(v.TTLms)*time.Millisecond)
	} else {
		fmt.Fprintf(io.out, "  ttl      none (the lock never expires: free it with redlua unlock --force)\n")
	}
	if h := v.Holder; h != nil {
		if h.Raw != "" {
			fmt.Fprintf(io.out, "  holder   %q\n", h.Raw)
		} else {
			fmt.Fprintf(io.out, "  holder   %s pid %d\n", h.Host, h.PID)
			if h.Label != "" {
				fmt.Fprintf(io.out, "  label    %q\n", h.Label)
			}
		}
	}
	if v.Waiters > 0 {
		fmt.Fprintf(io.out, "  waiters  %d\n", v.Waiters)
	}
}

// describeHolder is a one-line "who": host, pid, label, TTL and token.
func describeHolder(info locks.LockInfo) string {
	var parts []string
	if h := info.Holder; h.Host != "" || h.PID != 0 {
		parts = append(parts, fmt.Sprintf("%s pid %d", h.Host, h.PID))
		if h.Label != "" {
			parts = append(parts, fmt.Sprintf("label %q", h.Label))
		}
	} else if h.Raw != "" {
		parts = append(parts, fmt.Sprintf("%q", h.Raw))
	} else {
		parts = append(parts, "owner "+info.Owner)
	}
	parts = append(parts, fmt.Sprintf("token %d", info.Token))
	if info.TTL > 0 {
		parts = append(parts, fmt.Sprintf("lease %v left", info.TTL.Round(time.Millisecond)))
	}
	return strings.Join(parts, ", ")
}

func cmdUnlock(ctx context.Context, args []string, io stdio, getenv func(string) string) error {
	c := newCommand("unlock", "redlua unlock --force NAME...", getenv)
	force := c.fs.Bool("force", false, "required: remove the holder whoever it is (its lease ends as lost)")
	asJSON := c.fs.Bool("json", false, "print a JSON array of {name, removed, was}")
	if err := c.parse(args, io.out); err != nil {
		return err
	}
	names := c.fs.Args()
	if !*force {
		return usageErrorf("unlock: only --force is supported: a holder's own Unlock needs its lease; --force removes whoever holds the lock")
	}
	if len(names) == 0 {
		return usageErrorf("unlock --force: name at least one lock, as in: redlua unlock --force nightly-report")
	}
	lc, closeAll, err := lockClient(ctx, c)
	if err != nil {
		return err
	}
	defer closeAll()
	type result struct {
		Name    string    `json:"name"`
		Removed bool      `json:"removed"`
		Was     *lockView `json:"was,omitempty"`
	}
	if err := checkNames(lc, names); err != nil {
		return err
	}
	var results []result
	for _, name := range names {
		// Who held it, for the operator's record; the removal does not
		// depend on it.
		before, inspectErr := lc.Inspect(ctx, name)
		removed, err := lc.ForceUnlock(ctx, name)
		if err != nil {
			return unavailable(err)
		}
		r := result{Name: name, Removed: removed}
		if removed && inspectErr == nil && before.Held {
			v := viewOf(before)
			r.Was = &v
		}
		results = append(results, r)
		if *asJSON {
			continue
		}
		switch {
		case !removed:
			fmt.Fprintf(io.out, "%s: was not held\n", name)
		case r.Was != nil:
			fmt.Fprintf(io.out, "%s: removed the holder (%s)\n", name, describeHolder(before))
		default:
			fmt.Fprintf(io.out, "%s: removed the holder\n", name)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(io.out)
		enc.SetIndent("", "  ")
		return enc.Encode(results)
	}
	return nil
}

// lockClient connects and returns a locks.Client on the connection.
func lockClient(ctx context.Context, c *command) (*locks.Client, func(), error) {
	client, err := c.conn.connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	lc, err := locks.New(client)
	if err != nil {
		client.Close()
		return nil, nil, unavailable(err)
	}
	return lc, func() { lc.Close(); client.Close() }, nil
}

// checkNames rejects bad lock names (exit 2) before any is touched.
func checkNames(lc *locks.Client, names []string) error {
	for _, name := range names {
		if _, err := lc.Mutex(name); err != nil {
			return exitWith(exitUsage, err)
		}
	}
	return nil
}
