package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/fsnsuite/fsnsuite/harness/exitcode"
	"github.com/fsnsuite/fsnsuite/harness/perf"
	"github.com/fsnsuite/fsnsuite/harness/sharing"
)

// sharingCmd is `fsnsuite sharing [-baseline DIR] [-symbols FILE] DIR`: the
// sharing profile's report of a -vm-sharing run's results directory
// (rewritten as DIR/sharing.txt and printed) and, with -baseline, each
// condition's remote-writes/op against another kernel's run (the results
// directory is what the profile saves). Exit 1 when a verdict failed.
func sharingCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fsnsuite sharing", flag.ContinueOnError)
	fs.SetOutput(stderr)
	baseline := fs.String("baseline", "", "compare with this `directory`'s run (another kernel's -vm-sharing results)")
	symbols := fs.String("symbols", "", "kallsyms or System.map `file` naming the writers (default: DIR/kallsyms, the guest's)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: fsnsuite sharing [-baseline DIR] [-symbols FILE] RESULTS_DIR\n\n"+
			"The sharing profile's figures of a -vm-sharing run (harness/perf/README.md).\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitcode.Usage
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitcode.Usage
	}
	analyze := func(dir string) ([]*sharing.Case, bool, error) {
		syms := *symbols
		if syms == "" {
			if _, err := os.Stat(filepath.Join(dir, perf.SharingKallsyms)); err == nil {
				syms = filepath.Join(dir, perf.SharingKallsyms)
			}
		}
		return sharing.Report(dir, syms)
	}
	dir := fs.Arg(0)
	cases, failed, err := analyze(dir)
	if err != nil {
		fmt.Fprintf(stderr, "fsnsuite sharing: %v\n", err)
		return exitcode.Usage
	}
	sharing.Format(stdout, cases)
	if *baseline != "" {
		before, _, err := analyze(*baseline)
		if err != nil {
			fmt.Fprintf(stderr, "fsnsuite sharing: baseline: %v\n", err)
			return exitcode.Usage
		}
		changes := sharing.Compare(before, cases)
		fmt.Fprintf(stdout, "\n# against %s\n", *baseline)
		sharing.FormatChanges(stdout, changes)
		for _, c := range changes {
			failed = failed || c.Verdict == "fail"
		}
	}
	if failed {
		return exitcode.Fail
	}
	return exitcode.Pass
}
