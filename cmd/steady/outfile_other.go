//go:build !unix

package main

// Without O_NOFOLLOW, the Lstat checks before each open are the guard.
const (
	noFollow = 0
	noCTTY   = 0
)
