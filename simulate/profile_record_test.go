package simulate

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/redlua/redlua/internal/redistest"
)

// The differential tests compare the simulator with a server in one of
// two ways, chosen per test by diffStandalone:
//
//   - live: a redis-server or valkey-server started by redistest
//     (REDLUA_REDIS_SERVER chooses the binary); the simulator runs the
//     profile of the server's line, read from INFO server. With
//     REDLUA_RECORD=1 every request and raw reply is also written to
//     testdata/servers/<profile>.txt.gz, in the test's own section.
//   - replay: under TestProfilesMatchRecordedServers/<profile>/<test>,
//     go-redis talks to an in-process fake that answers each request with
//     the reply recorded from that profile's server, so every profile is
//     judged on a machine that has none of the servers (CI has 7.0 only).
//
// A replayed test must send the requests it sent when recorded, in order;
// the first that differs fails the test with both, and the fix is to
// record again: REDLUA_RECORD=1 REDLUA_REDIS_SERVER=<binary> go test -run
// '<tests>' ./simulate, once per server line.

const recordEnv = "REDLUA_RECORD"

// replayedTests are the differential tests TestProfilesMatchRecordedServers
// replays for every profile. Live only: the pub/sub test (its pushes are
// not request and reply), and the tests that judge Lua 5.1 itself, which
// every line embeds unchanged: TestTableOrderMatchesRedis (a megabyte of
// table dumps per profile), TestLimitsMatchRedis and
// TestSyntaxLevelsMatchRedis (seconds of interpreter work per profile).
func replayedTests() []replayedTest {
	return []replayedTest{
		{"TestCommandsMatchRedis", TestCommandsMatchRedis},
		{"TestDumpMatchesRedis", TestDumpMatchesRedis},
		{"TestDumpErrorsMatchRedis", TestDumpErrorsMatchRedis},
		{"TestGeoCommandsMatchRedis", TestGeoCommandsMatchRedis},
		{"TestGeoRandomMatchesRedis", TestGeoRandomMatchesRedis},
		{"TestHLLCommandsMatchRedis", TestHLLCommandsMatchRedis},
		{"TestKeyCommandsMatchRedis", TestKeyCommandsMatchRedis},
		{"TestKeyScriptsMatchRedis", TestKeyScriptsMatchRedis},
		{"TestListCommandsMatchRedis", TestListCommandsMatchRedis},
		{"TestHashCommandsMatchRedis", TestHashCommandsMatchRedis},
		{"TestLPosMatchesRedis", TestLPosMatchesRedis},
		{"TestObjectMatchesRedis", TestObjectMatchesRedis},
		{"TestServerCommandsMatchRedis", TestServerCommandsMatchRedis},
		{"TestCommandInfoMatchesRedis", TestCommandInfoMatchesRedis},
		{"TestSetCommandsMatchRedis", TestSetCommandsMatchRedis},
		{"TestSortMatchesRedis", TestSortMatchesRedis},
		{"TestSortScriptsMatchRedis", TestSortScriptsMatchRedis},
		{"TestStreamsMatchRedis", TestStreamsMatchRedis},
		{"TestStreamGroupsMatchRedis", TestStreamGroupsMatchRedis},
		{"TestStreamTrimMatchesRedis", TestStreamTrimMatchesRedis},
		{"TestStringCommandsMatchRedis", TestStringCommandsMatchRedis},
		{"TestZSetAlgebraMatchesRedis", TestZSetAlgebraMatchesRedis},
		{"TestGeneratedCorpusMatchesRedis", TestGeneratedCorpusMatchesRedis},
		{"TestFunctionsMatchRedis", TestFunctionsMatchRedis},
		{"TestFunctionDumpRestoreMatchesRedis", TestFunctionDumpRestoreMatchesRedis},
		{"TestFunctionCompileErrorsMatchRedis", TestFunctionCompileErrorsMatchRedis},
		{"TestSharedHandlersMatchRedis", TestSharedHandlersMatchRedis},
		{"TestSandboxMatchesRedis", TestSandboxMatchesRedis},
		{"TestRandomMatchesFreshServer", TestRandomMatchesFreshServer},
		{"TestScanExactMatchesRedis", TestScanExactMatchesRedis},
		{"TestEncodingThresholdsMatchRedis", TestEncodingThresholdsMatchRedis},
		{"TestScanIterationMatchesRedis", TestScanIterationMatchesRedis},
		{"TestCurrentScriptsMatchRedis", TestCurrentScriptsMatchRedis},
		{"TestFixtureScriptsMatchRedis", TestFixtureScriptsMatchRedis},
		{"TestServerBuiltTablesMatchRedis", TestServerBuiltTablesMatchRedis},
		{"TestZRangeMatchesRedis", TestZRangeMatchesRedis},
		{"TestZSetNegativeZeroMatchesRedis", TestZSetNegativeZeroMatchesRedis},
	}
}

