package main

import (
	"regexp"
	"strings"
)

// libError is an error of the locks package in the CLI's words: without
// the "locks: " prefixes and the lock name the CLI's own message already
// gives. errors.Is and errors.As still see the original.
type libError struct {
	err  error
	text string
}

func (e libError) Error() string { return e.text }
func (e libError) Unwrap() error { return e.err }

// libErr is err (from locks, about the lock name) in the CLI's words.
func libErr(err error, name string) error {
	if err == nil {
		return nil
	}
	return libError{err: err, text: libText(err, name)}
}

// libPrefix is the package prefix locks puts on its errors; \b keeps
// "blocks: " intact.
var libPrefix = regexp.MustCompile(`\blocks: `)

// libText is err's text without the "locks: " prefixes, and without the
// lock name where locks put it after them.
func libText(err error, name string) string {
	msg := err.Error()
	if name != "" {
		named := regexp.MustCompile(`\blocks: (?:Mutex |quorum Mutex |RWMutex |Semaphore |inspect |force unlock )?` + regexp.QuoteMeta(name) + `: `)
		msg = named.ReplaceAllString(msg, "")
	}
	return strings.TrimSpace(libPrefix.ReplaceAllString(msg, ""))
}
