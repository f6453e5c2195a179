package spec_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsnsuite/fsnsuite/harness/spec"
)

// Every test binary's declared rules (Suite.Rules, in its spec.go) name
// leaves that exist (in `-list -subtests`) and rules the map has: the binary
// itself refuses a bad key or id with -list-rules, and this test checks its
// output against -list too. It builds the binaries (go build ./tests/...).
func TestDeclaredRules(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every test binary")
	}
	m, err := spec.Load()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", dir+"/", "./tests/...")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./tests/...: %v\n%s", err, out)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	claims := 0
	for _, e := range ents {
		bin := filepath.Join(dir, e.Name())
		t.Run(e.Name(), func(t *testing.T) {
			var rules, rerr bytes.Buffer
			cmd := exec.Command(bin, "-list-rules")
			cmd.Stdout, cmd.Stderr = &rules, &rerr
			if err := cmd.Run(); err != nil {
				t.Fatalf("-list-rules: %v: %s", err, rerr.String())
			}
			list, err := exec.Command(bin, "-list", "-subtests").Output()
			if err != nil {
				t.Fatalf("-list -subtests: %v", err)
			}
			leaves := map[string]bool{}
			parent := ""
			for _, l := range strings.Split(string(list), "\n") {
				switch {
				case l == "":
				case strings.HasPrefix(l, "    "):
					leaves[parent+"/"+strings.TrimSpace(l)] = true
				default:
					parent = l
					leaves[l] = true
				}
			}
			for _, l := range strings.Split(strings.TrimSpace(rules.String()), "\n") {
				if l == "" {
					continue
				}
				leaf, id, ok := strings.Cut(l, " ")
				if !ok {
					t.Errorf("-list-rules line %q: want \"leaf rule-id\"", l)
					continue
				}
				if !leaves[leaf] {
					t.Errorf("-list-rules names leaf %q, which -list -subtests lacks", leaf)
				}
				if _, ok := m.Lookup(id); !ok {
					t.Errorf("-list-rules names rule %q, which the map lacks", id)
				}
				claims++
			}
		})
	}
	t.Logf("%d binaries, %d leaf-rule claims", len(ents), claims)
}
