//go:build !linux

package faults_test

import "os/exec"

// dieWithParent does nothing where the kernel has no parent-death signal;
// TestMain still stops the server at the end of every normal run.
func dieWithParent(*exec.Cmd) {}
