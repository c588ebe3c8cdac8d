package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// Every file steady writes goes through this file: the -o of get, harvest
// and demo, simulate --plot, and harvest's partial and state files. The
// rules (ADR 140): "-" is standard output; an existing FIFO or character
// device (/dev/null, a terminal, /dev/stdout onto a pipe) is written in
// place and never replaced; a regular file appears under its name only when
// complete (temporary file, fsync, rename, fsync of the directory); nothing
// is written through a symbolic link, and no link, directory, socket or
// block device is ever replaced.

// destKind says what an -o argument names.
type destKind int

const (
	destFile    destKind = iota // a regular file, new or replaced by rename
	destStdout                  // "-": standard output
	destSpecial                 // an existing FIFO or character device, written in place
)

// checkOutput says what path names and refuses what steady must not write:
// a directory, a socket, a block device, a symbolic link to anything but a
// FIFO or character device, and, without force, an existing regular file.
func checkOutput(path string, force bool) (destKind, error) {
	if path == "-" {
		return destStdout, nil
	}
	lst, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return destFile, nil
	case err != nil:
		return 0, usagef("cannot use the output %s: %v", path, unwrapPathError(err))
	}
	mode := lst.Mode()
	if mode&fs.ModeSymlink != 0 {
		// /dev/stdout and its kin are links to a terminal or a pipe: those
		// are written into. A link to anything else is refused, since
		// writing through it lets whoever made the link choose the file,
		// and replacing it would replace the link (as root: /dev/stdout).
		if st, err := os.Stat(path); err == nil && inPlace(st.Mode()) {
			return destSpecial, checkOwner(path, st)
		}
		return 0, usagef("the output %s is a symbolic link; steady neither writes through nor replaces one: name the file itself (or -o - for standard output)", path)
	}
	switch {
	case mode.IsDir():
		return 0, usagef("the output %s is a directory", path)
	case inPlace(mode):
		return destSpecial, checkOwner(path, lst)
	case !mode.IsRegular():
		return 0, usagef("the output %s is a %s, which steady does not write", path, kindOf(mode))
	case !force:
		return 0, usagef("the output %s exists; use --force to replace it", path)
	}
	return destFile, nil
}

// checkOwner refuses a FIFO or device that is neither the caller's nor
// root's: one planted where the output should go (a FIFO in /tmp, a link
// to another user's terminal) would hand the data to whoever planted it.
func checkOwner(path string, fi fs.FileInfo) error {
	if owner, ok := ownerOf(fi); ok && owner != 0 && owner != os.Geteuid() {
		return usagef("the output %s is a %s owned by another user (uid %d); steady writes only into special files that are yours or root's", path, describe(fi.Mode()), owner)
	}
	return nil
}

// inPlace reports whether a file of this mode is written into rather than
// replaced: a FIFO or a character device.
func inPlace(m fs.FileMode) bool {
	return m&fs.ModeNamedPipe != 0 || (m&fs.ModeDevice != 0 && m&fs.ModeCharDevice != 0)
}

func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "block device"
	}
	return "special file"
}

// openSpecial opens an existing FIFO or character device for writing. It
// never creates or truncates, and it checks what it opened, so a file
// swapped in after checkOutput is refused unchanged. Opening a FIFO waits
// for a reader; when ctx ends first (Ctrl-C), the wait ends with it.
func openSpecial(ctx context.Context, path string) (*os.File, error) {
	type opened struct {
		f   *os.File
		err error
	}
	done := make(chan opened, 1)
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY|noCTTY, 0)
		done <- opened{f, err}
	}()
	var o opened
	select {
	case o = <-done:
	case <-ctx.Done():
		// Be the FIFO's reader for a moment, so that the open returns
		// and its file can be closed rather than left blocked.
		if st, err := os.Stat(path); err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
			// Not a FIFO: an open that blocks ends with the process.
		} else if r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			o = <-done
			_ = r.Close()
			if o.f != nil {
				_ = o.f.Close()
			}
		}
		return nil, fmt.Errorf("opening the output %s: %w", path, context.Cause(ctx))
	}
	if o.err != nil {
		return nil, usagef("cannot write the output %s: %v", path, unwrapPathError(o.err))
	}
	st, err := o.f.Stat()
	if err != nil || !inPlace(st.Mode()) {
		_ = o.f.Close()
		return nil, usagef("the output %s changed while it was opened; refusing to write it", path)
	}
	if err := checkOwner(path, st); err != nil {
		_ = o.f.Close()
		return nil, err
	}
	return o.f, nil
}

// output is what get -o and simulate --plot write: standard output, a
// special file in place, or a regular file that appears under its name only
// when complete.
type output struct {
	path string
	kind destKind
	w    io.Writer
	f    *os.File // the temporary file (destFile) or the special file
}

// createOutput checks path and opens it for writing; stdout is where "-"
// goes. It fails at once, with the path named, when the directory is not
// writable.
func createOutput(ctx context.Context, path string, force bool, stdout io.Writer) (*output, error) {
	kind, err := checkOutput(path, force)
	if err != nil {
		return nil, err
	}
	o := &output{path: path, kind: kind}
	switch kind {
	case destStdout:
		o.w = stdout
	case destSpecial:
		if o.f, err = openSpecial(ctx, path); err != nil {
			return nil, err
		}
		o.w = o.f
	default:
		if o.f, err = createTemp(path); err != nil {
			return nil, usagef("cannot write the output %s: %v", path, unwrapPathError(err))
		}
		o.w = o.f
	}
	return o, nil
}

