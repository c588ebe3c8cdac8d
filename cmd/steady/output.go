package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// output is a file that appears under its name only when complete: it is
// written beside the destination under a temporary name and renamed at the
// end, so a failed run never leaves a file that looks whole.
type output struct {
	path string
	tmp  *os.File
}

// createOutput refuses an existing destination unless force is set, and
// fails at once, with the path named, when the directory is not writable.
func createOutput(path string, force bool) (*output, error) {
	if err := checkDestination(path, force); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, usagef("cannot write the output %s: %v", path, unwrapPathError(err))
	}
	return &output{path: path, tmp: tmp}, nil
}

func checkDestination(path string, force bool) error {
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return usagef("the output %s is a directory", path)
	case err == nil && !force:
		return usagef("the output %s exists; use --force to replace it", path)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return usagef("cannot use the output %s: %v", path, unwrapPathError(err))
	}
	return nil
}

func (o *output) Write(p []byte) (int, error) { return o.tmp.Write(p) }

// commit makes the file appear under its name.
func (o *output) commit() error {
	if err := o.tmp.Close(); err != nil {
		os.Remove(o.tmp.Name())
		return fmt.Errorf("writing %s: %w", o.path, err)
	}
	if err := os.Rename(o.tmp.Name(), o.path); err != nil {
		os.Remove(o.tmp.Name())
		return fmt.Errorf("writing %s: %w", o.path, err)
	}
	return nil
}

// abort removes the temporary file.
func (o *output) abort() {
	o.tmp.Close()
	os.Remove(o.tmp.Name())
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
