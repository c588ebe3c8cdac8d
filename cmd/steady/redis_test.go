package main

import (
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/steadyhttp/steady/redisquota/redistest"
	"github.com/steadyhttp/steady/steadytest"
)

func redisHarvestServer(t *testing.T, rows int) string {
	srv := steadytest.NewServer(steadytest.ServerOptions{Rows: rows, DefaultLimit: 100, MaxLimit: 100, LogLimit: -1})
	t.Cleanup(srv.Close)
	return srv.URL + steadytest.ItemsPath
}

func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// Redis unreachable at start: the command warns once, runs on local pacing
// and budget, and the harvest completes, every row once.
func TestHarvestWithRedisUnreachable(t *testing.T) {
	out := filepath.Join(t.TempDir(), "rows.jsonl")
	t.Setenv(envSharedQuota, "redis://"+closedPort(t)+"/0?name=gone")
	code, _, stderr := cli(t, "harvest", redisHarvestServer(t, 2500), "-o", out, "-q")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := strings.Count(stderr, "does not answer"); n != 1 {
		t.Errorf("%d warnings in %q; want one", n, stderr)
	}
	check, err := checkIDs(out, 2500)
	if err != nil || !check.exact() {
		t.Errorf("harvest: %v, %v", check, err)
	}
}

// demo --fleet with a shared quota: N harvesters through one Redis, their
// combined figures printed, every harvest exact, and the fleet's state in
// Redis under the namespace.
func TestDemoFleetThroughRedis(t *testing.T) {
	srv := redistest.Start(t)
	t.Setenv(envSharedQuota, "")
	code, out, stderr := cli(t, "demo", "--fleet", "3", "--rows", "3000", "--faults", "mild", "-q",
		"--shared-quota", srv.URL("demo"))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"3 harvesters, through one shared quota", "3 of 3 harvests exact", "attempts:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// A healthy store may miss its deadline on a loaded machine; it is
	// then reported lost for a timeout, and nothing else.
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, "does not answer") && !strings.Contains(line, "timeout") {
			t.Errorf("a healthy store was reported lost: %s", line)
		}
	}
}
