package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// defaultAddr is where redlua connects without --url, --addr or $REDIS_URL.
const defaultAddr = "127.0.0.1:6379"

// connFlags are the connection flags every command takes.
type connFlags struct {
	url, addr, user, password string
	db                        int
	tls, skipVerify           bool
	dialTimeout               time.Duration

	set    map[string]bool // flags given explicitly
	getenv func(string) string
}

func addConnFlags(fs *flag.FlagSet, getenv func(string) string) *connFlags {
	c := &connFlags{getenv: getenv}
	fs.StringVar(&c.url, "url", "", "server URL, redis://[user:password@]host:port[/db] or rediss:// for TLS (default $REDIS_URL)")
	fs.StringVar(&c.addr, "addr", "", "server address host:port; several, comma-separated, for a cluster (default "+defaultAddr+")")
	fs.StringVar(&c.user, "user", "", "ACL user name")
	fs.StringVar(&c.password, "password", "", "password (default $REDISCLI_AUTH; a flag is visible in ps)")
	fs.IntVar(&c.db, "db", 0, "database number (not for clusters)")
	fs.BoolVar(&c.tls, "tls", false, "connect with TLS")
	fs.BoolVar(&c.skipVerify, "tls-skip-verify", false, "do not verify the server's certificate (tests only)")
	fs.DurationVar(&c.dialTimeout, "dial-timeout", 5*time.Second, "how long to try to connect")
	return c
}

// parsed records which flags were given, once fs.Parse has run.
func (c *connFlags) parsed(fs *flag.FlagSet) {
	c.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { c.set[f.Name] = true })
}

// client builds the go-redis client the flags describe. Flags override
// what the URL says; --url and --addr exclude each other.
func (c *connFlags) client() (redis.UniversalClient, string, error) {
	if c.set["url"] && c.set["addr"] {
		return nil, "", usageErrorf("give --url or --addr, not both")
	}
	if c.dialTimeout <= 0 {
		return nil, "", usageErrorf("--dial-timeout %v must be positive, such as 5s", c.dialTimeout)
	}
	if c.db < 0 {
		return nil, "", usageErrorf("--db %d must be 0 or more", c.db)
	}
	password := c.password
	if !c.set["password"] {
		password = c.getenv("REDISCLI_AUTH")
	}
	url := c.url
	if !c.set["url"] && !c.set["addr"] {
		url = c.getenv("REDIS_URL")
	}
	if url != "" {
		opts, err := redis.ParseURL(url)
		if err != nil {
			// ParseURL's errors may quote the URL, password included.
			return nil, "", usageErrorf("cannot parse the server URL (from %s): %v", c.urlSource(), redactErr(err, url))
		}
		if c.set["user"] {
			opts.Username = c.user
		}
		if c.set["password"] || (opts.Password == "" && password != "") {
			opts.Password = password
		}
		if c.set["db"] {
			opts.DB = c.db
		}
		c.applyTLS(&opts.TLSConfig, opts.Addr)
		opts.DialTimeout = c.dialTimeout
		return redis.NewClient(opts), opts.Addr, nil
	}
	addr := c.addr
	if addr == "" {
		addr = defaultAddr
	}
	addrs := strings.Split(addr, ",")
	for _, a := range addrs {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return nil, "", usageErrorf("--addr %q is not host:port", a)
		}
	}
	if len(addrs) > 1 {
		if c.db != 0 {
			return nil, "", usageErrorf("--db does not apply to a cluster (several --addr addresses)")
		}
		opts := &redis.ClusterOptions{Addrs: addrs, Username: c.user, Password: password, DialTimeout: c.dialTimeout}
		c.applyTLS(&opts.TLSConfig, addrs[0])
		return redis.NewClusterClient(opts), addr, nil
	}
	opts := &redis.Options{Addr: addr, Username: c.user, Password: password, DB: c.db, DialTimeout: c.dialTimeout}
	c.applyTLS(&opts.TLSConfig, addr)
	return redis.NewClient(opts), addr, nil
}

func (c *connFlags) urlSource() string {
	if c.set["url"] {
		return "--url"
	}
	return "$REDIS_URL"
}

// applyTLS turns TLS on for --tls (a rediss:// URL already did) and applies
// --tls-skip-verify.
func (c *connFlags) applyTLS(cfg **tls.Config, addr string) {
	if *cfg == nil && (c.tls || c.skipVerify) {
		host, _, _ := net.SplitHostPort(addr)
		*cfg = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	}
	if *cfg != nil && c.skipVerify {
		(*cfg).InsecureSkipVerify = true
	}
}

// redactErr removes the URL's password from err's text.
func redactErr(err error, url string) error {
	msg := err.Error()
	if i := strings.Index(url, "://"); i >= 0 {
		if at := strings.LastIndex(url, "@"); at > i {
			if _, pw, ok := strings.Cut(url[i+3:at], ":"); ok && pw != "" {
				msg = strings.ReplaceAll(msg, pw, "xxxxx")
			}
		}
	}
	return errors.New(msg)
}

// connect builds the client and checks that the server answers, so a
// connection problem is reported as one (exit 69) before any work.
func (c *connFlags) connect(ctx context.Context) (redis.UniversalClient, error) {
	client, addr, err := c.client()
	if err != nil {
		return nil, err
	}
	pingCtx, cancel := context.WithTimeout(ctx, c.dialTimeout+time.Second)
	defer cancel()
	if err := client.Ping(pingCtx).Err(); err != nil {
		client.Close()
		return nil, unavailable(fmt.Errorf("cannot reach the server at %s: %w", addr, err))
	}
	return client, nil
}
