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

	"github.com/redlua/redlua/locks"
)

// defaultAddr is where redlua connects without --url, --addr or $REDIS_URL.
const defaultAddr = "127.0.0.1:6379"

// connFlags are the connection flags every command takes.
type connFlags struct {
	url, addr, user, password string
	db                        int
	tls, skipVerify           bool
	dialTimeout               time.Duration
	sentinel                  string // --sentinel: the primary's name at the Sentinels in --addr
	sentinelUser              string // --sentinel-user: the ACL user at the Sentinels
	sentinelPassword          string // --sentinel-password (default $REDLUA_SENTINEL_AUTH)
	quorum                    bool   // --quorum (lock, inspect, unlock): --addr lists independent primaries
	keyPrefix                 string // --key-prefix: before every lock key (locks.WithKeyPrefix)

	set    map[string]bool // flags given explicitly
	getenv func(string) string
}

func addConnFlags(fs *flag.FlagSet, getenv func(string) string) *connFlags {
	c := &connFlags{getenv: getenv}
	fs.StringVar(&c.url, "url", "", "server URL, redis://[user:password@]host:port[/db] or rediss:// for TLS (default $REDIS_URL)")
	fs.StringVar(&c.addr, "addr", "", "server address host:port; several, comma-separated, for a cluster (without --url or $REDIS_URL: "+defaultAddr+")")
	fs.StringVar(&c.user, "user", "", "ACL user name")
	fs.StringVar(&c.password, "password", "", "password (default $REDISCLI_AUTH; a flag is visible in ps)")
	fs.IntVar(&c.db, "db", 0, "database number (not for clusters)")
	fs.BoolVar(&c.tls, "tls", false, "connect with TLS")
	fs.BoolVar(&c.skipVerify, "tls-skip-verify", false, "do not verify the server's certificate (tests only)")
	fs.DurationVar(&c.dialTimeout, "dial-timeout", 5*time.Second, "how long to try to connect")
	fs.StringVar(&c.sentinel, "sentinel", "", "connect through Redis Sentinel to the primary it monitors as this name; --addr lists the Sentinels (comma-separated)")
	fs.StringVar(&c.sentinelUser, "sentinel-user", "", "ACL user name at the Sentinels (--user and --password are the primary's)")
	fs.StringVar(&c.sentinelPassword, "sentinel-password", "", "password at the Sentinels (default $REDLUA_SENTINEL_AUTH; a flag is visible in ps)")
	fs.StringVar(&c.keyPrefix, "key-prefix", "", "put this before every lock key, as the application's locks.WithKeyPrefix does (for an ACL user limited to ~PREFIX*); lock, inspect and unlock")
	return c
}

// addQuorumFlag adds --quorum, for the commands that can run on a quorum.
func (c *connFlags) addQuorumFlag(fs *flag.FlagSet) {
	fs.BoolVar(&c.quorum, "quorum", false, "Redlock: --addr lists independent primaries (at least 3, comma-separated); lock needs a majority of them, inspect reports who holds a majority and what each primary holds, unlock --force frees every primary")
}