func (o *output) Write(p []byte) (int, error) { return o.w.Write(p) }

// commit finishes the output: a regular file is synced and renamed to its
// name, after checking that nothing else took the name meanwhile.
func (o *output) commit() error {
	switch o.kind {
	case destStdout:
		return nil
	case destSpecial:
		f := o.f
		o.f = nil
		if err := f.Close(); err != nil {
			return fmt.Errorf("writing %s: %w", o.path, err)
		}
		return nil
	}
	tmp := o.f.Name()
	defer func() { o.f = nil }()
	if err := o.f.Sync(); err != nil {
		_ = o.f.Close()
		_ = os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", o.path, err)
	}
	if err := o.f.Close(); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", o.path, err)
	}
	return replaceWith(tmp, o.path)
}

// abort drops an unfinished output: a temporary file is removed; a special
// file is closed as it is.
func (o *output) abort() {
	if o.f == nil {
		return
	}
	_ = o.f.Close()
	if o.kind == destFile {
		_ = os.Remove(o.f.Name())
	}
	o.f = nil
}

// replaceWith renames the finished file tmp to path and makes the rename
// durable. The name is checked again first: a link, directory or special
// file that appeared there since the start is refused, not replaced.
func replaceWith(tmp, path string) error {
	if st, err := os.Lstat(path); err == nil && !st.Mode().IsRegular() {
		_ = os.Remove(tmp)
		return usagef("the output %s became a %s during the run; refusing to replace it (the data is lost; run again)", path, describe(st.Mode()))
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func describe(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	}
	return kindOf(m)
}

// syncDir makes a rename or a creation in dir durable. A file system that
// cannot sync a directory (EINVAL) has nothing to make durable that way.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	return nil
}

// outputPerm is the mode an output is created with: the usual 0666, less
// the umask, as the shell's > and every common tool give a new file. The
// temporary file is renamed to the output, so its mode is the output's.
const outputPerm = 0o666

// createTemp creates a new temporary file beside path, for the output
// renamed over path when complete. Unlike os.CreateTemp (0600), it takes
// outputPerm less the umask, so the finished output has the usual mode.
func createTemp(path string) (*os.File, error) {
	dir, prefix := filepath.Dir(path), "."+filepath.Base(path)+".tmp-"
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL|noFollow|noCTTY, outputPerm)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		return f, err
	}
}

// publishMode gives a partial file, created 0600 so that no one else can
// write it while steady might continue it (ADR 306), the mode a new output
// at out has: outputPerm less the umask, read off a probe file beside it,
// since the umask cannot be read without changing it.
func publishMode(f *os.File, out string) error {
	probe, err := createTemp(out)
	if err != nil {
		return err
	}
	st, err := probe.Stat()
	_ = probe.Close()
	_ = os.Remove(probe.Name())
	if err != nil {
		return err
	}
	return f.Chmod(st.Mode().Perm())
}

// writeFileAtomic replaces path with data so that a crash at any moment
// leaves either the old content or the new, whole: a temporary file
// beside it, fsync, rename, fsync of the directory.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return syncDir(filepath.Dir(path))
}

// openPrivate opens a file steady keeps beside an output (FILE.partial)
// without following a symbolic link at its name, and only when it is a
// regular file or absent. create makes a new, empty file: an old one is
// unlinked first rather than truncated, so that a hard link planted at the
// name cannot make steady empty the file it shares. Without create the
// file must exist, with no other name, be the caller's (checkPrivate), and
// is opened as it is.
func openPrivate(path string, create bool) (*os.File, error) {
	flag := os.O_RDWR | noFollow | noCTTY
	if st, err := os.Lstat(path); err == nil {
		if !st.Mode().IsRegular() {
			// Checked before opening, so that not even a FIFO or a device
			// is opened (opening some devices does something).
			return nil, usagef("%s is a %s, not a file steady made; remove it, or choose another output", path, describe(st.Mode()))
		}
		if create {
			if err := os.Remove(path); err != nil {
				return nil, err
			}
		}
	}
	if create {
		flag |= os.O_CREATE | os.O_EXCL
	}
	f, err := os.OpenFile(path, flag, 0o600) // private while partial: publishMode gives the output's mode
	switch {
	case errors.Is(err, syscall.ELOOP):
		return nil, usagef("%s is a symbolic link, not a file steady made; remove it, or choose another output", path)
	case errors.Is(err, fs.ErrExist):
		return nil, usagef("%s appeared while steady was creating it; refusing to write it", path)
	case err != nil:
		return nil, err
	}
	st, err := f.Stat()
	switch {
	case err != nil || !st.Mode().IsRegular():
		_ = f.Close()
		return nil, usagef("%s changed while it was opened; refusing to write it", path)
	case linkCount(st) > 1:
		_ = f.Close()
		return nil, usagef("%s has other hard links, so writing it would change another file too; remove it, or start over with --force", path)
	}
	if err := checkPrivate(path, st); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// readPrivate reads a small file steady keeps beside an output, without
// following a symbolic link at its name, and only when it is the caller's
// (checkPrivate).
func readPrivate(path string) ([]byte, error) {
	if st, err := os.Lstat(path); err == nil && !st.Mode().IsRegular() && st.Mode()&fs.ModeSymlink == 0 {
		return nil, usagef("%s is a %s, not a file steady made; remove it", path, describe(st.Mode()))
	}
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow|noCTTY, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, usagef("%s is a symbolic link, not a file steady made; remove it", path)
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, usagef("%s is not a regular file; remove it", path)
	}
	if err := checkPrivate(path, st); err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(f, 16<<20))
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
