package evalsha

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/registry"
)

// RunReplicated runs script like Run and sends WAIT replicas timeout in the
// same pipeline on the same connection, because WAIT counts the replicas
// that acknowledged the writes of its own connection only. acked is WAIT's
// reply: how many replicas had the script's writes when WAIT returned, at
// most after timeout. err is cmd.Err() (a *ScriptError, or redis.Nil for a
// nil reply, as with Run), or else WAIT's error.
//
// WAIT narrows the window in which a failover can lose an acknowledged
// write; it is not consensus. It works with *redis.Client (standalone or
// Sentinel's failover client) and *redis.ClusterClient, where the pipeline
// goes to the primary owning keys[0]'s slot (a MOVED answer is retried once
// after the cluster client refreshes its slot map). A timeout the client's
// ReadTimeout cannot cover (within a second) is served in two round trips
// on one pinned connection instead of one pipeline.
func (r *Runner) RunReplicated(ctx context.Context, s *registry.Script, replicas int, timeout time.Duration, keys []string, args ...any) (cmd *redis.Cmd, acked int, err error) {
	if !r.usable() {
		return failedCmd(ctx, errNoRunner), 0, errNoRunner
	}
	r.calls.Add(1)
	if err := checkCall(s, keys, args); err != nil {
		cmd = r.failed(ctx, s, err)
		return cmd, 0, err
	}
	if ctx == nil || ctx.Err() != nil {
		err := &ScriptError{Script: s.ID(), Err: checkContext(ctx, "RunReplicated")}
		return r.failed(ctx, s, err), 0, err
	}
	if err := checkWait(s, replicas, timeout); err != nil {
		cmd = r.failed(ctx, s, err)
		return cmd, 0, err
	}
	c := &Call{Script: s, Keys: keys, Args: args}
	switch client := r.client.(type) {
	case *redis.Client:
		return r.runAndWait(ctx, client, c, replicas, timeout)
	case *redis.ClusterClient:
		return r.runAndWaitCluster(ctx, client, c, replicas, timeout)
	default:
		err := &ScriptError{Script: s.ID(), Err: fmt.Errorf("RunReplicated supports *redis.Client (standalone or Sentinel's NewFailoverClient) and *redis.ClusterClient, not %T: WAIT must follow the script on the same connection", r.client)}
		cmd = r.failed(ctx, s, err)
		return cmd, 0, err
	}
}

func checkWait(s *registry.Script, replicas int, timeout time.Duration) error {
	switch {
	case replicas < 0:
		return &ScriptError{Script: s.ID(), Err: fmt.Errorf("RunReplicated needs replicas >= 0, got %d", replicas)}
	case timeout < time.Millisecond:
		// WAIT n 0 blocks until n replicas answer, possibly forever.
		return &ScriptError{Script: s.ID(), Err: fmt.Errorf("RunReplicated needs a timeout of at least 1ms, got %v (WAIT with 0 would block forever)", timeout)}
	}
	return nil
}

// runAndWaitCluster pipelines on the primary that owns keys[0]'s slot.
func (r *Runner) runAndWaitCluster(ctx context.Context, cluster *redis.ClusterClient, c *Call, replicas int, timeout time.Duration) (*redis.Cmd, int, error) {
	if len(c.Keys) == 0 {
		err := &ScriptError{Script: c.Script.ID(), Err: errors.New("RunReplicated on a cluster needs at least one key: its slot picks the primary that runs the script and WAIT")}
		return r.failed(ctx, c.Script, err), 0, err
	}
	node, err := cluster.MasterForKey(ctx, c.Keys[0])
	if err != nil {
		err = &ScriptError{Script: c.Script.ID(), Err: fmt.Errorf("finding the primary of %s: %w", c.Keys[0], err)}
		return r.failed(ctx, c.Script, err), 0, err
	}
	cmd, wait := r.exchange(ctx, node, c, replicas, timeout, false)
	if kind, addr, ok := parseRedirect(cmd.Err()); ok {
		// The slot moved (MOVED) or is moving (ASK): one retry on the node
		// named, known to the cluster client. MOVED also refreshes the
		// client's slot map for the calls after this one.
		if kind == "MOVED" {
			cluster.ReloadState(ctx)
		}
		if target := nodeByAddr(ctx, cluster, addr); target != nil {
			cmd, wait = r.exchange(ctx, target, c, replicas, timeout, kind == "ASK")
		}
	}
	return r.waitResult(c.Script, r.finish(c.Script, cmd), wait, replicas, timeout)
}