// quorumAddrs are the primaries of --quorum, in --addr's order (nil
// without --quorum); quorumClients has checked them.
func (c *connFlags) quorumAddrs() []string {
	if !c.quorum {
		return nil
	}
	addrs, _ := c.addrs(c.addr)
	return addrs
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
	if err := c.checkValues(); err != nil {
		return nil, "", err
	}
	if c.set["sentinel"] && c.sentinel == "" {
		return nil, "", usageErrorf("--sentinel needs the name the Sentinels monitor the primary under, such as --sentinel mymaster")
	}
	if c.sentinel != "" && (c.set["url"] || c.addr == "") {
		return nil, "", usageErrorf("--sentinel takes the Sentinels' addresses from --addr (host:port, comma-separated), not from a URL")
	}
	password := c.passwordValue()
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
	addrs, err := c.addrs(addr)
	if err != nil {
		return nil, "", err
	}
	if c.sentinel != "" {
		sentinelPassword := c.sentinelPassword
		if !c.set["sentinel-password"] {
			sentinelPassword = c.getenv("REDLUA_SENTINEL_AUTH")
		}
		opts := &redis.FailoverOptions{MasterName: c.sentinel, SentinelAddrs: addrs, Username: c.user, Password: password,
			SentinelUsername: c.sentinelUser, SentinelPassword: sentinelPassword, DB: c.db, DialTimeout: c.dialTimeout}
		c.applyTLS(&opts.TLSConfig, addrs[0])
		return redis.NewFailoverClient(opts), fmt.Sprintf("the primary %q of the Sentinels at %s", c.sentinel, addr), nil
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

// checkValues rejects the flag values no connection can use.
func (c *connFlags) checkValues() error {
	if c.dialTimeout <= 0 {
		return usageErrorf("--dial-timeout %v must be positive, such as 5s", c.dialTimeout)
	}
	if c.db < 0 {
		return usageErrorf("--db %d must be 0 or more", c.db)
	}
	if (c.set["sentinel-user"] || c.set["sentinel-password"]) && c.sentinel == "" {
		return usageErrorf("--sentinel-user and --sentinel-password are for the Sentinels of --sentinel NAME; without it, --user and --password are the server's")
	}
	return nil
}

// passwordValue is --password, or $REDISCLI_AUTH without it.
func (c *connFlags) passwordValue() string {
	if c.set["password"] {
		return c.password
	}
	return c.getenv("REDISCLI_AUTH")
}

// addrs splits --addr and checks every address.
func (c *connFlags) addrs(addr string) ([]string, error) {
	addrs := strings.Split(addr, ",")
	for _, a := range addrs {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return nil, usageErrorf("--addr %q is not host:port", a)
		}
	}
	return addrs, nil
}

// quorumClients builds one client per primary --addr lists, with the
// fail-fast settings locks.NewQuorum asks for: a dead server must cost a
// round little, and a restarted one must be tried again soon.
func (c *connFlags) quorumClients() ([]redis.UniversalClient, []string, error) {
	switch {
	case c.set["url"]:
		return nil, nil, usageErrorf("--quorum takes the primaries from --addr, not --url")
	case c.sentinel != "":
		return nil, nil, usageErrorf("--quorum and --sentinel exclude each other: a quorum is of independent primaries")
	}
	if err := c.checkValues(); err != nil {
		return nil, nil, err
	}
	if c.addr == "" {
		return nil, nil, usageErrorf("--quorum needs --addr with at least 3 independent primaries (host:port, comma-separated)")
	}
	addrs, err := c.addrs(c.addr)
	if err != nil {
		return nil, nil, err
	}
	if len(addrs) < 3 {
		return nil, nil, usageErrorf("--quorum needs at least 3 independent primaries in --addr (comma-separated), got %d", len(addrs))
	}
	password := c.passwordValue()
	clients := make([]redis.UniversalClient, len(addrs))
	for i, a := range addrs {
		opts := &redis.Options{Addr: a, Username: c.user, Password: password, DB: c.db, DialTimeout: c.dialTimeout,
			DialerRetries: 1, MaxRetries: 1, MinRetryBackoff: time.Millisecond, MaxRetryBackoff: 5 * time.Millisecond}
		c.applyTLS(&opts.TLSConfig, a)
		clients[i] = redis.NewClient(opts)
	}
	return clients, addrs, nil
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
	if err := c.ping(ctx, client, addr); err != nil {
		client.Close()
		return nil, err
	}
	return client, nil
}

// ping checks that the server at addr answers (exit 69 otherwise).
func (c *connFlags) ping(ctx context.Context, client redis.UniversalClient, addr string) error {
	pingCtx, cancel := context.WithTimeout(ctx, c.dialTimeout+time.Second)
	defer cancel()
	if err := client.Ping(pingCtx).Err(); err != nil {
		return unavailable(fmt.Errorf("cannot reach the server at %s: %w", addr, err))
	}
	return nil
}

// lockClient returns a locks.Client on the connection the flags name, or
// on the quorum --quorum names; opts become the Client's defaults. check
// (if not nil) runs on the Client before anything connects, so bad input
// it finds (a lock name, an option) is refused without a connection.
func lockClient(ctx context.Context, c *command, check func(*locks.Client) error, opts ...locks.Option) (*locks.Client, func(), error) {
	if c.conn.keyPrefix != "" {
		opts = append(opts, locks.WithKeyPrefix(c.conn.keyPrefix))
	}
	if c.conn.quorum {
		return quorumClient(ctx, c.conn, check, opts)
	}
	client, addr, err := c.conn.client()
	if err != nil {
		return nil, nil, err
	}
	lc, err := locks.New(client, opts...)
	if err != nil {
		client.Close()
		return nil, nil, usageErrorf("the flags are refused: %s", libText(err, ""))
	}
	closeAll := func() { lc.Close(); client.Close() }
	if check != nil {
		if err := check(lc); err != nil {
			closeAll()
			return nil, nil, err
		}
	}
	if err := c.conn.ping(ctx, client, addr); err != nil {
		closeAll()
		return nil, nil, err
	}
	return lc, closeAll, nil
}

// quorumClient connects to the primaries of --quorum. A minority may be
// down (the quorum exists for that); when a majority does not answer, the
// lock could not be taken, and that is reported as a connection failure.
func quorumClient(ctx context.Context, c *connFlags, check func(*locks.Client) error, opts []locks.Option) (*locks.Client, func(), error) {
	clients, addrs, err := c.quorumClients()
	if err != nil {
		return nil, nil, err
	}
	closeClients := func() {
		for _, rc := range clients {
			rc.Close()
		}
	}
	lc, err := locks.NewQuorum(clients, opts...)
	if err != nil {
		closeClients()
		return nil, nil, usageErrorf("--quorum: %s", libText(err, ""))
	}
	closeAll := func() { lc.Close(); closeClients() }
	if check != nil {
		if err := check(lc); err != nil {
			closeAll()
			return nil, nil, err
		}
	}
	pingCtx, cancel := context.WithTimeout(ctx, c.dialTimeout+time.Second)
	defer cancel()
	var down []error
	for i, rc := range clients {
		if err := rc.Ping(pingCtx).Err(); err != nil {
			down = append(down, fmt.Errorf("%s: %w", addrs[i], err))
		}
	}
	if need := len(clients)/2 + 1; len(clients)-len(down) < need {
		closeAll()
		return nil, nil, unavailable(fmt.Errorf("cannot reach a majority of the %d primaries (%d needed, %d answered): %w",
			len(clients), need, len(clients)-len(down), errors.Join(down...)))
	}
	return lc, closeAll, nil
}
