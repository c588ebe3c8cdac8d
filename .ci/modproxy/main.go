// Command modproxy lays out module zips of this repository's modules as a
// GOPROXY directory, so CI can go install the command from a file:// proxy
// as a user installs it from a real one (ADR 0270).
//
//	go run . -version v0.3.0 -o DIR -root ../.. . cmd/steady redisquota otelsteady
//
// Each argument is a module's directory under the root. A module's zip holds
// the files git tracks or would track there (untracked, unignored files
// count, so uncommitted work is tested too), less what zip.CreateFromDir
// leaves out: nested modules, vendored packages, symbolic links.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("modproxy: ")
	version := flag.String("version", "", "the version every module is published at, such as v0.3.0")
	out := flag.String("o", "", "the GOPROXY directory to write")
	root := flag.String("root", ".", "the repository's root")
	flag.Parse()
	if *version == "" || *out == "" || flag.NArg() == 0 {
		log.Fatal("usage: modproxy -version VERSION -o DIR [-root ROOT] MODULEDIR...")
	}
	now := time.Now().UTC()
	for _, dir := range flag.Args() {
		path, err := publish(*out, filepath.Join(*root, dir), *version, now)
		if err != nil {
			log.Fatalf("%s: %v", dir, err)
		}
		fmt.Printf("%s@%s\n", path, *version)
	}
}

// publish writes the list, .info, .mod and .zip of the module in dir at
// version under out, and returns the module's path.
func publish(out, dir, version string, at time.Time) (string, error) {
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", err
	}
	path := modfile.ModulePath(gomod)
	if path == "" {
		return "", fmt.Errorf("go.mod names no module")
	}
	m := module.Version{Path: path, Version: version}
	if err := module.Check(path, version); err != nil {
		return "", err
	}
	escaped, err := module.EscapePath(path)
	if err != nil {
		return "", err
	}
	vdir := filepath.Join(out, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return "", err
	}
	stage, err := os.MkdirTemp("", "modproxy-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(stage)
	if err := stageFiles(dir, stage); err != nil {
		return "", err
	}
	var z bytes.Buffer
	if err := zip.CreateFromDir(&z, m, stage); err != nil {
		return "", err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, at})
	if err != nil {
		return "", err
	}
	files := []struct {
		name string
		data []byte
	}{
		{"list", []byte(version + "\n")},
		{version + ".info", info},
		{version + ".mod", gomod},
		{version + ".zip", z.Bytes()},
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(vdir, f.name), f.data, 0o644); err != nil {
			return "", err
		}
	}
	return path, nil
}

// stageFiles copies into stage the regular files under dir that git tracks
// or would track, so build outputs and installed node modules stay out.
func stageFiles(dir, stage string) error {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	list, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %w", err)
	}
	for _, rel := range bytes.Split(list, []byte{0}) {
		if len(rel) == 0 {
			continue
		}
		src := filepath.Join(dir, string(rel))
		fi, err := os.Lstat(src)
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the work tree, or a link the zip leaves out anyway
		}
		if err := copyFile(filepath.Join(stage, string(rel)), src, fi.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(dst, src string, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