type replayedTest struct {
	name string
	fn   func(*testing.T)
}

const replayTest = "TestProfilesMatchRecordedServers"

// TestProfilesMatchRecordedServers runs the differential tests for every
// profile against the replies recorded from its server.
func TestProfilesMatchRecordedServers(t *testing.T) {
	if os.Getenv(recordEnv) == "1" {
		t.Skip("recording: the live tests write the recordings this test replays")
	}
	for p := Profile(0); p < profileCount; p++ {
		t.Run(p.String(), func(t *testing.T) {
			rec, err := loadRecording(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, tc := range replayedTests() {
				t.Run(tc.name, func(t *testing.T) {
					if _, ok := rec[tc.name]; !ok {
						t.Skipf("no recording of %s from %s: record it with %s=1 and REDLUA_REDIS_SERVER naming that server", tc.name, p, recordEnv)
					}
					tc.fn(t)
				})
			}
		})
	}
}

// recordedCorpusCases is how much of the generated corpus (from its
// default seed) is recorded and replayed per profile: enough to meet every
// command and script shape, small enough to replay in a second.
const recordedCorpusCases = 300

// corpusSize returns the corpus's case count and seed: the whole corpus
// from seed live, the recorded part when recording or replaying.
func corpusSize(t testing.TB, seed int64) (int, int64) {
	if replaying(t) || os.Getenv(recordEnv) == "1" {
		return recordedCorpusCases, 20261122
	}
	return corpusCases, seed
}

// diffServer is the server a differential test compares the simulator
// with, live or replayed, and the profile the simulator takes for it.
type diffServer struct {
	profile Profile
	client  *redis.Client
}

// Client returns a client of the server (closed when the test ends).
func (d *diffServer) Client() *redis.Client { return d.client }

// diffProfiles remembers, per top-level test name, the profile its
// diffStandalone chose, for diffNew.
var diffProfiles sync.Map

// testPath splits a test name into its profile (when replayed) and the
// differential test's own name.
func testPath(t testing.TB) (p Profile, replayed bool, test string) {
	parts := strings.Split(t.Name(), "/")
	if len(parts) >= 3 && parts[0] == replayTest {
		for q := Profile(0); q < profileCount; q++ {
			if q.String() == parts[1] {
				return q, true, parts[2]
			}
		}
	}
	return Redis70, false, parts[0]
}

// replaying reports whether t runs against recorded replies.
func replaying(t testing.TB) bool { _, r, _ := testPath(t); return r }

// diffStandalone starts (or replays) the server a differential test
// compares with.
func diffStandalone(t *testing.T) *diffServer {
	t.Helper()
	p, replayed, test := testPath(t)
	if replayed {
		return replayServer(t, p, test)
	}
	srv := redistest.Standalone(t)
	probe := srv.Client()
	info, err := probe.Info(context.Background(), "server").Result()
	if err != nil {
		t.Fatalf("INFO server: %v", err)
	}
	p, desc := profileOfInfo(info)
	diffProfiles.Store(test, p)
	// The simulator's SLOWLOG is a server where no command is slow (its
	// time is virtual); a loaded machine makes a real one log commands
	// past 10 ms. Set apart from the compared (and recorded) requests.
	if err := probe.ConfigSet(context.Background(), "slowlog-log-slower-than", "-1").Err(); err != nil {
		t.Fatalf("CONFIG SET slowlog-log-slower-than: %v", err)
	}
	t.Logf("comparing with %s as profile %s", desc, p)
	var rec *recorder
	if os.Getenv(recordEnv) == "1" && isReplayed(test) {
		rec = &recorder{}
		t.Cleanup(func() {
			if t.Failed() || t.Skipped() {
				t.Logf("not recording %s: the test did not pass", test)
				return
			}
			if err := saveRecording(p, test, rec.exchanges); err != nil {
				t.Error(err)
			}
		})
	}
	// ReadTimeout: a case makes a 512 MiB string (BITFIELD at the largest
	// offset) and reads it back, which a loaded machine takes longer than
	// go-redis's default 3 s to send (47 s at load 10 once).
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, MaintNotificationsConfig: noMaint, ReadTimeout: 5 * time.Minute, Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil || rec == nil {
			return conn, err
		}
		return &recordingConn{Conn: conn, rec: rec}, nil
	}})
	t.Cleanup(func() { c.Close() })
	return &diffServer{profile: p, client: c}
}

