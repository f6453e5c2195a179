package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/fsnsuite/fsnsuite/harness/exitcode"
	"github.com/fsnsuite/fsnsuite/harness/runner"
	"github.com/fsnsuite/fsnsuite/harness/runner/htmlreport"
)

const reportUsage = `usage: fsnsuite report [-o report.html] [-label NAME]... RESULTS_DIR...

Renders results directories (runs of fsnsuite, e.g. one per kernel) as one
self-contained HTML page that opens with the verdict: of one run, PASS/FAIL/
SKIP with its failures grouped by reason; of several, the verdict fsnsuite
diff prints for the first against each other run, its regressions with each
case's statement and HINT, what improved, and a table of every perf figure
before and after with the change and its gate. Then the plots (every gate
drawn), and per run its binaries, every failing case's diagnostics, skips by
reason and the cases reported without a gate. A run is named by its kernel
and directory, or by the i-th -label for the i-th directory.

flags:
`

// report is "fsnsuite report ...".
func report(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fsnsuite report", flag.ContinueOnError)
	out := fs.String("o", "report.html", "write the page to `file` (- for stdout)")
	var labels []string
	fs.Func("label", "name the next results directory's run `NAME` in the page (repeatable: the i-th names the i-th directory)", func(v string) error {
		if strings.TrimSpace(v) == "" {
			return fmt.Errorf("empty label")
		}
		labels = append(labels, v)
		return nil
	})
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
	if len(labels) > len(dirs) {
		noun := "directories"
		if len(dirs) == 1 {
			noun = "directory"
		}
		fmt.Fprintf(stderr, "fsnsuite report: %d labels for %d results %s; see -h\n", len(labels), len(dirs), noun)
		return exitcode.Usage
	}
	var runs []*runner.Results
	for i, d := range dirs {
		r, err := runner.LoadResults(d)
		if err != nil {
			fmt.Fprintf(stderr, "fsnsuite report: %v\n", err)
			return exitcode.Usage // not a results directory: bad input
		}
		if i < len(labels) {
			r.Label = labels[i]
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
