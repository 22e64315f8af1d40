// Command demo walks through redlua on a Redis server, in the order a user
// meets it: a mutex with a watchdog and a fencing token, two workers
// contending for one lock, fair mode; then the scripts underneath and the
// offline simulator. It prints each step in plain words.
//
//	go run ./cmd/demo                            # an embedded miniredis
//	REDIS_ADDR=127.0.0.1:6379 go run ./cmd/demo  # your own server
//
// On your own server every key it creates starts with "redlua-demo-" or
// "{redlua-demo-" and a random run id, and it deletes exactly those keys
// when it ends.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/redlua/redlua/locks"
)

func main() {
	if err := run(context.Background(), os.Getenv("REDIS_ADDR"), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "demo failed:", err)
		os.Exit(1)
	}
}

// demo is one run: the server, the output, and the prefix of every lock
// name it uses.
type demo struct {
	client *redis.Client
	out    io.Writer
	prefix string // "redlua-demo-<run id>"; keys are "{" + prefix + ...
}

func (d *demo) say(format string, a ...any) { fmt.Fprintf(d.out, format+"\n", a...) }

// name is a lock name of this run.
func (d *demo) name(s string) string { return d.prefix + ":" + s }

func run(ctx context.Context, addr string, out io.Writer) (err error) {
	d := &demo{out: out}
	if addr == "" {
		mr, err := miniredis.Run()
		if err != nil {
			return fmt.Errorf("starting the embedded miniredis: %w", err)
		}
		defer mr.Close()
		addr = mr.Addr()
		d.say("No REDIS_ADDR set: using an embedded miniredis at %s.", addr)
	} else {
		d.say("Using the Redis server at %s (REDIS_ADDR).", addr)
	}
	d.client = redis.NewClient(&redis.Options{Addr: addr})
	defer d.client.Close()
	if err := d.client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("cannot reach %s: %w", addr, err)
	}
	var id [4]byte
	_, _ = rand.Read(id[:])
	d.prefix = "redlua-demo-" + hex.EncodeToString(id[:])
	d.say("Every lock below is named %s:..., and its keys are removed at the end.", d.prefix)
	defer func() {
		n, cleanErr := d.cleanup(context.WithoutCancel(ctx))
		if cleanErr != nil {
			err = errors.Join(err, fmt.Errorf("removing the demo's keys: %w", cleanErr))
			return
		}
		d.say("\nCleaned up: removed the %d keys this run created; nothing else was touched.", n)
	}()

	for _, step := range []func(context.Context) error{d.watchdogAndFencing, d.contendedPair, d.fairMode, d.scripts, d.simulator, d.fencing} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

// keyPrefix puts this run's locks, and the record each Client keeps of
// who it is (its holder key), under this run's prefix.
func (d *demo) keyPrefix() locks.Option { return locks.WithKeyPrefix(d.prefix + ":") }

// cleanup deletes the keys whose names start with this run's prefix, in
// braces (fence keys) or not (the locks' keys, under their key prefix).
func (d *demo) cleanup(ctx context.Context) (int, error) {
	var keys []string
	for _, pattern := range []string{"{" + d.prefix + "*", d.prefix + ":*"} {
		iter := d.client.Scan(ctx, 0, pattern, 100).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			return 0, err
		}
	}
	if len(keys) == 0 {
		return 0, nil
	}
	// One key at a time: on a cluster they live in different slots.
	for _, k := range keys {
		if err := d.client.Del(ctx, k).Err(); err != nil {
			return 0, err
		}
	}
	return len(keys), nil
}
