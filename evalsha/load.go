package evalsha

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/registry"
)

// LoadError reports that one script could not be loaded on one node.
type LoadError struct {
	Node   string // the node's address
	Script string // name@version
	Err    error  // the server's error, or a SHA1 mismatch
}

func (e *LoadError) Error() string {
	return fmt.Sprintf("evalsha: loading %s on %s: %v", e.Script, e.Node, e.Err)
}

// Unwrap returns the server's error, so errors.Is reaches context errors.
func (e *LoadError) Unwrap() error { return e.Err }

// Load runs SCRIPT LOAD for every script of reg on every node that may run
// it: a standalone or sentinel-managed server, every shard of a Ring, and
// every primary and replica of a Cluster (replicas run no-writes scripts
// sent with EVALSHA_RO). Each node gets one pipelined round trip. Failures
// are reported per node and script as *LoadError values, joined; nodes that
// succeed keep their scripts.
//
// Servers that cannot compile the Redis 7 "#!lua" line (Redis 6, miniredis)
// get the script's LegacySource instead, and later EVALSHA calls must use
// LegacySHA1 there: a Runner detects this by itself.
func Load(ctx context.Context, client redis.UniversalClient, reg *registry.Registry) error {
	if client == nil {
		return errors.New("evalsha: Load needs a go-redis client, got nil")
	}
	if reg == nil {
		return errors.New("evalsha: Load needs a registry, got nil; build one with registry.New(lua.FS)")
	}
	if err := checkContext(ctx, "Load"); err != nil {
		return err
	}
	return loadAll(ctx, client, reg.Scripts())
}

// loadAll loads scripts on every node of client, as Load describes.
func loadAll(ctx context.Context, client redis.UniversalClient, scripts []*registry.Script) error {
	var (
		mu   sync.Mutex
		errs []error
	)
	each := func(ctx context.Context, c *redis.Client) error {
		nodeErrs := loadNode(ctx, c, scripts)
		mu.Lock()
		errs = append(errs, nodeErrs...)
		mu.Unlock()
		return nil
	}
	var err error
	switch c := client.(type) {
	case *redis.ClusterClient:
		err = c.ForEachShard(ctx, each)
	case *redis.Ring:
		err = c.ForEachShard(ctx, each)
	case *redis.Client:
		err = each(ctx, c)
	default:
		return fmt.Errorf("evalsha: Load does not know how to reach every node of a %T; pass a *redis.Client, *redis.ClusterClient or *redis.Ring", client)
	}
	if err != nil {
		errs = append(errs, fmt.Errorf("evalsha: listing nodes: %w", err))
	}
	return errors.Join(errs...)
}

func loadNode(ctx context.Context, c *redis.Client, scripts []*registry.Script) []error {
	node := c.Options().Addr
	cmds, err := loadPipelined(ctx, c, scripts, canonicalSource)
	if err != nil && len(cmds) == 0 {
		return []error{&LoadError{Node: node, Script: "all scripts", Err: err}}
	}
	var errs []error
	var legacy []*registry.Script
	for i, cmd := range cmds {
		s := scripts[i]
		sha, err := cmd.Result()
		switch {
		case err != nil && needsLegacySource(s, err):
			legacy = append(legacy, s)
		case err != nil:
			errs = append(errs, &LoadError{Node: node, Script: s.ID(), Err: err})
		case sha != s.SHA1:
			errs = append(errs, &LoadError{Node: node, Script: s.ID(), Err: fmt.Errorf("server returned sha1 %s, expected %s", sha, s.SHA1)})
		}
	}
	if len(legacy) > 0 {
		cmds, err := loadPipelined(ctx, c, legacy, (*registry.Script).LegacySource)
		if err != nil && len(cmds) == 0 {
			return append(errs, &LoadError{Node: node, Script: "legacy scripts", Err: err})
		}
		for i, cmd := range cmds {
			if err := cmd.Err(); err != nil {
				errs = append(errs, &LoadError{Node: node, Script: legacy[i].ID(), Err: err})
			}
		}
	}
	return errs
}

func canonicalSource(s *registry.Script) string { return s.Source }

func loadPipelined(ctx context.Context, c *redis.Client, scripts []*registry.Script, source func(*registry.Script) string) ([]*redis.StringCmd, error) {
	if len(scripts) == 0 {
		return nil, nil
	}
	cmds := make([]*redis.StringCmd, len(scripts))
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, s := range scripts {
			cmds[i] = p.ScriptLoad(ctx, source(s))
		}
		return nil
	})
	if err != nil && ctx.Err() != nil {
		return nil, err
	}
	return cmds, err
}

// needsLegacySource is the one place that decides a server is too old for
// the "#!lua" line: the script has one and the server failed to compile it.
// Load decides it per node, the Runner per client; both ask here.
func needsLegacySource(s *registry.Script, err error) bool {
	return s.HasShebang() && ShebangUnsupported(err)
}

// ShebangUnsupported reports whether err is a server's compile error for the
// "#!" first line, which Redis before 7.0 and miniredis do not understand.
func ShebangUnsupported(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "'#'") || strings.Contains(msg, "near '#") ||
		(strings.Contains(msg, "#!") && strings.Contains(strings.ToLower(msg), "compil"))
}
