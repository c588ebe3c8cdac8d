package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// One writer per output (ADR 305): get -o FILE and harvest -o FILE hold an
// exclusive lock on FILE.lock for the whole run, so two runs started
// together (cron, a retry loop) never share a partial file. The second says
// so and exits 2. The kernel drops the lock when its holder dies, however it
// dies, so a lock file left behind by a killed run is not stale: the next
// run simply takes it. The file holds the holder's pid, for people only.

func lockPath(out string) string { return out + ".lock" }

// outputLock is a held lock; release it once.
type outputLock struct {
	f    *os.File // nil where locks are not supported
	path string
}

// lockOutput takes the lock of out or fails with a usage error naming the
// lock file. A lock file that is not a regular file of the caller's, or
// that another run replaced while it was being taken, is never used.
func lockOutput(out string) (*outputLock, error) {
	path := lockPath(out)
	for try := 0; ; try++ {
		if st, err := os.Lstat(path); err == nil && !st.Mode().IsRegular() && st.Mode()&fs.ModeSymlink == 0 {
			// Not even opened: opening some devices does something.
			return nil, usagef("%s is a %s, not a lock steady made; remove it", path, describe(st.Mode()))
		}
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|noFollow|noCTTY, 0o600)
		if errors.Is(err, syscall.ELOOP) {
			return nil, usagef("%s is a symbolic link, not a lock steady made; remove it", path)
		}
		if err != nil {
			return nil, usagef("cannot write the output %s: %v", out, unwrapPathError(err))
		}
		st, err := f.Stat()
		switch {
		case err == nil && !st.Mode().IsRegular():
			err = usagef("%s changed while it was opened; refusing it", path)
		case err == nil:
			err = checkPrivate(path, st)
		}
		if err != nil {
			_ = f.Close()
			return nil, err
		}
		held, err := flockExclusive(f)
		if err != nil {
			_ = f.Close()
			return nil, usagef("cannot lock the output %s: %v", out, err)
		}
		if !held {
			_ = f.Close()
			return nil, usagef("another steady run is writing %s (it holds %s); wait for it to end rather than run two at once", out, path)
		}
		// A run that finished between our open and our lock removed the
		// name: the lock is on a file nobody else will find. Take the one
		// at the name now.
		if now, err := os.Lstat(path); err != nil || !os.SameFile(now, st) {
			_ = f.Close()
			if try < 10 {
				continue
			}
			return nil, usagef("the lock %s keeps changing; another program is replacing it", path)
		}
		_ = f.Truncate(0)
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		return &outputLock{f: f, path: path}, nil
	}
}

// release removes the lock file while still holding it, then drops the
// lock: a run waiting on the old file then finds the name gone and retries.
func (l *outputLock) release() {
	if l == nil || l.f == nil {
		return
	}
	_ = os.Remove(l.path)
	_ = l.f.Close()
	l.f = nil
}

// checkPrivate refuses a file steady keeps beside an output (its partial,
// record, state or lock) that another local user could have planted or
// can change (ADR 306): one not owned by the caller, or one writable by
// group or others in a directory that group or others can write.
func checkPrivate(path string, fi fs.FileInfo) error {
	if owner, ok := ownerOf(fi); ok && owner != os.Geteuid() {
		return usagef("refusing %s: it is owned by another user (uid %d), not by you (uid %d), so its content is theirs; remove it, or choose another output", path, owner, os.Geteuid())
	}
	if fi.Mode().Perm()&0o022 == 0 {
		return nil
	}
	dir, err := os.Stat(filepath.Dir(path))
	if err == nil && dir.Mode().Perm()&0o022 == 0 {
		return nil // only its owner can reach it to write
	}
	return usagef("refusing %s: it is writable by other users (mode %04o) in a directory they can write, so its content cannot be trusted; remove it, or choose another output", path, fi.Mode().Perm())
}
