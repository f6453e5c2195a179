//go:build hostile

package hostile

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

var pathsRev = flag.String("paths-rev", "", "spaced_path_make: copy this git revision's tree (git archive) instead of the working tree's tracked files, e.g. to flip-check against an older Makefile")

// pathsConditions: the make targets from a checkout whose path has spaces,
// with spaced RESULTS and DESTDIR (issue 33 item 8: on fb7ddc5 make check
// said "unexpected arguments", make install left directories in the
// checkout, and make dist installed the tree outside the repository).
func pathsConditions() []condition {
	return []condition{{name: "spaced_path_make", run: spacedPathMake}}
}

// spacedPathMake copies the repository to "<tmp>/fsn space/repo" and runs
// make dist, make install DESTDIR="<tmp>/fsn space/dest dir" and make check
// RESULTS="results/a b" there. Each must succeed and put its output where
// it was told; nothing else under <tmp> may appear or vanish (the unquoted
// dist install of fb7ddc5 lands in "<tmp>/fsn", beside the checkout).
func spacedPathMake(h *h) []string {
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return []string{"setup: git rev-parse --show-toplevel: " + err.Error()}
	}
	spaced := filepath.Join(h.tmp, "fsn space")
	repo := filepath.Join(spaced, "repo")
	dest := filepath.Join(spaced, "dest dir")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		return []string{"setup: " + err.Error()}
	}
	// The tracked files as they are in the working tree (uncommitted
	// changes included), or one revision's tree.
	copyTree := `cd "$1" && git ls-files -z | tar --null -T - -cf - | tar -x -C "$2"`
	if *pathsRev != "" {
		copyTree = `git -C "$1" archive "$3" | tar -x -C "$2"`
	}
	if out, err := exec.Command("sh", "-c", "set -e; "+copyTree, "sh", strings.TrimSpace(string(top)), repo, *pathsRev).CombinedOutput(); err != nil {
		return []string{fmt.Sprintf("setup: copying the repository: %v: %s", err, out)}
	}
	before, err := treeOf(h.tmp)
	if err != nil {
		return []string{"setup: " + err.Error()}
	}

	// The inner makes must not inherit `make hostile`'s own variables.
	env := make([]string, 0, len(h.env))
	for _, kv := range h.env {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "GNUMAKEFLAGS":
		default:
			env = append(env, kv)
		}
	}
	var p []string
	mk := func(args ...string) bool {
		cmd := exec.Command("make", append([]string{"-C", repo}, args...)...)
		cmd.Env = env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		done := make(chan struct{})
		var out []byte
		var err error
		go func() { out, err = cmd.CombinedOutput(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Minute):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			p = append(p, fmt.Sprintf("hang: make %s still running after 5 min", strings.Join(args, " ")))
			return false
		}
		if err != nil {
			p = append(p, fmt.Sprintf("exit: make %q: %v: %s", args, err, lastLines(string(out), 3)))
			return false
		}
		return true
	}
	if mk("dist") {
		_, err := os.Stat(filepath.Join(repo, "dist", "fsnsuite.tar.gz"))
		p = append(p, want(err == nil, "false pass: make dist succeeded without dist/fsnsuite.tar.gz: %v", err)...)
	}
	if mk("install", "DESTDIR="+dest) {
		_, err := os.Stat(filepath.Join(dest, "usr/local/libexec/fsnsuite/fsnsuite"))
		p = append(p, want(err == nil, "false pass: make install succeeded without the runner in DESTDIR: %v", err)...)
	}
	if mk("check", "RESULTS=results/a b", "CHECK_ARGS=-run ^inotify_basic -case ^create_in_dir") {
		tapOut, err := os.ReadFile(filepath.Join(repo, "results", "a b", "results.tap"))
		p = append(p, want(err == nil && strings.Contains(string(tapOut), "\nok 1 inotify_basic"),
			"false pass: make check succeeded without inotify_basic passing in results/a b/results.tap (%v)", err)...)
	}

	// Where each make may write: the checkout's bin/, dist/ (the tarball;
	// its stage is removed), results/ and DESTDIR. Anything else is a write
	// to where no one asked.
	after, err := treeOf(h.tmp)
	if err != nil {
		return append(p, "setup: "+err.Error())
	}
	allowed := func(rel string) bool {
		for _, a := range []string{"fsn space/repo/bin", "fsn space/repo/results", "fsn space/dest dir", "fsn space/repo/dist", "fsn space/repo/dist/fsnsuite.tar.gz"} {
			if rel == a || (a != "fsn space/repo/dist" && strings.HasPrefix(rel, a+"/")) {
				return true
			}
		}
		return false
	}
	var strays, gone []string
	for rel := range after {
		if !before[rel] && !allowed(rel) {
			strays = append(strays, rel)
		}
	}
	for rel := range before {
		if !after[rel] {
			gone = append(gone, rel)
		}
	}
	sort.Strings(strays)
	sort.Strings(gone)
	if len(strays) > 0 {
		p = append(p, fmt.Sprintf("leftover: %d path(s) written outside bin/, dist/fsnsuite.tar.gz, results/ and DESTDIR: %s", len(strays), strings.Join(firstFew(strays, 4), ", ")))
	}
	if len(gone) > 0 {
		p = append(p, fmt.Sprintf("leftover: %d path(s) removed: %s", len(gone), strings.Join(firstFew(gone, 4), ", ")))
	}
	return p
}

// treeOf lists every path under dir, relative to it, leaving out tmpdir
// (TMPDIR: the go command's scratch, checked by leftovers).
func treeOf(dir string) (map[string]bool, error) {
	m := map[string]bool{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if rel == "tmpdir" && d.IsDir() {
			return filepath.SkipDir
		}
		if rel != "." {
			m[rel] = true
		}
		return nil
	})
	return m, err
}
