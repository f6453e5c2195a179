// Command fsncov prints the fs/notify line coverage of a gcov kernel's run of
// the suite (make coverage): per file and per function, the functions never
// executed and, given a patch, whether each line it changed ran.
//
//	fsncov -build BUILD -src SRC -gcda DIR [-diff PATCH] [-functions] [-gcov GCOV]
//
// BUILD is the kernel's build directory (the .gcno files), SRC the source tree
// it was built from, DIR the .gcda files the VM brought back (harness/vm
// Config.GcovDir), PATCH a `git diff BASE` of fs/notify and
// include/linux/fsnotify*.h. scripts/coverage/coverage.sh runs it.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fsnsuite/fsnsuite/harness/coverage"
)

func main() {
	build := flag.String("build", "", "kernel build directory (with the .gcno files)")
	src := flag.String("src", "", "source tree the kernel was built from")
	gcda := flag.String("gcda", "", "directory of .gcda files from the guest")
	diff := flag.String("diff", "", "unified diff of the patch (git diff BASE); empty: no patch report")
	functions := flag.Bool("functions", false, "print every function's line coverage, not only the never-executed ones")
	gcov := flag.String("gcov", "gcov", "gcov of the gcc that built the kernel")
	flag.Parse()
	if *build == "" || *src == "" || *gcda == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: fsncov -build DIR -src DIR -gcda DIR [-diff FILE] [-functions] [-gcov GCOV]")
		os.Exit(2)
	}
	if err := run(os.Stdout, *build, *src, *gcda, *diff, *gcov, *functions); err != nil {
		fmt.Fprintln(os.Stderr, "fsncov:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, build, src, gcda, diff, gcov string, functions bool) error {
	objs, err := coverage.FindObjects(build, gcda)
	if err != nil {
		return err
	}
	out, err := coverage.RunGcov(gcov, objs)
	if err != nil {
		return err
	}
	p := coverage.NewProfile()
	if err := p.Add(strings.NewReader(string(out)), coverage.TreeRel(src)); err != nil {
		return err
	}
	fmt.Fprintf(w, "fs/notify line coverage (gcov; %d object files; counters reset just before the runner started)\n\n", len(objs))
	if err := p.WriteSummary(w); err != nil {
		return err
	}
	var un strings.Builder
	n, err := p.WriteUnexecuted(&un, coverage.InNotify)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nNever executed functions in fs/notify without dnotify (%d):\n%s", n, un.String())
	if functions {
		fmt.Fprintf(w, "\nPer function (lines run/instrumented lines, times entered):\n")
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
		fmt.Fprintf(w, "\nLines the patch changed (%s):\n", diff)
		if err := coverage.WriteChanges(w, p.Check(changes), removals); err != nil {
			return err
		}
	}
	return nil
}
