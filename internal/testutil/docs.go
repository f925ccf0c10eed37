package testutil

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// UserDocs returns the user documentation a test checks against the code
// (column lists, config keys): README.md, then every docs/*.md in name
// order, each starting at its own heading, read from the repository root
// root (a test's "..", or "../.." one floor down).
func UserDocs(t testing.TB, root string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	var b strings.Builder
	for _, f := range append([]string{filepath.Join(root, "README.md")}, files...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		b.WriteString("\n\n")
	}
	return b.String()
}