func isReplayed(test string) bool {
	for _, tc := range replayedTests() {
		if tc.name == test {
			return true
		}
	}
	return false
}

// noMaint keeps go-redis from announcing maintenance notifications on
// connect: what it sends depends on the address, which replay has not.
var noMaint = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}

// diffNew returns a simulator with the profile of the test's server.
func diffNew(t testing.TB, opts ...Option) *Server {
	t.Helper()
	p, replayed, test := testPath(t)
	if !replayed {
		if v, ok := diffProfiles.Load(test); ok {
			p = v.(Profile)
		}
		return New(append([]Option{WithServer(p)}, opts...)...)
	}
	s := New(append([]Option{WithServer(p)}, opts...)...)
	// A virtual clock the test started at time.Now() goes back to when
	// the recorded server answered last, which the test's clock stands for.
	if vc, ok := s.Clock().(*VirtualClock); ok {
		vc.Set(diffNow(t))
	}
	return s
}

// diffNow is the server's present for a test that follows its clock:
// time.Now() live, when the recorded server answered last in replay.
func diffNow(t testing.TB) time.Time {
	if !replaying(t) {
		return time.Now()
	}
	prefix := strings.Join(strings.Split(t.Name(), "/")[:3], "/")
	if v, ok := replayers.Load(prefix); ok {
		if at, ok := v.(*replayer).lastReply(); ok {
			return at
		}
	}
	return time.Now()
}

// knownDifferences are commands whose replies a profile other than
// Redis70 does not reproduce, by the start of the test's line, with why.
// Both sides still run them, so recordings and replay stay in step.
var knownDifferences = []struct{ test, prefix, why string }{
	// The upstream builds the profiles were recorded from use libc's
	// malloc, Debian's 7.0.15 jemalloc; the simulator reports jemalloc's
	// size classes.
	{"TestServerCommandsMatchRedis", "MEMORY USAGE", "sizes follow the allocator the server was built with"},
}

// knownDifferentCases are whole cases (subtests, by name after the
// differential test's) a profile other than Redis70 does not reproduce.
var knownDifferentCases = []struct{ name, why string }{
	// From 7.2 PFCOUNT and PFMERGE accept some sparse HLLs whose runs fall
	// short of 16,384 registers; the simulator still calls them corrupt.
	{"TestHLLCommandsMatchRedis/12_", "7.2's merge of a short sparse HyperLogLog"},
}

// skipKnownDifferentCase skips t, a case of a differential test, when it
// is a known difference under its profile. Call it before the case sends
// anything, so that recording and replay skip alike.
func skipKnownDifferentCase(t *testing.T) {
	t.Helper()
	p := diffNewProfile(t)
	if p == Redis70 {
		return
	}
	name := t.Name()
	if _, replayed, _ := testPath(t); replayed {
		name = strings.Join(strings.Split(name, "/")[2:], "/")
	}
	for _, k := range knownDifferentCases {
		if strings.HasPrefix(name, k.name) {
			t.Skipf("known difference under %s: %s (docs/simulator.md)", p, k.why)
		}
	}
}

