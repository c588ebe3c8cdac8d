//go:build !linux

package faults_test

import (
	"os/exec"
	"time"
)

// dieWithParent does nothing where the kernel has no parent-death signal;
// TestMain still stops the server at the end of every normal run.
func dieWithParent(*exec.Cmd) {}

// processCPU is not measured outside Linux.
func processCPU(int) (time.Duration, bool) { return 0, false }
