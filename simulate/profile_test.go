package simulate

import (
	"context"
	"strings"
	"testing"
)

// TestProfileFormatDouble checks 7.2's shortest double format against
// what redis-server 7.2.6 answered ZSCAN for each score.
func TestProfileFormatDouble(t *testing.T) {
	for in, want := range map[float64]string{
		0.1: "0.1", 1.5e-7: "1.5e-7", 1e20: "1e+20", 123456789012345678: "123456789012345680",
		1e17: "100000000000000000", 1e18: "1000000000000000000", 1e19: "1e+19", 1.5e19: "1.5e+19",
		0.000001: "0.000001", 0.0000001: "1e-7", 1.5e-6: "1.5e-6", 123.456e-6: "1.23456e-4", -2.5e-5: "-0.000025",
		3: "3", 1e-300: "1e-300", 1.7976931348623157e308: "1.7976931348623157e+308", 12345.678: "12345.678",
		5e-324: "5e-324", -1e19: "-1e+19", -1e18: "-1000000000000000000", 0: "0",
	} {
		if got := Redis72.formatDouble(in); got != want {
			t.Errorf("Redis72.formatDouble(%g) = %q, want %q", in, got, want)
		}
	}
	if got := Redis70.formatDouble(0.1); got != "0.10000000000000001" {
		t.Errorf("Redis70.formatDouble(0.1) = %q", got)
	}
}

// TestWithServerRefusesUnknownProfile checks that a Profile no constant
// names makes every call fail with the supported names, not a panic.
func TestWithServerRefusesUnknownProfile(t *testing.T) {
	ctx := context.Background()
	s := New(WithServer(Profile(42)))
	err := s.Do(ctx, "PING").Err()
	if err == nil || !strings.Contains(err.Error(), "Profile(42)") || !strings.Contains(err.Error(), "valkey-8.0") {
		t.Fatalf("Do on an unknown profile: %v", err)
	}
	if err := s.RunSource(ctx, "return 1", nil).Err(); err == nil {
		t.Fatal("RunSource on an unknown profile succeeded")
	}
	for p := Profile(0); p < profileCount; p++ {
		got, err := New(WithServer(p)).RunSource(ctx, "return redis.REDIS_VERSION", nil).Text()
		if err != nil || got != p.facts().redisVersion {
			t.Errorf("%v: REDIS_VERSION = %q, %v", p, got, err)
		}
	}
}