// knownDifference reports whether line's reply is a known difference
// under t's profile.
func knownDifference(t testing.TB, line string) bool {
	if diffNewProfile(t) == Redis70 {
		return false
	}
	_, _, test := testPath(t)
	for _, k := range knownDifferences {
		if k.test == test && strings.HasPrefix(line, k.prefix) {
			return true
		}
	}
	return false
}

// diffNewProfile is the profile diffNew gives t's simulator.
func diffNewProfile(t testing.TB) Profile {
	p, replayed, test := testPath(t)
	if !replayed {
		if v, ok := diffProfiles.Load(test); ok {
			p = v.(Profile)
		}
	}
	return p
}

// profileOfInfo picks the profile for a server from its INFO server: the
// line's own, or for a release no profile names the nearest older line.
func profileOfInfo(info string) (Profile, string) {
	field := func(name string) string {
		for _, line := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
				return v
			}
		}
		return ""
	}
	var maj, min int
	if v := field("valkey_version"); v != "" {
		fmt.Sscanf(v, "%d.%d", &maj, &min)
		if maj >= 8 {
			return Valkey80, "valkey " + v
		}
		return Valkey72, "valkey " + v
	}
	v := field("redis_version")
	fmt.Sscanf(v, "%d.%d", &maj, &min)
	switch n := maj*100 + min; {
	case n >= 709: // 8.0's milestones report 7.9.x
		return Redis80, "redis " + v
	case n >= 704:
		return Redis74, "redis " + v
	case n >= 702:
		return Redis72, "redis " + v
	}
	return Redis70, "redis " + v
}

// exchange is one request and the raw RESP reply it got.
type exchange struct {
	args   []string
	digest string // instead of args, for a long request: requestDigest's
	reply  []byte
	at     int64 // when the reply came, Unix ms
}

// longRequest is the size past which a recording keeps a request's digest
// instead of its arguments: scripts of thousands of lines, big values.
const longRequest = 240

// requestDigest is a long request's stand-in in a recording.
func requestDigest(args []string) string {
	h := sha1.New()
	for _, a := range args {
		fmt.Fprintf(h, "%d:%s", len(a), a)
	}
	return fmt.Sprintf("#%x", h.Sum(nil)[:10])
}

// requestSize is the bytes of a request's arguments.
func requestSize(args []string) int {
	n := 0
	for _, a := range args {
		n += len(a) + 1
	}
	return n
}

// recorder collects a live test's exchanges in the order replies arrived.
type recorder struct {
	mu        sync.Mutex
	exchanges []exchange
}

// recordingConn tees a connection: requests written and replies read are
// paired in order (go-redis pipelines, but a server answers in order).
type recordingConn struct {
	net.Conn
	rec          *recorder
	mu           sync.Mutex
	out, in      []byte
	pendingReqs  [][]string
	pendingBytes []byte
}

func (c *recordingConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	c.out = append(c.out, b...)
	for {
		n, ok := respLen(c.out)
		if !ok {
			break
		}
		c.pendingReqs = append(c.pendingReqs, parseRequest(c.out[:n]))
		c.out = c.out[n:]
	}
	c.mu.Unlock()
	return c.Conn.Write(b)
}

func (c *recordingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.mu.Lock()
	c.in = append(c.in, b[:n]...)
	for len(c.pendingReqs) > 0 {
		m, ok := respLen(c.in)
		if !ok {
			break
		}
		reply := append([]byte(nil), c.in[:m]...)
		c.in = c.in[m:]
		c.rec.mu.Lock()
		c.rec.exchanges = append(c.rec.exchanges, exchange{args: c.pendingReqs[0], reply: reply, at: time.Now().UnixMilli()})
		c.rec.mu.Unlock()
		c.pendingReqs = c.pendingReqs[1:]
	}
	c.mu.Unlock()
	return n, err
}

// respLen returns the length of the one complete RESP2 or RESP3 value at
// the start of b, or false when b holds less than one.
func respLen(b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, false
	}
	end := bytes.Index(b, []byte("\r\n"))
	if end < 0 {
		return 0, false
	}
	head := end + 2
	count := func() int { n, _ := strconv.Atoi(string(b[1:end])); return n }
	switch b[0] {
	case '$', '=', '!':
		n := count()
		if n < 0 {
			return head, true
		}
		if len(b) < head+n+2 {
			return 0, false
		}
		return head + n + 2, true
	case '*', '~', '>', '%', '|':
		n := count()
		if b[0] == '%' || b[0] == '|' {
			n *= 2
		}
		if b[0] == '|' {
			n++ // an attribute precedes the value it describes
		}
		pos := head
		for i := 0; i < n; i++ {
			m, ok := respLen(b[pos:])
			if !ok {
				return 0, false
			}
			pos += m
		}
		return pos, true
	}
	return head, true // + - : _ , # (
}

