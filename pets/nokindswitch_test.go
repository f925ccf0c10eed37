package pets

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Outside package pets no code compares a mechanism with one built-in
// kind (k == pets.RR, case pets.LLP:): what a package does for a kind is
// asked of the kind's Spec (Takes, Release, Train, Privacy, Look), so a
// new kind needs no edit there (docs/architecture.md, "Extending"). The
// one exception is none, the clean model every grid trains beside the
// mechanisms (a role, not a mechanism's property).
func TestNoKindComparedOutsidePets(t *testing.T) {
	kinds := builtinKindNames(t)
	allowed := map[string]bool{"None": true}
	root := ".."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "pets") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		isKind := func(e ast.Expr) (string, bool) {
			sel, ok := e.(*ast.SelectorExpr)
			if !ok {
				return "", false
			}
			if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "pets" || !kinds[sel.Sel.Name] || allowed[sel.Sel.Name] {
				return "", false
			}
			return sel.Sel.Name, true
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if n.Op != token.EQL && n.Op != token.NEQ {
					return true
				}
				for _, side := range []ast.Expr{n.X, n.Y} {
					if k, ok := isKind(side); ok {
						t.Errorf("%s: compares a kind with pets.%s: ask its Spec instead", fset.Position(n.Pos()), k)
					}
				}
			case *ast.CaseClause:
				for _, e := range n.List {
					if k, ok := isKind(e); ok {
						t.Errorf("%s: a case on pets.%s: ask the kind's Spec instead", fset.Position(e.Pos()), k)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// builtinKindNames returns the names of package pets' constants of type
// Kind (const RR Kind = 2, …), read from its source files.
func builtinKindNames(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "Kind" {
					for _, n := range vs.Names {
						names[n.Name] = true
					}
				}
			}
		}
	}
	if len(names) < 10 {
		t.Fatalf("found %d built-in kinds (%v): the reader missed their declarations", len(names), names)
	}
	return names
}
