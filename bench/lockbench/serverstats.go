package lockbench

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// ServerStats is a snapshot of the counters a run is charged with: commands
// by name from INFO commandstats and the server's CPU time from INFO cpu.
type ServerStats struct {
	Calls map[string]int64 // "evalsha" -> calls
	CPU   time.Duration    // used_cpu_sys + used_cpu_user
	// ScriptTime is the usec of the script commands (EVALSHA and the rest
	// of scriptCommands): the time spent running scripts, the commands
	// they call included, without the reading, parsing and writing around
	// them that CPU also counts.
	ScriptTime time.Duration
	// Usec is every command's usec from INFO commandstats, by name.
	Usec map[string]time.Duration
}

// scriptCommands are the commands that run a script or function.
var scriptCommands = []string{"eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro"}

// ReadServerStats takes a snapshot from the server at addr.
func ReadServerStats(ctx context.Context, c *redis.Client) (ServerStats, error) {
	text, err := c.Info(ctx, "commandstats", "cpu").Result()
	if err != nil {
		return ServerStats{}, fmt.Errorf("INFO commandstats cpu: %w", err)
	}
	return parseServerStats(text)
}

// parseServerStats reads the lines "cmdstat_NAME:calls=N,..." and
// "used_cpu_sys:S" / "used_cpu_user:S" of an INFO reply.
func parseServerStats(text string) (ServerStats, error) {
	s := ServerStats{Calls: map[string]int64{}, Usec: map[string]time.Duration{}}
	var cpu float64
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch {
		case strings.HasPrefix(key, "cmdstat_"):
			calls, rest, _ := strings.Cut(strings.TrimPrefix(value, "calls="), ",")
			n, err := strconv.ParseInt(calls, 10, 64)
			if err != nil {
				return ServerStats{}, fmt.Errorf("INFO commandstats: cannot read calls in %q: %w", line, err)
			}
			name := strings.TrimPrefix(key, "cmdstat_")
			s.Calls[name] = n
			usec, _, _ := strings.Cut(strings.TrimPrefix(rest, "usec="), ",")
			u, err := strconv.ParseInt(usec, 10, 64)
			if err != nil {
				return ServerStats{}, fmt.Errorf("INFO commandstats: cannot read usec in %q: %w", line, err)
			}
			s.Usec[name] = time.Duration(u) * time.Microsecond
			if slices.Contains(scriptCommands, name) {
				s.ScriptTime += s.Usec[name]
			}
		case key == "used_cpu_sys" || key == "used_cpu_user":
			f, err := strconv.ParseFloat(value, 64)
			if err != nil {
				return ServerStats{}, fmt.Errorf("INFO cpu: cannot read %q: %w", line, err)
			}
			cpu += f
		}
	}
	s.CPU = time.Duration(cpu * float64(time.Second))
	return s, nil
}

// ServerCost is what the server spent between two snapshots.
type ServerCost struct {
	Commands   int64 // every command, including those a script ran, except the snapshots' INFO
	ScriptRuns int64 // EVAL, EVALSHA, FCALL and their _RO forms
	CPU        time.Duration
	ScriptTime time.Duration // see ServerStats.ScriptTime
}

// costBetween is after minus before.
func costBetween(before, after ServerStats) ServerCost {
	var c ServerCost
	for name, n := range after.Calls {
		if name == "info" {
			continue // the harness's own snapshots
		}
		d := n - before.Calls[name]
		c.Commands += d
		if slices.Contains(scriptCommands, name) {
			c.ScriptRuns += d
		}
	}
	c.CPU = after.CPU - before.CPU
	c.ScriptTime = after.ScriptTime - before.ScriptTime
	return c
}
