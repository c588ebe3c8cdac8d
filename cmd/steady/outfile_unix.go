//go:build unix

package main

import (
	"errors"
	"io/fs"
	"os"
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

// flockExclusive takes an exclusive flock on f without waiting; false when
// another open file holds it.
func flockExclusive(f *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case errors.Is(err, syscall.EINTR):
			continue
		}
		return false, err
	}
}
