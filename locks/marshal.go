package locks

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// marshalled is a Lease's portable form.
type marshalled struct {
	Name       string `json:"name,omitempty"`
	NameBase64 string `json:"name_b64,omitempty"` // for names that are not valid UTF-8, which JSON cannot carry
	Owner      string `json:"owner"`
	Token      int64  `json:"token"`
	TTLMillis  int64  `json:"ttl_ms"`
	Fair       bool   `json:"fair,omitempty"`
	Kind       string `json:"kind,omitempty"`    // "read", "write" (RWMutex), "permits" (Semaphore) or "quorum"
	Count      int    `json:"permits,omitempty"` // permits held, for a Semaphore lease
	// Attempt is the id of the call that took a Mutex hold, which the server
	// tells apart from other calls of the same owner (empty for a reentrant
	// owner, and in leases marshalled before it existed).
	Attempt string `json:"attempt,omitempty"`
}

// Marshal returns the lease as a string that another process can pass to
// Client.Resume to extend or release the lock. Any lock name survives the
// trip, including bytes that are not UTF-8.
func (l *Lease) Marshal() (string, error) {
	m := marshalled{Owner: l.owner, Token: l.token, TTLMillis: l.s.ttl.Milliseconds(), Fair: l.s.fair, Kind: l.hold.kind(), Count: l.count}
	switch h := l.hold.(type) {
	case mutexHold:
		m.Attempt = h.attempt
	case quorumHold:
		m.Attempt = h.attempt
	}
	if utf8.ValidString(l.k.name) {
		m.Name = l.k.name
	} else {
		m.NameBase64 = base64.StdEncoding.EncodeToString([]byte(l.k.name))
	}
	b, err := json.Marshal(m)
	return string(b), err
}

// maxAttemptBytes bounds a resumed lease's attempt id: the client makes
// them 11 base64url characters long.
const maxAttemptBytes = 64

