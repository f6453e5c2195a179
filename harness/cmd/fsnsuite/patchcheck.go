package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"html"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fsnsuite/fsnsuite/harness/exitcode"
	"github.com/fsnsuite/fsnsuite/harness/patchcheck"
	"github.com/fsnsuite/fsnsuite/harness/runner"
	"github.com/fsnsuite/fsnsuite/harness/runner/htmlreport"
	"github.com/fsnsuite/fsnsuite/harness/vm"
)

// patchcheckCmd is `fsnsuite patchcheck`: the suite on a base kernel and on
// the same tree with a patch applied (scripts/patchcheck/patchcheck.sh,
// make patchcheck, builds both), and the verdict. Exit 0: no difference;
// 1: behaviour changed; 2: a usage error or a step that could not run.
func patchcheckCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fsnsuite patchcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		baseDir   = fs.String("base", "", "the base kernel's `directory` (bzImage, release), as scripts/patchcheck/build-kernels.sh keeps it")
		patched   = fs.String("patched", "", "the patched kernel's `directory`")
		patch     = fs.String("patch", "", "the patch `file` (named in the summary)")
		out       = fs.String("out", "results/patchcheck", "`directory` for both kernels' runs, summary.txt, summary.json and report.html")
		scenarios = fs.Int("scenarios", 3000, "explorer scenarios per filesystem, recorded on the base and replayed on the patched kernel (`n`; 0: no explorer step)")
		noCost    = fs.Bool("no-cost", false, "leave out the cost step (the perf binaries on both kernels)")
		icount    = fs.String("cost-mode", "auto", "cost in `time|instructions|auto` (auto: time under KVM, else instructions: qemu -icount)")
		shPlugin  = fs.String("sharing-plugin", "", "run the cost step in the sharing profile with this qemu `plugin` (make sharing-plugin): perf_parent_write only, both kernels' remote-writes/op compared (harness/perf/README.md); give -vm-cpus 4 after -- for the 4-client rows")
		suiteBin  = fs.String("suite", "", "the runner `binary` (default: this executable)")
		covFile   = fs.String("coverage", "", "the coverage step's report `file` (scripts/coverage/coverage.sh with COV_DIFF on the patched tree): its changed-lines part goes into the summary")
		lock      = fs.String("lock", os.Getenv("FSNSUITE_VM_LOCK"), "flock this `file` around each VM run (default $FSNSUITE_VM_LOCK)")
		steps     = fs.String("steps", "correctness,explore,cost", "the `steps` to run, comma-separated (each runnable alone: -steps cost measures only the cost)")
		cache     = fs.String("cache", "", "the project's cache `directory` (scripts/coverage/cache-dir.sh): the base kernel's runs are kept below it and reused when the base kernel image, the suite build, the step's flags, qemu, the accelerator and the guest's userland are the same (\"\": no reuse)")
		noCache   = fs.Bool("no-base-cache", false, "run the base kernel's steps again even when the cache holds them (the new runs replace the cached ones)")
		started   = fs.Int64("started", 0, "when the whole patchcheck started, in `unix seconds` (patchcheck.sh's start: the wall time in the summary then includes the builds)")
		buildWait = fs.Float64("build-lock-wait", 0, "`seconds` the kernel builds waited for the build lock (build-kernels.sh), named in the summary's wall time")
	)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: fsnsuite patchcheck -base DIR -patched DIR [flags] [-- runner flags]\n\n"+
			"Runs the correctness suite on both kernels under qemu and compares them\n"+
			"leaf by leaf (pass -> fail and fail -> pass are the verdict; leaves failing\n"+
			"on both are listed apart), records the explorer's scenarios on the base and\n"+
			"replays them on the patched kernel, and runs the perf binaries on both\n"+
			"(-save, then -baseline). Writes summary.txt (printed), summary.json and\n"+
			"report.html into -out. make patchcheck builds the kernels and runs this.\n"+
			"Exit status: 0 no difference, 1 behaviour changed, 2 an error.\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitcode.Usage
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "fsnsuite patchcheck: %v\n", err)
		return exitcode.Usage
	}
	if *baseDir == "" || *patched == "" {
		return fail(errors.New("-base and -patched are required (see -h)"))
	}
	cfg := &patchcheck.Config{Patch: *patch, Out: *out, Scenarios: *scenarios, Cost: !*noCost, RunArgs: fs.Args(), Lock: *lock, Log: stderr}
	want := map[string]bool{}
	for _, s := range strings.Split(*steps, ",") {
		switch s = strings.TrimSpace(s); s {
		case "correctness", "explore", "cost":
			want[s] = true
		default:
			return fail(fmt.Errorf("-steps: unknown step %q (want correctness, explore, cost)", s))
		}
	}
	if *started > 0 {
		cfg.Started = time.Unix(*started, 0)
	}
	cfg.BuildLockWait = time.Duration(*buildWait * float64(time.Second))
	cfg.Cache, cfg.NoBaseCache = *cache, *noCache
	cfg.NoCorrectness = !want["correctness"]
	if !want["explore"] {
		cfg.Scenarios = 0
	}
	if !want["cost"] {
		cfg.Cost = false
	}
	switch *icount {
	case "auto":
		cfg.ICount = !vm.UsesKVM()
	case "instructions":
		cfg.ICount = true
	case "time":
	default:
		return fail(fmt.Errorf("-cost-mode %q: want time, instructions or auto", *icount))
	}
	if *shPlugin != "" {
		abs, err := filepath.Abs(*shPlugin)
		if err != nil {
			return fail(err)
		}
		cfg.SharingPlugin = abs
	}
	var err error
	if cfg.Base, err = patchcheck.LoadKernel("base", *baseDir); err != nil {
		return fail(err)
	}
	if cfg.Patched, err = patchcheck.LoadKernel("patched", *patched); err != nil {
		return fail(err)
	}
	if cfg.Base.Release == cfg.Patched.Release {
		return fail(fmt.Errorf("both kernels report release %s: results could not tell them apart (build-kernels.sh gives them -fsnbase and -fsnp-<patch name>-<hash>)", cfg.Base.Release))
	}
	if *covFile != "" {
		b, err := os.ReadFile(*covFile)
		if err != nil {
			return fail(err)
		}
		cfg.Coverage = string(b)
	}
	if cfg.Suite = *suiteBin; cfg.Suite == "" {
		if cfg.Suite, err = os.Executable(); err != nil {
			return fail(err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := patchcheck.Run(ctx, cfg)
	if res != nil {
		if werr := writePatchcheck(cfg.Out, res); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		return fail(err)
	}
	b, err := os.ReadFile(filepath.Join(cfg.Out, "summary.txt"))
	if err != nil {
		return fail(err)
	}
	stdout.Write(b)
	fmt.Fprintf(stderr, "fsnsuite patchcheck: %s/summary.txt, summary.json, report.html\n", cfg.Out)
	if res.Changed() {
		return exitcode.Fail
	}
	return exitcode.Pass
}

// writePatchcheck writes summary.txt, summary.json and (when both
// correctness runs left results) report.html, both runs side by side.
func writePatchcheck(dir string, res *patchcheck.Result) error {
	for name, w := range map[string]func(io.Writer) error{"summary.txt": res.WriteText, "summary.json": res.WriteJSON} {
		var b bytes.Buffer
		if err := w(&b); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	if res.Correct == nil {
		return nil
	}
	runs := []*runner.Results{res.Correct.Before, res.Correct.After}
	runs[0].Label, runs[1].Label = "base "+res.Config.Base.Release, "patched "+res.Config.Patched.Release
	var b bytes.Buffer
	if err := htmlreport.Write(&b, runs); err != nil {
		return fmt.Errorf("report.html: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, "report.html"), []byte(withExplorer(b.String(), res.Explore)), 0o644)
}

// withExplorer puts the explorer step's section into the comparison page,
// after the leaves that changed and before the figures, plots and runs: the
// seeds covered per filesystem and every difference with its script.
func withExplorer(page string, ex *patchcheck.Explore) string {
	if ex == nil {
		return page
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<h2>Explorer: %d differences (-n %d per filesystem recorded on the base, replayed on the patched kernel)</h2>\n<ul>\n", len(ex.Differences), ex.Scenarios)
	for _, s := range ex.Seeds {
		fmt.Fprintf(&b, "<li>%s</li>\n", html.EscapeString(s.String()))
	}
	b.WriteString("</ul>\n")
	for i, d := range ex.Differences {
		fmt.Fprintf(&b, "<p>difference %d of %d: %s</p>\n<pre>%s</pre>\n", i+1, len(ex.Differences), html.EscapeString(d.Statement), html.EscapeString(strings.Join(d.Script, "\n")))
	}
	for _, f := range ex.Failures {
		fmt.Fprintf(&b, "<p>the replay failed: %s: %s</p>\n", html.EscapeString(f.Path), html.EscapeString(f.Statement))
	}
	at := len(page)
	for _, anchor := range []string{"<h2>Perf figures", "<h2>Plots", "<h2>Run ", "</body>"} {
		if i := strings.Index(page, anchor); i >= 0 && i < at {
			at = i
		}
	}
	return page[:at] + b.String() + page[at:]
}
