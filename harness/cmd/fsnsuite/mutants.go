package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fsnsuite/fsnsuite/harness/coverage"
	"github.com/fsnsuite/fsnsuite/harness/mutate"
)

// mutants is `fsnsuite mutants`: the mutation analysis of fs/notify
// (harness/mutate) that scripts/mutants/mutants.sh (make mutants) runs.
// Exit 0 when the analysis ran (whatever the score), 1 when -expect was
// not met, 2 on a usage error or when the analysis could not run.
func mutants(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fsnsuite mutants", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		ksrc        = fs.String("ksrc", "", "kernel `tree` to make the mutants from (only read)")
		dir         = fs.String("dir", "", "`directory` holding src/ (a private copy of -ksrc) and build/ (its build directory), as scripts/mutants/build-kernel.sh makes them")
		results     = fs.String("results", "results/mutants", "results `directory`: report.txt, mutants.json, base/ and one directory per mutant")
		n           = fs.Int("n", 15, "sample `size`: mutants drawn at random; 0: every mutant")
		seed        = fs.Uint64("seed", 1, "sample `seed`")
		ids         = fs.String("id", "", "comma-separated mutant `ids` to run instead of a sample (run even when listed as equivalent)")
		base        = fs.String("base", "", "mutate only the lines changed since this git `rev` of -ksrc (committed or not)")
		lines       = fs.String("coverage", "", "`make coverage`'s per-line counts (results/coverage/lines.json): mutants on lines that never ran are not run")
		equiv       = fs.String("equivalent", "", "equivalents `file` (ID REASON lines): listed mutants are not run")
		list        = fs.Bool("list", false, "list the mutants (id, file:line, operator, function) and exit; with -n, the sample -n and -seed draw; with -id, those mutants and their diffs")
		jobs        = fs.Int("jobs", 2, "make -j `n`")
		nice        = fs.Int("nice", 19, "niceness of make")
		lock        = fs.String("lock", os.Getenv("FSNSUITE_VM_LOCK"), "flock this `file` around each VM run (default $FSNSUITE_VM_LOCK)")
		vmCPUs      = fs.Int("vm-cpus", 2, "guest CPU `count` (and runner -j)")
		vmMem       = fs.Int("vm-mem", 0, "guest memory in `MiB` (0: the runner's default)")
		vmTime      = fs.Duration("vm-timeout", 0, "limit of a mutant's run (`duration`; 0: twice the baseline's run plus 3 minutes)")
		expect      = fs.String("expect", "", "exit 1 unless every mutant run has this `outcome` (killed, survived, crashed, ...; killed accepts crashed), or each listed mutant its own (ID:OUTCOME,ID:OUTCOME)")
		suiteBin    = fs.String("suite", "", "the runner `binary` (default: this executable)")
		shardArg    = fs.String("shard", "", "run (or with -list, list) only part `K/N` of the mutant list: every N-th mutant from the K-th, so that N machines share one run (merge their results directories with -merge)")
		files       = fs.String("files", "", "comma-separated source `files` to mutate (e.g. fs/notify/fsnotify.c,fs/notify/notification.c); default every fs/notify file")
		merge       = fs.Bool("merge", false, "merge the results directories given as arguments (the shards of one run) into -results: one report, the scores of the unsharded run")
		partial     = fs.Bool("partial", false, "with -merge: accept missing or incomplete shards (the report then says INCOMPLETE)")
		resume      = fs.Bool("resume", false, "keep the verdicts an interrupted run of the same selection left in -results (its mutants.json) and run only the mutants it had not decided; refused when the selection, the test binaries or the baseline differ")
		resumeForce = fs.Bool("resume-force", false, "with -resume: keep the interrupted run's verdicts although its test binaries, runner or inputs differ from this run's or were not recorded (each difference is printed; check that they judge alike)")
		firstKill   = fs.Bool("first-kill", false, "stop a mutant's run at the first leaf that kills it (a leaf that passed or skipped on the unmutated kernel fails): the same score, killed_by names that leaf only, and a hung mutant costs its hung case's TIMEOUT instead of the VM timeout")
		noStages    = fs.Bool("no-stages", false, "run each mutant on the whole suite in one VM run (default: the quickest binaries first, the rest only if they did not kill it; off when runner flags choose the binaries)")
	)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: fsnsuite mutants -ksrc TREE -dir DIR [flags] [-- runner flags]\n"+
			"       fsnsuite mutants -ksrc TREE -list [-id IDS] [-base REV] [-shard K/N]\n"+
			"       fsnsuite mutants -merge -results OUT SHARD_DIR...\n\n"+
			"Plants one fault at a time in fs/notify's C source (dnotify left out), builds\n"+
			"the kernel incrementally in DIR/build, runs the correctness suite on it under\n"+
			"qemu and compares each leaf with the unmutated kernel's run: killed (a leaf\n"+
			"went from pass to fail), survived, crashed/hung or a kernel bug report\n"+
			"(counted as killed), build-failed, not covered (coverage data), equivalent\n"+
			"(listed), same-code (compiled to the unmutated objects).\n"+
			"scripts/mutants/mutants.sh (make mutants) prepares DIR and runs this.\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "fsnsuite mutants: %v\n", err)
		return 2
	}
	if *merge {
		return mergeShards(*results, fs.Args(), *partial, stdout, stderr)
	}
	var shard *mutate.Shard
	if *shardArg != "" {
		s, err := mutate.ParseShard(*shardArg)
		if err != nil {
			return fail(fmt.Errorf("-shard: %w", err))
		}
		shard = &s
	}
	// -expect is checked before anything runs: a typo must not cost a run.
	want, err := parseExpect(*expect)
	if err != nil {
		return fail(fmt.Errorf("-expect: %w", err))
	}
	if *ksrc == "" {
		return fail(errors.New("-ksrc is required (see -h)"))
	}
	var keep map[string]map[int]bool
	if *base != "" {
		var err error
		if keep, err = changedLines(*ksrc, *base); err != nil {
			return fail(err)
		}
	}
	all, err := mutate.GenerateTree(*ksrc, keep)
	if err != nil {
		return fail(err)
	}
	var fileList []string
	if *files != "" {
		fileList = strings.Split(*files, ",")
		if all, err = mutate.OnlyFiles(all, fileList); err != nil {
			return fail(fmt.Errorf("-files: %w", err))
		}
	}
	var chosen []string
	if *ids != "" {
		chosen = strings.Split(*ids, ",")
	}
	equivalents := mutate.Equivalents{}
	if *equiv != "" {
		f, err := os.Open(*equiv)
		if err != nil {
			return fail(err)
		}
		equivalents, err = mutate.ReadEquivalents(f)
		f.Close()
		if err != nil {
			return fail(err)
		}
	}
	if *list {
		ms := all
		nSet := false
		fs.Visit(func(f *flag.Flag) { nSet = nSet || f.Name == "n" })
		switch {
		case chosen != nil:
			if ms, err = mutate.Select(all, chosen); err != nil {
				return fail(err)
			}
		case nSet:
			// The sample a run with these -n, -seed and -equivalent
			// would draw (before coverage data leaves some out).
			var pool []mutate.Mutant
			for _, m := range all {
				if _, ok := equivalents[m.ID]; !ok {
					pool = append(pool, m)
				}
			}
			ms = mutate.Sample(pool, *n, *seed)
		}
		if shard != nil {
			ms = shard.Pick(ms)
		}
		for _, m := range ms {
			fmt.Fprintf(stdout, "%s %s %s %s\n", m.ID, m.Where(), m.Op, m.Func)
			if chosen != nil {
				fmt.Fprint(stdout, m.Diff)
			}
		}
		return 0
	}
	if *dir == "" {
		return fail(errors.New("-dir is required to run mutants (see -h)"))
	}
	cfg := &mutate.Config{
		KSRC: *ksrc, Src: filepath.Join(*dir, "src"), Build: filepath.Join(*dir, "build"),
		SuiteArgs: fs.Args(), Results: *results, Jobs: *jobs, Nice: *nice, Lock: *lock,
		VMCPUs: *vmCPUs, VMMem: *vmMem, VMTimeout: *vmTime, Log: stderr,
		Equivalents: equivalents, NoStages: *noStages, FirstKill: *firstKill,
	}
	cfg.Suite = *suiteBin
	if cfg.Suite == "" {
		if cfg.Suite, err = os.Executable(); err != nil {
			return fail(err)
		}
	}
	rep := &mutate.Report{KSRC: *ksrc, Base: *base, Seed: *seed, N: *n, IDs: chosen, Generated: len(all), ByOp: map[string]int{}, NeverRan: -1, Files: fileList}
	if shard != nil {
		rep.Shard = shard.String()
	}
	rep.Coverage = "none: every mutant is run (make coverage writes results/coverage/lines.json)"
	if *lines != "" {
		f, err := os.Open(*lines)
		switch {
		case errors.Is(err, os.ErrNotExist):
			rep.Coverage = fmt.Sprintf("none (no %s; run make coverage on this KSRC first): every mutant is run", *lines)
		case err != nil:
			return fail(err)
		default:
			cfg.Lines, err = coverage.ReadLines(f)
			f.Close()
			if err != nil {
				return fail(fmt.Errorf("%s: %w", *lines, err))
			}
			rep.Coverage = *lines
		}
	}
	sums, err := sourceSums(*ksrc, all)
	if err != nil {
		return fail(err)
	}
	var pool []mutate.Mutant
	if cfg.Lines != nil {
		rep.NeverRan = 0
	}
	for i := range all {
		m := &all[i]
		rep.ByOp[m.Op]++
		if _, ok := cfg.Equivalents[m.ID]; ok {
			rep.Equivalent++
			continue
		}
		if ran, known := mutate.Covered(cfg.Lines, sums, m); known && !ran {
			rep.NeverRan++
		}
		pool = append(pool, *m)
	}
	var ms []mutate.Mutant
	if chosen != nil {
		if ms, err = mutate.Select(all, chosen); err != nil {
			return fail(err)
		}
		cfg.Force = true
	} else {
		ms = mutate.Sample(pool, *n, *seed)
	}
	if shard != nil {
		ms = shard.Pick(ms)
		fmt.Fprintf(stderr, "fsnsuite mutants: shard %s\n", shard)
	}
	rep.FirstKill = *firstKill
	if rep.SuiteBuild, err = mutate.SuiteBuild(cfg.Suite); err != nil {
		fmt.Fprintf(stderr, "fsnsuite mutants: %v: not recorded (a later -resume will need -resume-force)\n", err)
	}
	if rep.RunnerBuild, err = mutate.RunnerBuild(cfg.Suite); err != nil {
		fmt.Fprintf(stderr, "fsnsuite mutants: %v: not recorded (a later -resume will need -resume-force)\n", err)
	}
	if rep.Inputs, err = mutantInputs(*lines, cfg, *ksrc, *dir, *vmCPUs, *vmMem, *vmTime, equivalents); err != nil {
		return fail(err)
	}
	if *resume {
		prior, err := readReport(*results)
		switch {
		case errors.Is(err, os.ErrNotExist):
			fmt.Fprintf(stderr, "fsnsuite mutants: -resume: no report in %s: running every mutant\n", *results)
		case err != nil:
			return fail(fmt.Errorf("-resume: %w", err))
		default:
			var warnings []string
			if cfg.Prior, warnings, err = mutate.Resumable(prior, rep, ms, *resumeForce); err != nil {
				return fail(fmt.Errorf("-resume %s: %w", *results, err))
			}
			for _, w := range warnings {
				fmt.Fprintf(stderr, "fsnsuite mutants: -resume-force: kept although %s\n", w)
			}
			cfg.PriorBaseline = prior.Baseline
			rep.Resumed = len(cfg.Prior)
		}
	}
	fmt.Fprintf(stderr, "fsnsuite mutants: %d mutants generated, %d listed as equivalent; running %d\n", len(all), rep.Equivalent, len(ms)-len(cfg.Prior))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	write := func(bl *mutate.Baseline, rs []mutate.Result) error {
		rep.Baseline, rep.Results = bl, rs
		return writeReport(*results, rep)
	}
	bl, rs, err := mutate.Run(ctx, cfg, ms, write)
	if err != nil && len(rs) < len(cfg.Prior) {
		// Stopped before the kept verdicts were written again (the
		// baseline refused, broke or was interrupted): the interrupted
		// run's report stays as it was, for the next -resume.
		fmt.Fprintf(stderr, "fsnsuite mutants: %s/mutants.json left as the interrupted run wrote it\n", *results)
		return fail(err)
	}
	rep.Baseline, rep.Results = bl, rs
	rep.Complete = err == nil
	if werr := writeReport(*results, rep); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		return fail(err)
	}
	if b, err := os.ReadFile(filepath.Join(*results, "report.txt")); err == nil {
		stdout.Write(b)
	}
	fmt.Fprintf(stderr, "fsnsuite mutants: report in %s/report.txt and %s/mutants.json\n", *results, *results)
	if len(want) > 0 {
		met := true
		for _, r := range rs {
			exp, ok := want[r.ID]
			if !ok {
				exp, ok = want[""]
			}
			if !ok {
				continue
			}
			if string(r.Outcome) == exp || exp == string(mutate.Killed) && r.Outcome == mutate.Crashed {
				fmt.Fprintf(stderr, "fsnsuite mutants: %s %s: %s, as expected\n", r.ID, r.Where(), r.Outcome)
				continue
			}
			fmt.Fprintf(stderr, "fsnsuite mutants: %s %s: %s, expected %s\n", r.ID, r.Where(), r.Outcome, exp)
			met = false
		}
		for id := range want {
			if id != "" && !slices.ContainsFunc(rs, func(r mutate.Result) bool { return r.ID == id }) {
				fmt.Fprintf(stderr, "fsnsuite mutants: -expect names %s, which did not run\n", id)
				met = false
			}
		}
		if !met {
			return 1
		}
	}
	return 0
}

