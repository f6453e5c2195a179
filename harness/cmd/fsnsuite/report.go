package main

import (
	"flag"
	"fmt"
	"io"
	"os"

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
	fs.SetOutput(io.Discard)
	out := fs.String("o", "report.html", "write the page to `file` (- for stdout)")
	// Flags may follow the directories (fsnsuite report DIR -o x.html).
	var dirs []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if err == flag.ErrHelp {
				fmt.Fprint(stderr, reportUsage)
				fs.SetOutput(stderr)
				fs.PrintDefaults()
				return 0
			}
			fmt.Fprintf(stderr, "fsnsuite report: %v; see -h\n", err)
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		dirs = append(dirs, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(dirs) == 0 {
		fmt.Fprintln(stderr, "fsnsuite report: want at least one results directory; see -h")
		return 2
	}
	var runs []*runner.Results
	for _, d := range dirs {
		r, err := runner.LoadResults(d)
		if err != nil {
			fmt.Fprintf(stderr, "fsnsuite report: %v\n", err)
			return 2
		}
		runs = append(runs, r)
	}
	w := stdout
	var f *os.File
	if *out != "-" {
		var err error
		if f, err = os.Create(*out); err != nil {
			fmt.Fprintf(stderr, "fsnsuite report: %v\n", err)
			return 2
		}
		w = f
	}
	err := htmlreport.Write(w, runs)
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "fsnsuite report: %v\n", err)
		return 2
	}
	if f != nil {
		fmt.Fprintf(stderr, "fsnsuite report: wrote %s\n", *out)
	}
	return 0
}
