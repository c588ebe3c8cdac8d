//go:build !unix

package main

import (
	"io/fs"
	"os"
)

// Without O_NOFOLLOW, the Lstat checks before each open are the guard.
const (
	noFollow = 0
	noCTTY   = 0
)

// linkCount cannot be read here; every file counts as having one name.
func linkCount(fs.FileInfo) uint64 { return 1 }

// ownerOf cannot be read here.
func ownerOf(fs.FileInfo) (int, bool) { return 0, false }

// flockExclusive cannot lock here: every run takes the lock.
func flockExclusive(*os.File) (bool, error) { return true, nil }
