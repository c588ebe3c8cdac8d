package steady_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The layering rules of the package map (ARCHITECTURE.md): an import points
// down a layer or sideways to a leaf, never up. The rule table is the map's,
// kept here as data so that a new import that breaks it fails the tests.
const module = "github.com/steadyhttp/steady"

var (
	leaves = []string{"event", "liveness", "credentials", "config"}
	policy = []string{"ratelimit", "budget", "breaker"}
)

// layered returns the leaves, and the packages given.
func layered(more ...string) []string { return append(slices.Clone(leaves), more...) }

// allowed lists, for each library package of the core module, the module
// packages it may import and the third-party import path prefixes.
var allowed = map[string]struct {
	internal []string
	external []string
}{
	// leaves: the standard library only
	"event":       {},
	"liveness":    {},
	"credentials": {},
	"config":      {},
	// the policy layer: the leaves
	"ratelimit": {internal: leaves},
	"budget":    {internal: leaves},
	"breaker":   {internal: leaves},
	// the transport layer
	"retry":    {internal: layered(policy...), external: []string{"golang.org/x/sync/"}},
	"resume":   {internal: layered("retry")},
	"paginate": {internal: layered("retry")},
	"chunk":    {},
	"fanout":   {internal: layered("retry"), external: []string{"golang.org/x/sync/"}},
	// the facade: everything above
	"": {internal: layered(append(slices.Clone(policy), "retry", "resume", "paginate", "chunk", "fanout")...),
		external: []string{"golang.org/x/sync/"}},
	"steadytest": {internal: []string{"paginate"}},
}

// satellites are the modules beside the core that use only its public API.
var satellites = []string{"redisquota", "otelsteady", "cmd/steady"}

// testOnly are the modules and packages that only tests and benchmarks use.
var testOnly = []string{"faults", "bench", "recipes", "internal/"}

type listedPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
	Standard   bool
}

func TestArchitecture(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the import graph with go list")
	}
	cmd := exec.Command("go", "list", "-json", "work")
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
	if seen < 20 {
		t.Fatalf("go list saw %d packages; the test is not reading the workspace", seen)
	}
}

// checkPackage reports each broken rule of p through errorf.
func checkPackage(errorf func(format string, args ...any), p listedPackage) {
	rel, ok := strings.CutPrefix(p.ImportPath, module)
	if !ok {
		return
	}
	rel = strings.TrimPrefix(rel, "/")
	// go list's Imports leaves test files out, so any import of test
	// support seen here is a program's.
	for _, imp := range p.Imports {
		if strings.HasPrefix(imp, module+"/internal/") && !under(rel, testOnly) {
			errorf("%s imports %s, which only tests may import", p.ImportPath, imp)
		}
		// The command links the satellites, and the test rigs use anything;
		// nothing else imports a satellite or the command.
		sat := within(strings.TrimPrefix(imp, module+"/"), satellites)
		linked := under(rel, []string{"cmd/steady"}) && sat != "cmd/steady" || under(rel, testOnly)
		if strings.HasPrefix(imp, module+"/") && sat != "" && !under(rel, []string{sat}) && !linked {
			errorf("%s imports %s: nothing but the command imports the %s module", p.ImportPath, imp, sat)
		}
	}
	if under(rel, satellites) || under(rel, testOnly) {
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

// under reports whether the module-relative package path rel is one of
// prefixes or below one.
func under(rel string, prefixes []string) bool { return within(rel, prefixes) != "" }

// within returns the entry of prefixes that rel is or is below, or "".
func within(rel string, prefixes []string) string {
	for _, p := range prefixes {
		if rel == strings.TrimSuffix(p, "/") || strings.HasPrefix(rel, strings.TrimSuffix(p, "/")+"/") {
			return p
		}
	}
	return ""
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
		{"ratelimit importing retry", listedPackage{ImportPath: module + "/ratelimit", Imports: []string{module + "/retry"}}, true},
		{"retry importing the budget", listedPackage{ImportPath: module + "/retry", Imports: []string{module + "/budget"}}, false},
		{"retry importing the body layer", listedPackage{ImportPath: module + "/retry", Imports: []string{module + "/resume"}}, true},
		{"body layer importing retry", listedPackage{ImportPath: module + "/resume", Imports: []string{module + "/retry"}}, false},
		{"facade importing cmd", listedPackage{ImportPath: module, Imports: []string{module + "/cmd/steady"}}, true},
		{"facade importing a satellite", listedPackage{ImportPath: module, Imports: []string{module + "/redisquota"}}, true},
		{"facade importing test support", listedPackage{ImportPath: module, Imports: []string{module + "/internal/wiretest"}}, true},
		{"satellite importing the core", listedPackage{ImportPath: module + "/otelsteady", Imports: []string{module + "/event"}}, false},
		{"satellite importing test support", listedPackage{ImportPath: module + "/redisquota", Imports: []string{module + "/internal/wiretest"}}, true},
		{"command using its renderers", listedPackage{ImportPath: module + "/cmd/steady", Imports: []string{module + "/cmd/steady/internal/render"}}, false},
		{"command linking the Redis store", listedPackage{ImportPath: module + "/cmd/steady", Imports: []string{module + "/redisquota"}}, false},
		{"satellite importing the command", listedPackage{ImportPath: module + "/redisquota", Imports: []string{module + "/cmd/steady/internal/render"}}, true},
		{"satellite importing a satellite", listedPackage{ImportPath: module + "/otelsteady", Imports: []string{module + "/redisquota"}}, true},
		{"unknown package", listedPackage{ImportPath: module + "/util"}, true},
		{"program importing the wire check", listedPackage{ImportPath: module + "/cmd/steady", Imports: []string{module + "/internal/wiretest"}}, true},
		{"program importing the limiter starter", listedPackage{ImportPath: module + "/cmd/steady", Imports: []string{module + "/internal/limitertest"}}, true},
		{"test rig importing test support", listedPackage{ImportPath: module + "/faults", Imports: []string{module + "/internal/wiretest"}}, false},
	}
	for _, c := range cases {
		var errs []string
		checkPackage(func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }, c.pkg)
		if got := len(errs) > 0; got != c.bad {
			t.Errorf("%s: violation reported = %v, want %v (%v)", c.name, got, c.bad, errs)
		}
	}
}

