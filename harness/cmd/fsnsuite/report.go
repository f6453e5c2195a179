package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/fsnsuite/fsnsuite/harness/exitcode"
	"github.com/fsnsuite/fsnsuite/harness/runner"
	"github.com/fsnsuite/fsnsuite/harness/runner/htmlreport"
)

const reportUsage = `usage: fsnsuite report [-o report.html] RESULTS_DIR...

Renders results directories (runs of fsnsuite, e.g. one per kernel) as one
self-contained HTML page: pass/fail/skip per binary with reasons, every
failing case's diagnostics and HINT lines, skips by reason, and the perf
measurements as SVG plots.

flags:
`

// report is "fsnsuite report ...".
func report(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fsnsuite report", flag.ContinueOnError)
	out := fs.String("o", "report.html", "write the page to `file` (- for stdout)")
	// Flags may follow the directories (fsnsuite report DIR -o x.html).
	var dirs []string
	for rest := args; ; {
		if code, done := parseArgs(fs, rest, reportUsage, stderr); done {
			return code
		}
		if fs.NArg() == 0 {
			break
		}
		dirs = append(dirs, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(dirs) == 0 {
		fmt.Fprintln(stderr, "fsnsuite report: want at least one results directory; see -h")
		return exitcode.Usage
	}
	var runs []*runner.Results
	for _, d := range dirs {
		r, err := runner.LoadResults(d)
		if err != nil {
			fmt.Fprintf(stderr, "fsnsuite report: %v\n", err)
			return exitcode.Usage // not a results directory: bad input
		}
		runs = append(runs, r)
	}
	if err := writeTo(*out, stdout, func(w io.Writer) error { return htmlreport.Write(w, runs) }); err != nil {
		fmt.Fprintf(stderr, "fsnsuite report: %v\n", err)
		return exitcode.LTPBroken
	}
	if *out != "-" {
		fmt.Fprintf(stderr, "fsnsuite report: wrote %s\n", *out)
	}
	return exitcode.Pass
}
