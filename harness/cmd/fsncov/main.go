// Command fsncov prints the fs/notify line coverage of a gcov kernel's run of
// the suite (make coverage): per file and per function, the functions never
// executed and, given a patch, whether each line it changed ran.
//
//	fsncov -build BUILD -src SRC -gcda DIR [-diff PATCH] [-functions] [-lines FILE] [-gcov GCOV]
//
// BUILD is the kernel's build directory (the .gcno files), SRC the source tree
// it was built from, DIR the .gcda files the VM brought back (harness/vm
// Config.GcovDir: DIR/boot when the runner started, DIR/suite when it ended;
// the report counts the difference, what the suite ran), PATCH a `git diff BASE` of fs/notify and
// include/linux/fsnotify*.h. -lines writes every fs/notify line's counts as
// JSON to FILE (coverage.LineData: what `make mutants` reads to leave out
// mutants on lines that never ran). scripts/coverage/coverage.sh runs it.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fsnsuite/fsnsuite/harness/coverage"
	"github.com/fsnsuite/fsnsuite/harness/exitcode"
)

func main() {
	build := flag.String("build", "", "kernel build directory (with the .gcno files)")
	src := flag.String("src", "", "source tree the kernel was built from")
	gcda := flag.String("gcda", "", "directory of .gcda files from the guest")
	diff := flag.String("diff", "", "unified diff of the patch (git diff BASE); empty: no patch report")
	functions := flag.Bool("functions", false, "print every function's line coverage, not only the never-executed ones")
	gcov := flag.String("gcov", "gcov", "gcov of the gcc that built the kernel")
	lines := flag.String("lines", "", "also write every fs/notify line's execution counts as JSON to `file`")
	flag.Parse()
	if *build == "" || *src == "" || *gcda == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: fsncov -build DIR -src DIR -gcda DIR [-diff FILE] [-functions] [-gcov GCOV]")
		os.Exit(exitcode.Usage)
	}
	// gcov names sources by absolute path: so must SRC be.
	for _, p := range []*string{build, src, gcda} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fsncov:", err)
			os.Exit(exitcode.Fail)
		}
		*p = abs
	}
	if err := run(os.Stdout, *build, *src, *gcda, *diff, *gcov, *lines, *functions); err != nil {
		fmt.Fprintln(os.Stderr, "fsncov:", err)
		os.Exit(exitcode.Fail)
	}
}

func run(w io.Writer, build, src, gcda, diff, gcov, lines string, functions bool) error {
	// The VM brings back two snapshots (harness/vm Config.GcovDir): the
	// counters when the runner started and when it ended.
	suite, err := load(build, src, filepath.Join(gcda, "suite"), gcov)
	if err != nil {
		return err
	}
	boot, err := load(build, src, filepath.Join(gcda, "boot"), gcov)
	if err != nil {
		return err
	}
	p, err := suite.Since(boot)
	if err != nil {
		return err
	}
	// Per-binary snapshots (a runner that ran one binary at a time):
	// each line's count by binary.
	snaps, err := coverage.BinarySnapshots(gcda)
	if errors.Is(err, coverage.ErrSnapshotsIncomplete) {
		fmt.Fprintf(w, "no per-binary counts: %v\n\n", err)
	} else if err != nil {
		return err
	}
	if len(snaps) > 0 {
		var profs []*coverage.Profile
		var names []string
		for _, s := range snaps {
			sp, err := load(build, src, s.Dir, gcov)
			if err != nil {
				return err
			}
			profs, names = append(profs, sp), append(names, s.Binary)
		}
		p.AttributeBinaries(boot, profs, names)
	}
	if len(p.Paths(coverage.InNotify)) == 0 {
		return fmt.Errorf("the gcov data names no fs/notify file under %s: is it the tree %s was built from?", src, build)
	}
	if lines != "" {
		if err := writeLines(lines, p, src); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "fs/notify line coverage: what the suite ran (gcov counters when the runner ended minus when it started)\n\n")
	if err := p.WriteSummary(w); err != nil {
		return err
	}
	all, allFn := p.WithBoot().Total(coverage.InNotify)
	fmt.Fprintf(w, "\nBoot included (as measured without a baseline): fs/notify without dnotify %s of lines, %s of functions\n", all, allFn)
	var un strings.Builder
	n, err := p.WriteUnexecuted(&un, coverage.InNotify)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nFunctions the suite never executed in fs/notify without dnotify (%d):\n%s", n, un.String())
	if functions {
		fmt.Fprintf(w, "\nPer function (lines the suite ran/instrumented lines, times entered):\n")
		if err := p.WriteFunctions(w, func(p string) bool { return !coverage.Outside(p) }); err != nil {
			return err
		}
	}
	if diff != "" {
		f, err := os.Open(diff)
		if err != nil {
			return err
		}
		defer f.Close()
		changes, removals, err := coverage.ParseDiff(f)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "\nLines the patch changed (%s), as the suite ran them:\n", diff)
		if err := coverage.WriteChanges(w, p.Check(changes), removals); err != nil {
			return err
		}
	}
	return nil
}

// load runs gcov on one snapshot of .gcda files.
func load(build, src, dir, gcov string) (*coverage.Profile, error) {
	objs, err := coverage.FindObjects(build, dir)
	if err != nil {
		return nil, err
	}
	out, err := coverage.RunGcov(gcov, objs)
	if err != nil {
		return nil, err
	}
	p := coverage.NewProfile()
	if err := p.Add(bytes.NewReader(out), coverage.TreeRel(src)); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return p, nil
}

// writeLines writes the per-line counts of fs/notify (dnotify included: the
// reader decides) to path.
func writeLines(path string, p *coverage.Profile, src string) error {
	d, err := p.Lines(src, func(f string) bool { return !coverage.Outside(f) })
	if err != nil {
		return err
	}
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("line data: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("line data: %w", err)
	}
	return nil
}
