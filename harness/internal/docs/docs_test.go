package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// repoRoot is the repository's top directory, three levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root not found above %s: %v", root, err)
	}
	return root
}

// readmes lists every README.md in the repository (the .cache and results
// trees aside).
func readmes(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".cache", "results", "dist", "bin":
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() == "README.md" {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The top README is a first page: at most 300 lines, and the two commands a
// newcomer runs (make check, make test) within its first 60.
func TestTopReadmeIsAFirstPage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 300 {
		t.Errorf("README.md has %d lines; a first page has at most 300 (move the reference beside the code it describes)", len(lines))
	}
	head := strings.Join(lines[:min(60, len(lines))], "\n")
	for _, cmd := range []string{"make check", "make test"} {
		if !strings.Contains(head, cmd) {
			t.Errorf("README.md: %q is not in its first 60 lines", cmd)
		}
	}
}

var (
	mdLink = regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
	// A count that changes whenever a case is added: "1216 leaves",
	// "1016 cases", "17 binaries" stated as the suite's size.
	dated        = regexp.MustCompile(`\b20\d\d-\d\d-\d\d\b`)
	countInProse = regexp.MustCompile(`\b\d{3,} (leaves|top-level cases|correctness leaves)\b`)
)

// Every relative link in a README leads to a file or directory that exists.
func TestReadmeLinksResolve(t *testing.T) {
	root := repoRoot(t)
	for _, p := range readmes(t, root) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(p), target)); err != nil {
				rel, _ := filepath.Rel(root, p)
				t.Errorf("%s: link %q leads nowhere: %v", rel, target, err)
			}
		}
	}
}

// No README states the suite's leaf or case count in prose as a present
// fact: it changes with every case added, and `-list -subtests` gives it
// exactly. A paragraph that dates its figures (a measured run, YYYY-MM-DD)
// may give the count that run had.
func TestReadmesStateNoCaseCounts(t *testing.T) {
	root := repoRoot(t)
	for _, p := range readmes(t, root) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, para := range strings.Split(string(b), "\n\n") {
			if dated.MatchString(para) {
				continue
			}
			for _, m := range countInProse.FindAllString(para, -1) {
				rel, _ := filepath.Rel(root, p)
				t.Errorf("%s: %q is a count that changes with the code; say how to get it (-list -subtests) instead, or date the run it was measured in", rel, m)
			}
		}
	}
}
