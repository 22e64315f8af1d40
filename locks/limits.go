package locks

import (
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"
)

// Limits on what a caller passes. Redis runs one script at a time for
// every client of the server, and a lock's scripts run on a Redis that
// many services share: a call whose server work grew with a number the
// caller chose would stall everyone else. The client refuses a value
// beyond these limits before any round trip, with an error that wraps
// ErrInvalidArgument and names the limit. docs/failure-model.md ("What a
// caller cannot do to the server") has the measurements behind them.
const (
	// MaxNameBytes is the longest lock name, in bytes: as long as the
	// longest S3 object key, room for a row's key, a URL or a path. Every
	// call sends the name inside up to a dozen keys, and every redis.call
	// in a script copies and hashes its key: a script that touches many
	// entries (a Semaphore's permits, a MultiLock's names) costs about
	// 1 µs more per entry for each KiB of name on Redis 7.0. Name a longer
	// resource by a hash of it.
	MaxNameBytes = 1 << 10
	// MaxOwnerBytes is the longest owner token (WithOwner). The token is
	// stored with every hold and sent with every call, as a name is.
	MaxOwnerBytes = 1 << 10
	// MaxLabelBytes is the longest label (WithLabel): it is stored in every
	// hold's metadata.
	MaxLabelBytes = 1 << 10
	// MaxPermits bounds a Semaphore's permit count (Client.Semaphore,
	// SetPermits) and so the permits one Acquire, TryAcquire or resumed
	// lease can hold: 2^53, up to which every count and sum stays an exact
	// integer in Lua's numbers. The semaphore scripts keep one record per
	// holder, whatever its count, so no script's work grows with a count:
	// an uncontended Acquire and its release cost the same for 1 permit and
	// for MaxPermits, and what a script walks is bounded by what the server
	// holds (the holders, the queued calls).
	MaxPermits = 1 << 53
	// MaxTTL is the longest lease (WithTTL, Lease.Extend, a resumed lease).
	// A lock whose holder died frees itself within this time, and every
	// deadline derived from it (twice the TTL for the record of a given-up
	// attempt, in milliseconds and microseconds) stays far inside int64 and
	// the exact integers of Lua's numbers. Longer work renews its lease
	// (WithWatchdog).
	MaxTTL = 7 * 24 * time.Hour
	// MaxWaiterTTL is the longest waiter TTL (WithWaiterTTL, WithFair): a
	// waiter that died holds up the queue at most this long. Its Client
	// refreshes a live waiter every third of it, so a longer TTL saves
	// nothing worth the wait behind a dead one.
	MaxWaiterTTL = 24 * time.Hour
	// MaxMultiLockNames is the most names one MultiLock takes. Lock takes
	// them in up to one round trip each and gives each its own lease, and
	// names that share a cluster slot go into one script call: at this
	// limit, with names of MaxNameBytes all in one slot, that call takes
	// about 1.3 ms of server time on Redis 7.0.
	MaxMultiLockNames = 100
)

// maxLeaseBytes bounds what Resume reads: a marshalled lease of the
// longest name (base64 when not UTF-8), owner token and attempt id, with
// room to spare, and it keeps the JSON decoder's work small.
const maxLeaseBytes = 4 * (MaxNameBytes + MaxOwnerBytes)

// quoteBytes is how much of a name or argument an error text quotes.
const quoteBytes = 64

// shortText is s for an error text: s itself when short, otherwise its
// first quoteBytes bytes, cut at a character boundary, with its length.
// Errors never carry a whole caller-sized value: they are logged, sent
// over the network and kept.
func shortText(s string) string {
	if len(s) <= quoteBytes {
		return s
	}
	return prefix(s) + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

// shortQuote is shortText for a value shown in Go syntax (%q).
func shortQuote(s string) string {
	if len(s) <= quoteBytes {
		return strconv.Quote(s)
	}
	return strconv.Quote(prefix(s)) + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

// prefix is s's first quoteBytes bytes, without a character cut in half
// (bytes that are not UTF-8 count one each).
func prefix(s string) string {
	end := quoteBytes
	for end > 0 && end < len(s) && !utf8.RuneStart(s[end]) && end > quoteBytes-utf8.UTFMax {
		end--
	}
	return s[:end]
}

// namesText shows a MultiLock's names in errors: fmt.Sprint's form while
// it is short, otherwise its start and the number of names.
func namesText(names []string) string {
	size := 0
	for _, n := range names {
		size += len(n) + 1
		if size > quoteBytes {
			return fmt.Sprintf("[%s …] (%d names)", shortText(names[0]), len(names))
		}
	}
	return fmt.Sprint(names)
}