// Resume rebuilds a lease marshalled by Lease.Marshal, possibly in another
// process, so it can be extended or released. The resumed lease has no
// watchdog; its local deadline counts from now, so Done may close late:
// call Extend to confirm ownership. Until a server has confirmed it, an
// Extend or Unlock that finds the owner not holding the lock returns
// ErrNotHeld (nothing shows the owner ever held it), unless the owner token
// holds the lock through another call, which means this hold ran out:
// ErrLockLost. A string that is not a marshalled lease
// is an error (it does not match ErrNotHeld: nothing was asked of the server).
// A quorum Mutex's lease resumes on a quorum Client over the same servers
// (NewQuorum, in the same order), and any other lease on a Client of its
// one server; the other way round is an error.
//
// A lease is checked against the limits its lock was made within, since
// the string may be forged or corrupted: a name longer than MaxNameBytes,
// an owner token longer than MaxOwnerBytes, more than MaxPermits permits,
// a TTL above MaxTTL, or fields that belong to another kind of lease are
// refused before any round trip, with an error that wraps
// ErrInvalidArgument (and so does a string that is no lease at all).
func (c *Client) Resume(s string) (*Lease, error) {
	const how = "; pass the string Lease.Marshal returned"
	if len(s) > maxLeaseBytes {
		return nil, invalidf("locks: Resume: %d bytes is longer than any marshalled lease (at most %d)%s", len(s), maxLeaseBytes, how)
	}
	var m marshalled
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, invalidf("locks: Resume: not a marshalled lease (%v)%s", err, how)
	}
	name := m.Name
	if m.NameBase64 != "" {
		b, err := base64.StdEncoding.DecodeString(m.NameBase64)
		if err != nil || m.Name != "" {
			return nil, invalidf("locks: Resume: a malformed name_b64 field%s", how)
		}
		name = string(b)
	}
	k, err := c.keysFor(name)
	if err != nil {
		return nil, fmt.Errorf("locks: Resume: %w", err)
	}
	var problems []error
	if ownerToken(m.Owner) == "" {
		// An owner that is only a call's id (see RWMutex.holder) has no token.
		problems = append(problems, fmt.Errorf("no owner token in owner %s", shortQuote(m.Owner)))
	}
	// The owner is a token (WithOwner's, or a random one), perhaps joined
	// to a call's attempt id (RWMutex.holder).
	if len(m.Owner) > MaxOwnerBytes+len(callSeparator)+maxAttemptBytes {
		problems = append(problems, fmt.Errorf("owner %s is longer than an owner token (MaxOwnerBytes, %d) and a call's id", shortQuote(m.Owner), MaxOwnerBytes))
	}
	if len(m.Attempt) > maxAttemptBytes {
		problems = append(problems, fmt.Errorf("attempt %s is longer than %d bytes", shortQuote(m.Attempt), maxAttemptBytes))
	}
	if strings.Contains(m.Attempt, "\t") {
		// A tab separates the fields of the hold's record on the server.
		problems = append(problems, fmt.Errorf("attempt %s contains a tab; the client makes attempt ids without one", shortQuote(m.Attempt)))
	}
	if m.TTLMillis < MinTTL.Milliseconds() || m.TTLMillis > MaxTTL.Milliseconds() {
		problems = append(problems, fmt.Errorf("ttl_ms %d is outside %d..%d (MinTTL..MaxTTL)", m.TTLMillis, MinTTL.Milliseconds(), MaxTTL.Milliseconds()))
	}
	if m.Token < 1 {
		problems = append(problems, fmt.Errorf("token %d is not positive", m.Token))
	}
	var hold holdKind = mutexHold{attempt: m.Attempt}
	switch m.Kind {
	case "":
	case "quorum":
		hold = quorumHold{attempt: m.Attempt}
	case "read":
		hold = readHold{}
	case "write":
		hold = writeHold{reads: true} // the owner may read too: its reads outlast the write hold
	case "permits":
		hold = permitHold{}
		if m.Count < 1 || m.Count > MaxPermits {
			problems = append(problems, fmt.Errorf("a semaphore lease with %d permits (1..MaxPermits, %d)", m.Count, MaxPermits))
		}
	default:
		problems = append(problems, fmt.Errorf("unknown lease kind %s", shortQuote(m.Kind)))
	}
	if m.Fair && m.Kind != "" {
		problems = append(problems, fmt.Errorf("fair on a %s lease (only a Mutex lease is fair)", shortQuote(m.Kind)))
	}
	// A quorum lease lives on every server of its quorum, any other on one
	// server: resumed on the other kind of Client, its Extend and Unlock
	// would reach the wrong servers.
	switch quorumLease := m.Kind == "quorum"; {
	case quorumLease && !c.quorum():
		problems = append(problems, errors.New("a quorum lease needs a quorum Client over the same servers (NewQuorum)"))
	case !quorumLease && c.quorum():
		problems = append(problems, errors.New("a quorum Client resumes only quorum leases; resume this one on a Client of its server (New)"))
	}
	if m.Kind != "" && m.Kind != "quorum" && m.Attempt != "" {
		problems = append(problems, fmt.Errorf("attempt %s on a %s lease (only a Mutex lease has one)", shortQuote(m.Attempt), shortQuote(m.Kind)))
	}
	if m.Kind != "permits" && m.Count != 0 {
		problems = append(problems, fmt.Errorf("permits %d on a %s lease", m.Count, shortQuote(m.Kind)))
	}
	if len(problems) > 0 {
		return nil, invalidf("locks: Resume: %w%s", errors.Join(problems...), how)
	}
	st := c.defaults
	st.ttl = time.Duration(m.TTLMillis) * time.Millisecond
	st.fair = m.Fair
	st.watchdog = false
	return newResumedLease(c, &k, &st, hold, m.Owner, m.Token, m.Count, c.clock.Now(), st.ttl), nil
}
