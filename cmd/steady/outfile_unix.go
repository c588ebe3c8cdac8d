//go:build unix

package main

import "syscall"

// noFollow makes an open fail on a symbolic link at the name; noCTTY keeps
// a terminal opened as an output from becoming the controlling one.
const (
	noFollow = syscall.O_NOFOLLOW
	noCTTY   = syscall.O_NOCTTY
)
