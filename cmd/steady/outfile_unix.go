//go:build unix

package main

import (
	"io/fs"
	"syscall"
)

// noFollow makes an open fail on a symbolic link at the name; noCTTY keeps
// a terminal opened as an output from becoming the controlling one.
const (
	noFollow = syscall.O_NOFOLLOW
	noCTTY   = syscall.O_NOCTTY
)

// linkCount is the number of names fi's file has.
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// ownerOf is the uid that owns fi's file.
func ownerOf(fi fs.FileInfo) (int, bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid), true
	}
	return 0, false
}
