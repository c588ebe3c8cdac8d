package main

import "os"

// setProcs sets GOMAXPROCS for a harvest: main sets it to
// runtime.GOMAXPROCS; tests, which run many commands in one process, leave
// it nil.
var setProcs func(int) int

// procs is the GOMAXPROCS a harvest runs with, or 0 to keep the process's
// (ADR 0369). One page at a time into a plain output runs on one P: each
// page crosses from net/http's goroutines to the walk's and the writer's,
// and on a second P every crossing wakes a thread. Compression and Parquet
// keep every P, since they overlap with the fetching, and so do
// --concurrent walks; a GOMAXPROCS the user set wins.
func (j *job) procs() int {
	if os.Getenv("GOMAXPROCS") != "" || j.pagesAtOnce() > 1 {
		return 0
	}
	switch j.format {
	case fmtJSONL, fmtJSON, fmtCSV, fmtCSVFlat:
		return 1
	}
	return 0
}
