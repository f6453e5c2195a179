package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/fsnsuite/fsnsuite/harness/runner"
)

// diffResults is `fsnsuite diff BEFORE AFTER`: the leaf-by-leaf comparison
// of two results directories as text (runner.CompareResults). Exit 0 when no
// leaf changed between pass and fail, 1 when one did, 2 on a usage error or
// a directory that is not a results directory.
func diffResults(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fsnsuite diff", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: fsnsuite diff BEFORE_DIR AFTER_DIR\n\n"+
			"Compares two results directories leaf by leaf: pass -> fail and fail -> pass\n"+
			"are the verdict (a failing leaf the other run lacks counts: a binary that\n"+
			"failed as a whole), printed first with the figures that went beyond their\n"+
			"gates; each changed leaf follows with the case's statement and HINT; leaves\n"+
			"that fail in both and leaves that passed before and skip after are listed\n"+
			"apart, and figures both runs reported are tabled: before and after with\n"+
			"their intervals, the change in percent with its interval (~ when it spans\n"+
			"no change), and the gate each was judged against.\n"+
			"Exit status: 0 no pass/fail difference, 1 a difference, 2 a usage error.\n")
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 2 {
		fmt.Fprintln(stderr, "fsnsuite diff: want two results directories (see -h)")
		return 2
	}
	var rs [2]*runner.Results
	for i, dir := range fs.Args() {
		r, err := runner.LoadResults(dir)
		if err != nil {
			fmt.Fprintf(stderr, "fsnsuite diff: %s: %v\n", dir, err)
			return 2
		}
		rs[i] = r
	}
	d := runner.CompareResults(rs[0], rs[1])
	if err := d.WriteText(stdout); err != nil {
		fmt.Fprintf(stderr, "fsnsuite diff: %v\n", err)
		return 2
	}
	if d.Differs() {
		return 1
	}
	return 0
}
