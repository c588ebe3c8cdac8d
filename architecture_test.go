package steady_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The layering rules of the package map: an import points down a layer or
// sideways to a leaf, never up. The rule table is the documentation's, kept
// here as data so that a new import that breaks it fails the build's tests.
const module = "github.com/steadyhttp/steady"

var leaves = []string{"event", "liveness", "credentials", "config"}

// allowed lists, for each package, the module packages it may import and
// whether third-party (non-stdlib) imports are allowed and which.
var allowed = map[string]struct {
	internal []string
	external []string // import path prefixes
}{
	"liveness":    {},
	"credentials": {},
	"config":      {},
	"event":       {},
	"ratelimit":   {internal: leaves},
	"budget":      {internal: leaves},
	"retry":       {internal: append(slices.Clone(leaves), "ratelimit", "budget"), external: []string{"golang.org/x/sync/"}},
	"paginate":    {internal: leaves},
	"chunk":       {},
	"fanout":      {internal: append(slices.Clone(leaves), "retry"), external: []string{"golang.org/x/sync/"}},
	"steadytest":  {internal: []string{"paginate"}},
	"":            {internal: append(slices.Clone(leaves), "ratelimit", "budget", "retry", "paginate", "chunk", "fanout"), external: []string{"golang.org/x/sync/"}},
}

type listedPackage struct {
	ImportPath string
	Imports    []string
	Standard   bool
}

func TestArchitecture(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the import graph with go list")
	}
	cmd := exec.Command("go", "list", "-json", "./...")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(out)
	seen := 0
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		seen++
		checkPackage(t.Errorf, p)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go list: %v", err)
	}
	if seen < 4 {
		t.Fatalf("go list saw %d packages; the test is not reading the module", seen)
	}
}

// checkPackage reports each broken rule of p through errorf.
func checkPackage(errorf func(format string, args ...any), p listedPackage) {
	rel, ok := strings.CutPrefix(p.ImportPath, module)
	if !ok {
		return
	}
	rel = strings.TrimPrefix(rel, "/")
	// The wire check and the limiter's starter are test support: only
	// tests import them (go list's Imports leaves test files out, so any
	// import seen here is a program's).
	for _, imp := range p.Imports {
		if imp == module+"/internal/wiretest" || imp == module+"/internal/limitertest" {
			errorf("%s imports %s, which only tests may import", p.ImportPath, imp)
		}
	}
	if strings.HasPrefix(rel, "cmd/") || strings.HasPrefix(rel, "internal/") {
		// The program may import everything; nothing may import it (checked below).
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, module+"/cmd/") && !strings.HasPrefix(rel, "cmd/") {
				errorf("%s imports %s: nothing imports cmd/", p.ImportPath, imp)
			}
		}
		return
	}
	rule, known := allowed[rel]
	if !known {
		errorf("package %q is not in the package map; add it to the architecture and to this test", rel)
		return
	}
	for _, imp := range p.Imports {
		if sub, ok := strings.CutPrefix(imp, module); ok {
			sub = strings.TrimPrefix(sub, "/")
			if strings.HasPrefix(sub, "internal/") && rel == "" {
				continue
			}
			if !slices.Contains(rule.internal, sub) {
				errorf("%s imports %s, which its layer may not import", p.ImportPath, imp)
			}
			continue
		}
		if isStdlib(imp) {
			continue
		}
		if !slices.ContainsFunc(rule.external, func(prefix string) bool {
			return strings.HasPrefix(imp, prefix) || imp+"/" == prefix
		}) {
			errorf("%s imports third-party %s, which its layer may not import", p.ImportPath, imp)
		}
	}
}

// isStdlib reports whether an import path names a standard-library package:
// the first element of a module path contains a dot, a stdlib path does not.
func isStdlib(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

func TestArchitectureRulesCatchViolations(t *testing.T) {
	// The checker itself must be able to fail.
	cases := []struct {
		name string
		pkg  listedPackage
		bad  bool
	}{
		{"leaf importing retry", listedPackage{ImportPath: module + "/liveness", Imports: []string{module + "/retry"}}, true},
		{"leaf importing third party", listedPackage{ImportPath: module + "/credentials", Imports: []string{"golang.org/x/sync/errgroup"}}, true},
		{"retry importing leaf", listedPackage{ImportPath: module + "/retry", Imports: []string{module + "/liveness", "net/http"}}, false},
		{"retry importing paginate", listedPackage{ImportPath: module + "/retry", Imports: []string{module + "/paginate"}}, true},
		{"event using mpb", listedPackage{ImportPath: module + "/event", Imports: []string{"github.com/vbauerster/mpb/v8"}}, true},
		{"facade importing cmd", listedPackage{ImportPath: module, Imports: []string{module + "/cmd/steady"}}, true},
		{"unknown package", listedPackage{ImportPath: module + "/util"}, true},
		{"program importing the wire check", listedPackage{ImportPath: module + "/cmd/steady", Imports: []string{module + "/internal/wiretest"}}, true},
		{"program importing the limiter starter", listedPackage{ImportPath: module + "/cmd/steady", Imports: []string{module + "/internal/limitertest"}}, true},
	}
	for _, c := range cases {
		var errs []string
		checkPackage(func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }, c.pkg)
		if got := len(errs) > 0; got != c.bad {
			t.Errorf("%s: violation reported = %v, want %v (%v)", c.name, got, c.bad, errs)
		}
	}
}
