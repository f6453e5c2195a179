package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/fsnsuite/fsnsuite/harness/exitcode"
	"github.com/fsnsuite/fsnsuite/harness/runner"
)

const exportUsage = `usage: fsnsuite export -kcidb [-o FILE] [-origin NAME] [-build-id ID] RESULTS_DIR
       (flags may also follow RESULTS_DIR)

Writes a results directory (from a run of fsnsuite) in another CI's format:
  -kcidb   KCIDB I/O JSON (schema v5.3): one test per leaf, path
           fsnsuite.BINARY.CASE[.SUBTEST], PASS/FAIL/SKIP/ERROR, durations,
           the kernel release and arch as environment, each perf measurement
           as a test of its own (path ...CASE.FIGURE) with a number and status
           DONE (FAIL or ERROR when its case failed or broke). Submit it with
           kcidb-submit.

flags:
`

// export is "fsnsuite export ...".
func export(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fsnsuite export", flag.ContinueOnError)
	var (
		kcidb   = fs.Bool("kcidb", false, "write KCIDB I/O JSON")
		out     = fs.String("o", "", "write to `file` (default stdout)")
		origin  = fs.String("origin", "fsnsuite", "KCIDB `origin` of the submitting CI system ([a-z0-9_]+)")
		buildID = fs.String("build-id", "", "KCIDB `id` of the kernel build tested (default ORIGIN:KERNEL_RELEASE)")
		runID   = fs.String("run-id", "", "makes test ids unique per run (default: the run's start time)")
	)
	// Flags may follow the directory (fsnsuite export -kcidb DIR -o x.json),
	// as with report.
	var dirs []string
	for rest := args; ; {
		if code, done := parseArgs(fs, rest, exportUsage, stderr); done {
			return code
		}
		if fs.NArg() == 0 {
			break
		}
		dirs = append(dirs, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if !*kcidb || len(dirs) != 1 {
		fmt.Fprintln(stderr, "fsnsuite export: want -kcidb and one results directory; see -h")
		return exitcode.Usage
	}
	res, err := runner.LoadResults(dirs[0])
	if err != nil {
		fmt.Fprintf(stderr, "fsnsuite export: %v\n", err)
		return exitcode.Usage // not a results directory: bad input
	}
	err = writeTo(*out, stdout, func(w io.Writer) error {
		return runner.WriteKCIDB(w, res, runner.KCIDBOptions{Origin: *origin, BuildID: *buildID, RunID: *runID})
	})
	if err != nil {
		fmt.Fprintf(stderr, "fsnsuite export: %v\n", err)
		return exitcode.LTPBroken
	}
	return exitcode.Pass
}