// parseRequest reads the arguments of a request (an array of bulk strings).
func parseRequest(b []byte) []string {
	end := bytes.Index(b, []byte("\r\n"))
	n, _ := strconv.Atoi(string(b[1:end]))
	pos := end + 2
	args := make([]string, 0, n)
	for i := 0; i < n; i++ {
		e := bytes.Index(b[pos:], []byte("\r\n")) + pos
		l, _ := strconv.Atoi(string(b[pos+1 : e]))
		args = append(args, string(b[e+2:e+2+l]))
		pos = e + 2 + l + 2
	}
	return args
}

// The recording of a profile is testdata/servers/<profile>.txt.gz: for
// each test a line "= <test>" and then one line per exchange: the request's
// arguments (or, for a long request, "#" and its digest) and the raw
// reply, each Go-quoted, and the milliseconds since the previous reply
// (since 0 on a test's first line), separated by tabs.
// Replay sets a simulator's virtual clock to when the last reply came, so
// TTLs and times compare as they did live.
func recordingPath(p Profile) string {
	return filepath.Join("testdata", "servers", p.String()+".txt.gz")
}

// recordMu serialises rewrites of the recordings.
var recordMu sync.Mutex

// recordingCache holds the recordings replay has read, per profile.
var recordingCache sync.Map

func loadRecording(p Profile) (map[string][]exchange, error) {
	if v, ok := recordingCache.Load(p); ok {
		return v.(map[string][]exchange), nil
	}
	out, err := readRecording(p)
	if err != nil {
		return nil, err
	}
	recordingCache.Store(p, out)
	return out, nil
}

func readRecording(p Profile) (map[string][]exchange, error) {
	out := map[string][]exchange{}
	f, err := os.Open(recordingPath(p))
	if os.IsNotExist(err) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", recordingPath(p), err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 64<<20)
	test := ""
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if name, ok := strings.CutPrefix(text, "= "); ok {
			test = name
			out[test] = []exchange{}
			continue
		}
		req, rep, ok := strings.Cut(text, "\t")
		rep, delta, ok2 := strings.Cut(rep, "\t")
		if !ok || !ok2 || test == "" {
			return nil, fmt.Errorf("%s:%d: want \"= test\" or \"request<TAB>reply\"", recordingPath(p), line)
		}
		var e exchange
		if strings.HasPrefix(req, "#") {
			e.digest, req = req, ""
		}
		for req != "" {
			q, err := strconv.QuotedPrefix(req)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %v", recordingPath(p), line, err)
			}
			a, _ := strconv.Unquote(q)
			e.args = append(e.args, a)
			req = strings.TrimPrefix(req[len(q):], " ")
		}
		r, err := strconv.Unquote(rep)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", recordingPath(p), line, err)
		}
		e.reply = []byte(r)
		d, err := strconv.ParseInt(delta, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", recordingPath(p), line, err)
		}
		if n := len(out[test]); n > 0 {
			d += out[test][n-1].at
		}
		e.at = d
		out[test] = append(out[test], e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", recordingPath(p), err)
	}
	return out, nil
}

