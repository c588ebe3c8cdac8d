package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// buildInfo is what the binary knows of its own build: the module version
// ("(devel)" for a build from a checkout), the commit and whether the tree
// had uncommitted changes (stamped by go build in a git checkout), and the
// Go release that built it.
type buildInfo struct {
	version, commit, when string
	modified              bool
	goVersion             string
}

func readBuildInfo() buildInfo {
	b := buildInfo{version: "(unknown)", goVersion: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if info.Main.Version != "" {
		b.version = info.Main.Version
	}
	if info.GoVersion != "" {
		b.goVersion = info.GoVersion
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.commit = s.Value
		case "vcs.time":
			b.when = s.Value
		case "vcs.modified":
			b.modified = s.Value == "true"
		}
	}
	return b
}

// String is the text --version and the version command print:
//
//	steady v1.2.0
//	commit 5a1373f0c5e4... (2026-12-01T08:00:00Z, modified)
//	go1.26.8 linux/amd64
func (b buildInfo) String() string {
	s := "steady " + b.version + "\n"
	switch {
	case b.commit == "":
		s += "commit unknown (built without version control information)\n"
	default:
		s += "commit " + b.commit
		var notes []string
		if b.when != "" {
			notes = append(notes, b.when)
		}
		if b.modified {
			notes = append(notes, "modified")
		}
		if len(notes) > 0 {
			s += " ("
			for i, n := range notes {
				if i > 0 {
					s += ", "
				}
				s += n
			}
			s += ")"
		}
		s += "\n"
	}
	return s + b.goVersion + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
}

func newVersion() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go release of this binary",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return writeVersion(cmd.OutOrStdout())
		},
	}
}

func writeVersion(w io.Writer) error {
	_, err := fmt.Fprint(w, readBuildInfo())
	return err
}