// runAndWait sends the script and WAIT on one connection of client.
func (r *Runner) runAndWait(ctx context.Context, client *redis.Client, c *Call, replicas int, timeout time.Duration) (*redis.Cmd, int, error) {
	cmd, wait := r.exchange(ctx, client, c, replicas, timeout, false)
	return r.waitResult(c.Script, r.finish(c.Script, cmd), wait, replicas, timeout)
}

// exchange sends the script and WAIT on one connection of client, with the
// same fallbacks as Run, and returns both replies; the script's error is
// not wrapped yet (a cluster caller may still follow a redirect). asking
// prefixes every attempt with ASKING, for a slot being imported by client.
func (r *Runner) exchange(ctx context.Context, client *redis.Client, c *Call, replicas int, timeout time.Duration, asking bool) (cmd, wait *redis.Cmd) {
	if rt := client.Options().ReadTimeout; rt > 0 && timeout+time.Second > rt {
		return r.exchangePinned(ctx, client, c, replicas, timeout, asking)
	}
	step := attemptEvalSha
	for round := 0; round < maxRounds; round++ {
		pipe := client.Pipeline()
		if asking {
			pipe.Do(ctx, "ASKING")
		}
		cmd = r.send(ctx, pipe, c, step)
		wait = pipe.Do(ctx, "WAIT", replicas, timeout.Milliseconds())
		_, _ = pipe.Exec(ctx) // each command carries its own error
		next, ok := r.nextAttempt(c.Script, step, cmd.Err())
		if !ok {
			break
		}
		step = next
	}
	return cmd, wait
}

// exchangePinned serves a WAIT longer than the client's ReadTimeout allows
// in a pipeline: the script, then WAIT with its own read deadline, on one
// pinned connection.
func (r *Runner) exchangePinned(ctx context.Context, client *redis.Client, c *Call, replicas int, timeout time.Duration, asking bool) (cmd, wait *redis.Cmd) {
	conn := client.Conn()
	defer conn.Close()
	step := attemptEvalSha
	for round := 0; round < maxRounds; round++ {
		if asking {
			conn.Do(ctx, "ASKING")
		}
		cmd = r.send(ctx, conn, c, step)
		next, ok := r.nextAttempt(c.Script, step, cmd.Err())
		if !ok {
			break
		}
		step = next
	}
	// conn.Wait, unlike Do, stretches the read deadline to the timeout.
	acked, err := conn.Wait(ctx, replicas, timeout).Result()
	wait = redis.NewCmd(ctx)
	wait.SetVal(acked)
	wait.SetErr(err)
	return cmd, wait
}

func (r *Runner) waitResult(s *registry.Script, cmd *redis.Cmd, wait *redis.Cmd, replicas int, timeout time.Duration) (*redis.Cmd, int, error) {
	acked, werr := wait.Int64()
	if err := cmd.Err(); err != nil {
		return cmd, int(acked), err
	}
	if werr != nil {
		return cmd, int(acked), &ScriptError{Script: s.ID(), Err: fmt.Errorf("WAIT %d %d: %w", replicas, timeout.Milliseconds(), werr)}
	}
	return cmd, int(acked), nil
}

// parseRedirect splits a cluster redirect, "MOVED 3999 127.0.0.1:6381" or
// "ASK 3999 127.0.0.1:6381", into its kind and the address named.
func parseRedirect(err error) (kind, addr string, ok bool) {
	if err == nil {
		return "", "", false
	}
	f := strings.Fields(err.Error())
	if len(f) != 3 || (f[0] != "MOVED" && f[0] != "ASK") {
		return "", "", false
	}
	return f[0], f[2], true
}

// nodeByAddr finds the cluster client's own client for the node at addr
// (primary or replica: a promoted replica may be named before the client
// saw the failover), or nil.
func nodeByAddr(ctx context.Context, cluster *redis.ClusterClient, addr string) *redis.Client {
	var mu sync.Mutex
	var found *redis.Client
	_ = cluster.ForEachShard(ctx, func(_ context.Context, c *redis.Client) error {
		if c.Options().Addr == addr {
			mu.Lock()
			found = c
			mu.Unlock()
		}
		return nil
	})
	return found
}