// saveRecording replaces test's section of p's recording.
func saveRecording(p Profile, test string, exs []exchange) error {
	recordMu.Lock()
	defer recordMu.Unlock()
	all, err := readRecording(p)
	if err != nil {
		return err
	}
	all[test] = exs
	names := make([]string, 0, len(all))
	for name := range all {
		if isReplayed(name) { // a test no longer replayed loses its section
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	w := bufio.NewWriter(zw)
	for _, name := range names {
		fmt.Fprintf(w, "= %s\n", name)
		var last int64
		for _, e := range all[name] {
			switch {
			case e.digest != "":
				w.WriteString(e.digest)
			case requestSize(e.args) > longRequest:
				w.WriteString(requestDigest(e.args))
			default:
				for i, a := range e.args {
					if i > 0 {
						w.WriteByte(' ')
					}
					w.WriteString(strconv.Quote(a))
				}
			}
			w.WriteByte('\t')
			w.WriteString(strconv.Quote(string(e.reply)))
			fmt.Fprintf(w, "\t%d\n", e.at-last)
			last = e.at
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(recordingPath(p)), 0o755); err != nil {
		return err
	}
	return os.WriteFile(recordingPath(p), buf.Bytes(), 0o644)
}

// replayer answers a replayed test's requests from its recording.
type replayer struct {
	mu       sync.Mutex
	script   []exchange
	next     int
	mismatch string
}

// replayServer returns a diffServer whose client is answered from the
// recording of test on p's server.
func replayServer(t *testing.T, p Profile, test string) *diffServer {
	t.Helper()
	rec, err := loadRecording(p)
	if err != nil {
		t.Fatal(err)
	}
	exs, ok := rec[test]
	if !ok {
		t.Skipf("no recording of %s from %s", test, p)
	}
	r := &replayer{script: exs}
	key := strings.Join(strings.Split(t.Name(), "/")[:3], "/")
	replayers.Store(key, r)
	t.Cleanup(func() { replayers.Delete(key) })
	c := redis.NewClient(&redis.Options{Addr: "replay", MaxRetries: -1, MaintNotificationsConfig: noMaint, Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
		client, server := net.Pipe()
		go r.serve(server)
		return client, nil
	}})
	t.Cleanup(func() {
		c.Close()
		r.mu.Lock()
		defer r.mu.Unlock()
		switch {
		case r.mismatch != "":
			t.Errorf("replaying %s from %s: %s; if the test changed on purpose, record it again with %s=1 REDLUA_REDIS_SERVER=<a %s server>", test, recordingPath(p), r.mismatch, recordEnv, p)
		case r.next < len(r.script) && !t.Failed() && !t.Skipped():
			t.Errorf("replaying %s from %s: the test sent %d requests, the recording has %d; record it again", test, recordingPath(p), r.next, len(r.script))
		}
	})
	return &diffServer{profile: p, client: c}
}

// replayers holds the replayer of each running replayed test, by the
// name of the test that started it, for diffNew.
var replayers sync.Map

// lastReply returns when the last request served got its reply, live.
func (r *replayer) lastReply() (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.next == 0 {
		return time.Time{}, false
	}
	return time.UnixMilli(r.script[r.next-1].at), true
}

// serve answers one connection's requests in the recording's order.
func (r *replayer) serve(conn net.Conn) {
	defer conn.Close()
	br := bufio.NewReader(conn)
	var buf []byte
	for {
		n, ok := respLen(buf)
		if !ok {
			chunk := make([]byte, 4096)
			m, err := br.Read(chunk)
			if err != nil {
				return
			}
			buf = append(buf, chunk[:m]...)
			continue
		}
		args := parseRequest(buf[:n])
		buf = buf[n:]
		if _, err := conn.Write(r.answer(args)); err != nil {
			return
		}
	}
}

func (r *replayer) answer(args []string) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mismatch == "" {
		switch {
		case r.next >= len(r.script):
			r.mismatch = fmt.Sprintf("request %d %.200q is past the recording's end", r.next+1, args)
		case r.script[r.next].digest != "" && r.script[r.next].digest != requestDigest(args):
			r.mismatch = fmt.Sprintf("request %d is %.200q, not the long request recorded (digest %s)", r.next+1, args, r.script[r.next].digest)
		case r.script[r.next].digest == "" && !equalArgs(r.script[r.next].args, args):
			r.mismatch = fmt.Sprintf("request %d is %.200q, the recording has %.200q", r.next+1, args, r.script[r.next].args)
		default:
			r.next++
			return r.script[r.next-1].reply
		}
	}
	return []byte("-ERR replay: " + strings.NewReplacer("\r", " ", "\n", " ").Replace(r.mismatch) + "\r\n")
}

func equalArgs(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

var _ io.Reader = (*recordingConn)(nil)
