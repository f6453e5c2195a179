package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnsuite/fsnsuite/harness/runner"
	"github.com/fsnsuite/fsnsuite/harness/spec"
)

// specCoverage is `fsnsuite spec-coverage`: the man-page rule map
// (harness/spec/rules.txt) joined with the rules every test binary's cases
// declare (`BIN -list-rules`). It prints the total, the rules no case checks
// and the untestable ones with their reasons. Exit 0 when every testable
// rule has a case, 1 when some have none (or a claim names an unknown rule),
// 2 on a usage error or a binary whose declarations are refused.
func specCoverage(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fsnsuite spec-coverage", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "`directory` of the test binaries (default: the directory of this executable)")
	verbose := fs.Bool("v", false, "also list every checked rule with the leaves that check it")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: fsnsuite spec-coverage [-dir DIR] [-v]\n\n"+
			"Joins the man-page rule map (harness/spec/rules.txt, embedded) with the rules\n"+
			"the cases of every test binary declare (BIN -list-rules; perf_* binaries\n"+
			"included) and prints the total, the rules no case checks and the untestable\n"+
			"ones with the map's reason. Needs no root: nothing runs but -list-rules.\n"+
			"Exit status: 0 every testable rule has a case, 1 some have none, 2 a usage\n"+
			"error or a binary whose declarations are refused.\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "fsnsuite spec-coverage: unexpected arguments %q (see -h)\n", fs.Args())
		return 2
	}
	m, err := spec.Load()
	if err != nil {
		fmt.Fprintf(stderr, "fsnsuite spec-coverage: %v\n", err)
		return 2
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "fsnsuite spec-coverage: finding own executable: %v\n", err)
		return 2
	}
	binDir := *dir
	if binDir == "" {
		binDir = filepath.Dir(self)
	}
	bins, err := runner.Discover(binDir, self, true)
	if err != nil {
		fmt.Fprintf(stderr, "fsnsuite spec-coverage: %v\n", err)
		return 2
	}
	if len(bins) == 0 {
		fmt.Fprintf(stderr, "fsnsuite spec-coverage: no test binary in %s\n", binDir)
		return 2
	}
	var claims []spec.Claim
	for _, b := range bins {
		cs, err := listRules(b)
		if err != nil {
			fmt.Fprintf(stderr, "fsnsuite spec-coverage: %v\n", err)
			return 2
		}
		claims = append(claims, cs...)
	}
	r := spec.Cover(m, claims)
	if err := r.Write(stdout, m, *verbose); err != nil {
		fmt.Fprintf(stderr, "fsnsuite spec-coverage: writing the report: %v\n", err)
		return 2
	}
	if len(r.Missing) > 0 || len(r.Unknown) > 0 {
		return 1
	}
	return 0
}

// listRules runs one binary with -list-rules and parses its "leaf rule"
// lines.
func listRules(b runner.Binary) ([]spec.Claim, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, b.Path, "-list-rules")
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s -list-rules: %v: %s", b.Name, err, strings.TrimSpace(errb.String()))
	}
	var cs []spec.Claim
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		leaf, rule, ok := strings.Cut(sc.Text(), " ")
		if !ok || leaf == "" || rule == "" || strings.Contains(rule, " ") {
			return nil, fmt.Errorf("%s -list-rules: line %q: want \"leaf rule-id\"", b.Name, sc.Text())
		}
		cs = append(cs, spec.Claim{Binary: b.Name, Leaf: leaf, Rule: rule})
	}
	return cs, sc.Err()
}
