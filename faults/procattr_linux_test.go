package faults_test

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill the server when the test process dies
// without stopping it (a panic, go test's -timeout), so no toxiproxy
// outlives an aborted run.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
