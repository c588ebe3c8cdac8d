package main

import (
	"strings"
	"testing"
)

// A --shared-quota or variable value that names no usable store is a usage
// error naming it, before anything is sent, its password hidden.
func TestSharedQuotaUsage(t *testing.T) {
	for _, c := range []struct {
		name string
		env  string
		args []string
		want string
	}{
		{"flag", "", []string{"get", "--shared-quota", "redis://127.0.0.1:6379/x", "https://x.example/"}, "--shared-quota: redisquota: invalid store URL"},
		{"variable", "redis://127.0.0.1:6379/x", []string{"harvest", "https://x.example/"}, envSharedQuota + ": redisquota: invalid store URL"},
		{"demo", "", []string{"demo", "--shared-quota", "redis://127.0.0.1:6379/x"}, "invalid store URL"},
		{"unknown scheme", "", []string{"get", "--shared-quota", "memcache://h:1", "https://x.example/"}, "unknown store"},
		{"no host", "", []string{"get", "--shared-quota", "redis:", "https://x.example/"}, "want redis://HOST:PORT/DB"},
		{"password hidden", "", []string{"get", "--shared-quota", "redis://u:hunter2@h:1/x", "https://x.example/"}, "invalid store URL"},
		{"fleet bound", "", []string{"demo", "--fleet", "0"}, "--fleet 0"},
		{"fleet with output", "", []string{"demo", "--fleet", "2", "-o", "x.jsonl"}, "-o is for one"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(envSharedQuota, c.env)
			code, _, stderr := cli(t, c.args...)
			if code != exitUsage || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitUsage, c.want)
			}
			if strings.Contains(stderr, "hunter2") {
				t.Errorf("the store's password is in %q", stderr)
			}
		})
	}
}

// demo --fleet runs several harvesters at once and prints their combined
// figures, every harvest checked.
func TestDemoFleetWithoutSharing(t *testing.T) {
	t.Setenv(envSharedQuota, "")
	code, out, stderr := cli(t, "demo", "--fleet", "3", "--rows", "3000", "--faults", "mild", "-q")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"3 harvesters, each on its own quota", "harvester 3: 3000 rows", "3 of 3 harvests exact", "attempts:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
