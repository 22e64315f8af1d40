package locks

// CountEveryServer turns off a quorum Client's restart guard, so that every
// server counts towards a majority however recently it restarted: tests
// use it to show the double grant the guard prevents, and tests of other
// properties over servers they start fresh (up for less than the longest
// lease) restart servers only after one TTL themselves. Call it before the
// Client is used.
func CountEveryServer(c *Client) {
	if c.restarts != nil {
		c.restarts.off = true
	}
}