// TestLibraryLinksOnlyTheStandardLibraryAndXSync: a program that uses any
// library package of the core links nothing else, so the library pulls no
// terminal code, no environment reads in init, no other module's bugs.
func TestLibraryLinksOnlyTheStandardLibraryAndXSync(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the import graph with go list")
	}
	var pkgs []string
	for rel := range allowed {
		pkgs = append(pkgs, strings.TrimSuffix(module+"/"+rel, "/"))
	}
	args := append([]string{"list", "-e", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}"}, pkgs...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	found := 0
	for _, dep := range strings.Fields(string(out)) {
		found++
		if dep == module || strings.HasPrefix(dep, module+"/") || strings.HasPrefix(dep, "golang.org/x/sync/") {
			continue
		}
		t.Errorf("the library links %s", dep)
	}
	if found < 10 {
		t.Fatalf("go list -deps named %d packages; the test is not reading the library", found)
	}
}

// TestLibraryNeitherReadsTheEnvironmentNorPrints: only config reads
// environment variables, and nothing in the library writes to the
// process's standard streams; events go to a Reporter, silent by default.
func TestLibraryNeitherReadsTheEnvironmentNorPrints(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the import graph with go list")
	}
	forbidden := map[string]bool{
		"os.Getenv": true, "os.LookupEnv": true, "os.Environ": true, "os.Setenv": true, "syscall.Getenv": true,
		"os.Stdout": true, "os.Stderr": true, "fmt.Print": true, "fmt.Printf": true, "fmt.Println": true,
		"log.Print": true, "log.Printf": true, "log.Println": true, "log.Fatal": true, "log.Fatalf": true,
		"log.Panic": true, "log.Default": true,
	}
	files := 0
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		if _, lib := allowed[rel]; !lib || !strings.HasPrefix(p.ImportPath, module) {
			continue
		}
		for _, name := range p.GoFiles {
			files++
			for _, use := range selectorsIn(t, filepath.Join(p.Dir, name)) {
				if forbidden[use.name] && !(rel == "config" && strings.HasPrefix(use.name, "os.")) {
					t.Errorf("%s: %s uses %s", use.pos, p.ImportPath, use.name)
				}
			}
		}
	}
	if files < 20 {
		t.Fatalf("read %d files; the test is not reading the library", files)
	}
}

// listPackages lists the packages below the root with go list.
func listPackages(t *testing.T) []listedPackage {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			return pkgs
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
}

type selectorUse struct{ pos, name string }

// selectorsIn lists every pkg.Name selector of the file whose pkg is an
// imported package's name as written (os, fmt, log, syscall).
func selectorsIn(t *testing.T, path string) []selectorUse {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var uses []selectorUse
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				uses = append(uses, selectorUse{fset.Position(sel.Pos()).String(), id.Name + "." + sel.Sel.Name})
			}
		}
		return true
	})
	return uses
}
