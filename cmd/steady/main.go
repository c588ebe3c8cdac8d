// Command steady fetches from HTTP APIs the way the steady library does:
// bounded retry with a no-progress budget, host-scoped API keys, safe page
// walks, resumable harvests. Run "steady --help" for the commands and "steady
// demo" to watch it harvest through a deliberately flaky API.
//
// Exit codes: 0 success; 1 a request failed; 2 bad usage or settings; 3
// interrupted, resumable with --resume; 4 rate limited beyond the longest
// wait steady will sleep; 5 parked (harvest --park exit) until resume_at.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime"
	"syscall"
)

func main() {
	setProcs = runtime.GOMAXPROCS
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