// mergeShards reads the mutants.json of each shard's results directory and
// writes the merged report into out.
func mergeShards(out string, dirs []string, partial bool, stdout, stderr io.Writer) int {
	if len(dirs) == 0 {
		fmt.Fprintln(stderr, "fsnsuite mutants: -merge needs the shards' results directories as arguments (see -h)")
		return 2
	}
	var reps []*mutate.Report
	for _, d := range dirs {
		r, err := readReport(d)
		if err != nil {
			fmt.Fprintf(stderr, "fsnsuite mutants: -merge: %v\n", err)
			return 2
		}
		reps = append(reps, r)
	}
	merged, err := mutate.Merge(reps, partial)
	if err != nil {
		fmt.Fprintf(stderr, "fsnsuite mutants: %v\n", err)
		return 2
	}
	if err := writeReport(out, merged); err != nil {
		fmt.Fprintf(stderr, "fsnsuite mutants: %v\n", err)
		return 2
	}
	if b, err := os.ReadFile(filepath.Join(out, "report.txt")); err == nil {
		stdout.Write(b)
	}
	fmt.Fprintf(stderr, "fsnsuite mutants: %d shards merged into %s/report.txt and %s/mutants.json\n", len(merged.Merged), out, out)
	return 0
}

// readReport reads dir/mutants.json.
func readReport(dir string) (*mutate.Report, error) {
	name := filepath.Join(dir, "mutants.json")
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var r mutate.Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &r, nil
}

