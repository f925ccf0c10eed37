package doclinks

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// slug is GitHub's anchor of a heading's text.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

var (
	headingRE = regexp.MustCompile(`^#{1,6} +(.*?) *#*$`)
	idRE      = regexp.MustCompile(`<a (?:id|name)="([^"]+)"`)
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	codeRE    = regexp.MustCompile("`[^`]*`")
)

// doc is one Markdown file's anchors and links (outside code).
type doc struct {
	anchors map[string]bool
	links   []link
}

type link struct {
	line   int
	target string
}

func parse(text string) doc {
	d := doc{anchors: map[string]bool{}}
	seen := map[string]int{}
	fence := false
	for i, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		for _, m := range idRE.FindAllStringSubmatch(l, -1) {
			d.anchors[m[1]] = true
		}
		if m := headingRE.FindStringSubmatch(l); m != nil {
			s := slug(m[1])
			if n := seen[s]; n > 0 {
				d.anchors[fmt.Sprintf("%s-%d", s, n)] = true
			} else {
				d.anchors[s] = true
			}
			seen[s]++
		}
		for _, m := range linkRE.FindAllStringSubmatch(codeRE.ReplaceAllString(l, ""), -1) {
			d.links = append(d.links, link{i + 1, m[1]})
		}
	}
	return d
}

// broken lists the links of the Markdown files under root that do not
// resolve: "file:line: target: why".
func broken(root string, files []string) ([]string, error) {
	docs := map[string]doc{}
	load := func(p string) (doc, error) {
		if d, ok := docs[p]; ok {
			return d, nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return doc{}, err
		}
		d := parse(string(b))
		docs[p] = d
		return d, nil
	}
	var bad []string
	for _, f := range files {
		d, err := load(f)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(root, f)
		for _, l := range d.links {
			if regexp.MustCompile(`^[a-z][a-z0-9+.-]*:`).MatchString(l.target) {
				continue // http:, mailto:
			}
			path, frag, _ := strings.Cut(l.target, "#")
			target := f
			if path != "" {
				target = filepath.Join(filepath.Dir(f), filepath.FromSlash(path))
				if _, err := os.Stat(target); err != nil {
					bad = append(bad, fmt.Sprintf("%s:%d: %s: no such file", rel, l.line, l.target))
					continue
				}
			}
			if frag == "" || !strings.HasSuffix(target, ".md") {
				continue
			}
			td, err := load(target)
			if err != nil {
				return nil, err
			}
			if !td.anchors[frag] {
				bad = append(bad, fmt.Sprintf("%s:%d: %s: no heading makes #%s", rel, l.line, l.target, frag))
			}
		}
	}
	return bad, nil
}

// markdownFiles are the repository's Markdown files (not .git's).
func markdownFiles(t *testing.T, root string) []string {
	var files []string
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && (e.Name() == ".git" || e.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !e.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestLinksResolve: every relative link of every Markdown file of the
// repository resolves, file and anchor.
func TestLinksResolve(t *testing.T) {
	root := filepath.Join("..", "..")
	files := markdownFiles(t, root)
	if len(files) < 10 {
		t.Fatalf("only %d Markdown files under %s", len(files), root)
	}
	bad, err := broken(root, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error(b)
	}
}

// TestLinksCatchBreakage: the checker finds a missing file, a missing
// anchor, and follows GitHub's slugs (code spans, punctuation, repeats).
func TestLinksCatchBreakage(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	b := write("b.md", "# Top\n\n## Attacks on the trained models: `model_adv`, `eps_lower_model`\n\n## Notes\n\n## Notes\n\n<a id=\"x-1\"></a>\n")
	a := write("a.md", strings.Join([]string{
		"[ok](b.md#attacks-on-the-trained-models-model_adv-eps_lower_model)",
		"[ok](b.md#notes-1) [ok](b.md#x-1) [ok](#here) [ok](https://example.com/#nothing)",
		"`[not a link](nowhere.md)`",
		"```", "[in code](nowhere.md)", "```",
		"[missing file](c.md)",
		"[missing anchor](b.md#notes-2)",
		"## Here",
	}, "\n"))
	bad, err := broken(dir, []string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 2 || !strings.Contains(bad[0], "c.md: no such file") || !strings.Contains(bad[1], "#notes-2") {
		t.Fatalf("broken links found: %q, want c.md and #notes-2", bad)
	}
	for h, want := range map[string]string{"Security: what a release protects against, and what it does not": "security-what-a-release-protects-against-and-what-it-does-not",
		"The canary audit: `eps_lower`": "the-canary-audit-eps_lower", "Labels with C ≥ 3 classes": "labels-with-c--3-classes"} {
		if got := slug(h); got != want {
			t.Errorf("slug(%q) = %q, want %q", h, got, want)
		}
	}
}
