package steady_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The shape limits of the core module: no function of its non-test code
// outside cmd/ is longer than maxFuncLines (from `func` to the closing
// brace), and retry exports at most maxRetryExported identifiers.
const (
	maxFuncLines     = 80
	maxRetryExported = 50
)

func TestFunctionLength(t *testing.T) {
	for _, f := range longFuncs(t, ".") {
		t.Errorf("%s:%d: %s is %d lines, over %d", f.file, f.line, f.name, f.lines, maxFuncLines)
	}
}

func TestExportedIdentifiers(t *testing.T) {
	for _, dir := range []string{".", "budget", "breaker", "chunk", "config", "credentials", "event", "fanout", "liveness", "paginate", "ratelimit", "resume", "retry", "steadytest"} {
		t.Logf("%-12s %3d exported identifiers", dir, len(exported(t, dir)))
	}
	names := exported(t, "retry")
	if len(names) <= maxRetryExported {
		return
	}
	t.Errorf("retry exports %d identifiers, over %d: %s", len(names), maxRetryExported, strings.Join(names, " "))
}

type longFunc struct {
	file, name, where string
	line, lines       int
}

// longFuncs returns the functions over maxFuncLines in the non-test Go
// files under root, skipping cmd/, testdata and other modules.
func longFuncs(t *testing.T, root string) []longFunc {
	t.Helper()
	var out []longFunc
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && skipDir(path) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			start, end := fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
			if n := end - start + 1; n > maxFuncLines {
				rel := filepath.ToSlash(path)
				out = append(out, longFunc{file: rel, name: fd.Name.Name, where: rel + ":" + fd.Name.Name, line: start, lines: n})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// skipDir reports whether a directory is outside the core's library code:
// the command, test data, or a module of its own.
func skipDir(path string) bool {
	base := filepath.Base(path)
	if base == "testdata" || strings.HasPrefix(base, ".") || filepath.ToSlash(path) == "cmd" {
		return true
	}
	_, err := os.Stat(filepath.Join(path, "go.mod"))
	return err == nil
}

// exported returns the exported identifiers of the package in dir: each
// exported constant, variable, type and function, and each exported method
// of an exported type, as "Name" or "Type.Method".
func exported(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			names = append(names, declNames(decl)...)
		}
	}
	sort.Strings(names)
	return names
}

func declNames(decl ast.Decl) []string {
	var names []string
	switch d := decl.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() {
			break
		}
		if d.Recv == nil {
			return []string{d.Name.Name}
		}
		if recv := receiverName(d.Recv.List[0].Type); ast.IsExported(recv) {
			return []string{recv + "." + d.Name.Name}
		}
	case *ast.GenDecl:
		for _, spec := range d.Specs {
			switch s := spec.(type) {
			case *ast.TypeSpec:
				if s.Name.IsExported() {
					names = append(names, s.Name.Name)
				}
			case *ast.ValueSpec:
				for _, n := range s.Names {
					if n.IsExported() {
						names = append(names, n.Name)
					}
				}
			}
		}
	}
	return names
}

// receiverName returns the type name of a method's receiver, generic or not.
func receiverName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