// parseExpect reads -expect: one outcome for every mutant ("killed"), or
// ID:OUTCOME pairs separated by commas ("9339abacbc:killed,f5c3ccd6c2:survived").
// The map's "" key holds the outcome for every mutant.
func parseExpect(s string) (map[string]string, error) {
	out := map[string]string{}
	if s == "" {
		return out, nil
	}
	known := []mutate.Outcome{mutate.Killed, mutate.Survived, mutate.Crashed, mutate.BuildFailed, mutate.NotCovered, mutate.Equivalent, mutate.SameCode}
	for _, part := range strings.Split(s, ",") {
		id, outcome, paired := strings.Cut(strings.TrimSpace(part), ":")
		if !paired {
			id, outcome = "", id
		}
		if outcome == "" {
			return nil, fmt.Errorf("%q: no outcome", part)
		}
		if !slices.Contains(known, mutate.Outcome(outcome)) {
			return nil, fmt.Errorf("%q: unknown outcome %q (one of %v)", part, outcome, known)
		}
		if _, dup := out[id]; dup {
			return nil, fmt.Errorf("%q: given twice", part)
		}
		out[id] = outcome
	}
	return out, nil
}

// writeReport writes report.txt and mutants.json into dir.
func writeReport(dir string, rep *mutate.Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, w := range map[string]func(io.Writer) error{"report.txt": rep.WriteText, "mutants.json": rep.WriteJSON} {
		var b bytes.Buffer
		if err := w(&b); err != nil {
			return err
		}
		// Written whole or not at all: a run killed mid-write must leave
		// the last report readable (-resume reads it).
		tmp := filepath.Join(dir, "."+name+".tmp")
		if err := os.WriteFile(tmp, b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return nil
}

// changedLines is every line of fs/notify changed since base in the git
// tree ksrc (against the work tree: committed or not), per file.
func changedLines(ksrc, base string) (map[string]map[int]bool, error) {
	cmd := exec.Command("git", "-C", ksrc, "diff", "--no-color", "--no-ext-diff", "-U0", base, "--", "fs/notify")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("BASE=%s: git diff in %s: %w: %s", base, ksrc, err, strings.TrimSpace(stderr.String()))
	}
	changes, _, err := coverage.ParseDiff(bytes.NewReader(out))
	if err != nil {
		return nil, fmt.Errorf("BASE=%s: %w", base, err)
	}
	lines := map[string]map[int]bool{}
	for _, c := range changes {
		if lines[c.Path] == nil {
			lines[c.Path] = map[int]bool{}
		}
		lines[c.Path][c.Line] = true
	}
	return lines, nil
}

// mutantInputs is what a run's verdicts depend on besides the selection and
// the builds, as Report.Inputs records it: -resume refuses another run's
// verdicts when any differs.
func mutantInputs(lines string, cfg *mutate.Config, ksrc, dir string, vmCPUs, vmMem int, vmTime time.Duration, eq mutate.Equivalents) (map[string]string, error) {
	in := map[string]string{
		"runner_flags": strings.Join(cfg.SuiteArgs, " "),
		"vm_cpus":      strconv.Itoa(vmCPUs),
		"vm_mem":       strconv.Itoa(vmMem),
		"vm_timeout":   vmTime.String(),
		"no_stages":    strconv.FormatBool(cfg.NoStages),
		"coverage":     "none",
	}
	if cfg.Lines != nil {
		s, err := mutate.FileSum(lines)
		if err != nil {
			return nil, err
		}
		in["coverage"] = s[:12]
	}
	// Every source file of fs/notify (not only the mutated ones: a
	// mutant's diff has 3 lines of context, a verdict the whole kernel).
	files, err := mutate.SourceFiles(ksrc)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	for _, f := range files {
		s, err := mutate.FileSum(filepath.Join(ksrc, f))
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(h, "%s %s\n", f, s)
	}
	in["sources"] = hex.EncodeToString(h.Sum(nil))[:12]
	in["kernel_config"] = "none"
	if s, err := mutate.FileSum(filepath.Join(dir, "build", ".config")); err == nil {
		in["kernel_config"] = s[:12]
	}
	h = sha256.New()
	for _, id := range slices.Sorted(maps.Keys(eq)) {
		fmt.Fprintf(h, "%s\n", id)
	}
	in["equivalents"] = hex.EncodeToString(h.Sum(nil))[:12]
	return in, nil
}

// sourceSums is the sha256 of each file the mutants are in.
func sourceSums(ksrc string, ms []mutate.Mutant) (map[string]string, error) {
	sums := map[string]string{}
	for _, m := range ms {
		if _, ok := sums[m.File]; ok {
			continue
		}
		s, err := mutate.FileSum(filepath.Join(ksrc, m.File))
		if err != nil {
			return nil, err
		}
		sums[m.File] = s
	}
	return sums, nil
}
