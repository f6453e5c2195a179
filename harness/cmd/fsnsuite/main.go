// Command fsnsuite runs the fsnsuite test binaries and merges their TAP
// streams into one.
//
// By default it runs every executable in its own directory (bin/), perf_*
// binaries last and alone, and writes the merged TAP stream to stdout, a
// progress view and a summary to stderr, and logs plus results.tap,
// results.json, junit.xml and summary.txt to a results directory. With
// -kernel it boots that kernel in a VM and runs itself inside it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/coverage"
	"github.com/fsnsuite/fsnsuite/harness/exitcode"
	perfengine "github.com/fsnsuite/fsnsuite/harness/perf"
	"github.com/fsnsuite/fsnsuite/harness/runner"
	"github.com/fsnsuite/fsnsuite/harness/vm"
	"github.com/fsnsuite/fsnsuite/tap"
)

// vmRequest is what the VM mode needs from the command line.
type vmRequest struct {
	Kernel, Modules string
	MemMB, CPUs     int
	Timeout         time.Duration
	BinDir          string
	ResultsDir      string
	Args            []string // the runner's arguments inside the guest
	Files           map[string]string
	IncludePerf     bool
	ICount          bool   // -vm-icount: qemu TCG with -icount, perf figures in instructions
	Append          string // -vm-append: extra kernel command line
	Sharing         string // -vm-sharing: the sharing profile's qemu plugin
}

// runVM boots a kernel and runs the suite inside it (bootVM, vm.go); a test
// replaces it.
var runVM = bootVM

// vmFlags are the flags consumed on the host in VM mode, never passed to the guest.
var vmFlags = map[string]bool{"kernel": true, "modules": true, "vm-mem": true, "vm-cpus": true,
	"vm-timeout": true, "results": true, "dir": true, "f": true, "vm-file": true,
	"vm-icount": true, "vm-append": true, "vm-sharing": true}

const usage = `usage: fsnsuite [flags]
       fsnsuite export -kcidb RESULTS_DIR   (see fsnsuite export -h)
       fsnsuite report RESULTS_DIR... -o report.html   (see fsnsuite report -h)
       fsnsuite sharing [-baseline DIR] RESULTS_DIR   (see fsnsuite sharing -h)
       fsnsuite diff BEFORE_DIR AFTER_DIR   (see fsnsuite diff -h)
       fsnsuite mutants -ksrc TREE -dir DIR ...   (make mutants; see fsnsuite mutants -h)
       fsnsuite patchcheck -base DIR -patched DIR ... (make patchcheck; see fsnsuite patchcheck -h)
       fsnsuite spec-coverage   (make spec-coverage: man-page rules no case checks; see fsnsuite spec-coverage -h)

Runs the fsnsuite test binaries (default: every executable beside fsnsuite,
perf_* last and alone) and prints one merged TAP stream on stdout.

Exit status (kselftest): 0 all passed, 1 a failure, 4 everything skipped.
With -exit ltp: 0 pass, 1 fail, 2 broken (timeout, crash), 32 all skipped.
Either way 2 is also a usage or environment error: a bad flag or runtest
file, a results directory that is not the caller's alone or that cannot be
written (the TAP stream on stdout is complete even then), or a stdout that cannot be written (the results
directory is complete even then); the last line on stderr says which.

flags:
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "export":
			return export(args[1:], stdout, stderr)
		case "report":
			return report(args[1:], stdout, stderr)
		case "diff":
			return diffResults(args[1:], stdout, stderr)
		case "mutants":
			return mutants(args[1:], stdout, stderr)
		case "patchcheck":
			return patchcheckCmd(args[1:], stdout, stderr)
		case "spec-coverage":
			return specCoverage(args[1:], stdout, stderr)
		case "sharing":
			return sharingCmd(args[1:], stdout, stderr)
		}
	}
	fs := flag.NewFlagSet("fsnsuite", flag.ContinueOnError)
	var (
		runtest     = fs.String("f", "", "read the binaries from an LTP runtest `file` (\"<tag> <command> [args]\" lines)")
		dir         = fs.String("dir", "", "`directory` of the test binaries (default: the directory of this executable)")
		runRE       = fs.String("run", "", "run only binaries whose name matches `regex`")
		caseRE      = fs.String("case", "", "pass -run `regex` to every binary: run only matching cases")
		noPerf      = fs.Bool("no-perf", false, "leave out perf_* binaries")
		perf        = fs.Bool("perf", false, "VM mode: run perf_* binaries even without KVM")
		timeout     = fs.Duration("timeout", 300*time.Second, "kill a binary (its whole process group) after this `duration`; 0: never")
		caseTimeout = fs.Duration("case-timeout", 0, "pass -timeout `duration` (the per-case deadline) to every binary")
		jobs        = fs.Int("j", 1, "run up to `n` non-perf binaries at once (perf binaries always run alone)")
		format      = fs.String("format", "tap13", "output dialect `tap13|ktap`, for the merged stream and the binaries")
		strict      = fs.Bool("strict", false, "any skip is a failure (passed to the binaries too)")
		exitConv    = fs.String("exit", "kselftest", "exit-code convention `kselftest|ltp`")
		verbose     = fs.Bool("v", false, "verbose: binaries print diagnostics of passing cases too")
		profile     = fs.String("profile", "", "pass -profile `quick|full` to perf binaries")
		results     = fs.String("results", "", "results `directory`, made if missing, refused unless the caller's alone (default $FSNSUITE_RESULTS_DIR, else ./results/<UTC timestamp>)")
		list        = fs.Bool("list", false, "print the selected binaries and their command lines, and exit")
		kernel      = fs.String("kernel", "", "VM mode: boot this kernel `image` in qemu and run the suite inside it")
		modules     = fs.String("modules", "", "VM mode: module tree `dir` (lib/modules/VERSION) for loop, ext4")
		vmMem       = fs.String("vm-mem", "", "VM mode: guest memory `size` (MiB, or with suffix M/G)")
		vmCPUs      = fs.Int("vm-cpus", 0, "VM mode: guest CPU `count` (with -vm-sharing: the measured vCPUs, and qemu gets one more, vCPU 0, for the rest of the guest)")
		vmTimeout   = fs.Duration("vm-timeout", 0, "VM mode: bound for the whole run, boot to power-off")
		vmICount    = fs.Bool("vm-icount", false, "VM mode: instruction-count mode: qemu TCG with -icount shift=0,sleep=off (1 guest ns per instruction), perf binaries included, perf figures in instructions per operation (time gates reported only)")
		vmSharing   = fs.String("vm-sharing", "", "VM mode: the sharing profile with this qemu `plugin` (make sharing-plugin prints it): instruction-count mode, and per perf chunk the kernel-mode writes to cache lines more than one vCPU wrote, reported per operation in RESULTS/sharing.txt (harness/perf/README.md)")
		vmAppend    = fs.String("vm-append", "", "VM mode: append `args` to the guest kernel command line (e.g. clocksource=hpet)")
		vmFiles     = map[string]string{}
	)
	fs.Func("vm-file", "VM mode: put host file `HOST=GUEST` at the absolute guest path GUEST (repeatable; e.g. a binary's input named in a -f runtest line; the guest's /results comes back as the results directory)", func(v string) error {
		host, guest, ok := strings.Cut(v, "=")
		if !ok || host == "" || !filepath.IsAbs(guest) || filepath.Clean(guest) == "/" {
			return errors.New("want HOST=GUEST with an absolute guest path")
		}
		abs, err := filepath.Abs(host)
		if err != nil {
			return err
		}
		if st, err := os.Stat(abs); err != nil {
			return err
		} else if !st.Mode().IsRegular() {
			return fmt.Errorf("%s: not a regular file", host)
		}
		vmFiles[filepath.Clean(guest)] = abs
		return nil
	})
	// A bad flag gets one line and a pointer to -h, not the whole usage.
	if code, done := parseArgs(fs, args, usage, stderr); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "fsnsuite: unexpected arguments %q; see -h\n", fs.Args())
		return exitcode.Usage
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "fsnsuite: "+format+"\n", a...)
		if *exitConv == "ltp" {
			// -exit ltp ends the output with the counts kirk reads, also
			// when nothing could run: broken, as the exit status says.
			_ = tap.LTPSummary(stdout, 0, 0, 1, 0, 0)
		}
		return exitcode.Usage
	}
	f, err := tap.ParseFormat(*format)
	if err != nil {
		return fail("%v", err)
	}
	if *exitConv != "kselftest" && *exitConv != "ltp" {
		return fail("unknown -exit %q (want kselftest or ltp)", *exitConv)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"timeout", *timeout}, {"case-timeout", *caseTimeout}, {"vm-timeout", *vmTimeout}} {
		if d.v < 0 {
			return fail("-%s %v is negative (0 means no limit)", d.name, d.v)
		}
	}
	if *jobs < 1 {
		return fail("-j %d: want 1 or more", *jobs)
	}
	// The perf binaries would each refuse a bad -profile: say it once, here.
	if _, ok := perfengine.Profiles[*profile]; *profile != "" && !ok {
		return fail("unknown -profile %q (want quick or full)", *profile)
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })

	self, err := os.Executable()
	if err != nil {
		return fail("finding own executable: %v", err)
	}
	binDir := *dir
	if binDir == "" {
		binDir = filepath.Dir(self)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	// A reader of stdout that goes away (fsnsuite | head) must not kill the
	// runner and, through their pipes, the binaries: with SIGPIPE caught,
	// the write fails instead and the run goes on.
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	defer signal.Stop(pipes)

	if *kernel != "" {
		return runInVM(ctx, fs, set, vmRequest{
			Kernel: *kernel, Modules: *modules, CPUs: *vmCPUs, Timeout: *vmTimeout,
			BinDir: binDir, IncludePerf: *perf, Files: vmFiles, ICount: *vmICount, Append: *vmAppend, Sharing: *vmSharing,
		}, *vmMem, *runtest, *results, stderr)
	}
	if len(vmFiles) > 0 {
		return fail("-vm-file is for VM mode (-kernel)")
	}
	for _, name := range []string{"vm-icount", "vm-append", "vm-sharing"} {
		if set[name] {
			return fail("-%s is for VM mode (-kernel)", name)
		}
	}

	var bins []runner.Binary
	if *runtest != "" {
		rf, err := os.Open(*runtest)
		if err != nil {
			return fail("%v", err)
		}
		bins, err = runner.ReadRuntest(rf, []string{binDir})
		rf.Close()
		if err != nil {
			return fail("%s: %v", *runtest, err)
		}
		if len(bins) == 0 {
			return fail("%s lists no test binary (the file is empty, or has only blank lines and comments)", *runtest)
		}
		bins = skipLeftOut(bins)
	} else {
		bins, err = runner.Discover(binDir, self, true)
		if err != nil {
			return fail("%v", err)
		}
	}
	var re *regexp.Regexp
	if *runRE != "" {
		if re, err = regexp.Compile(*runRE); err != nil {
			return fail("bad -run: %v", err)
		}
	}
	if *caseRE != "" {
		if _, err := regexp.Compile(*caseRE); err != nil {
			return fail("bad -case: %v", err)
		}
	}
	found, matched := len(bins), len(runner.Filter(bins, re, true))
	bins = runner.Order(runner.Filter(bins, re, !*noPerf))
	if len(bins) == 0 {
		from := "in " + binDir
		if *runtest != "" {
			from = "of " + *runtest
		}
		switch {
		case found == 0:
			return fail("no test binaries in %s (-dir and -f choose where they are)", binDir)
		case matched == 0:
			return fail("no test binary %s matches -run %s (%d there)", from, *runRE, found)
		}
		return fail("every test binary %s that was selected is a perf_* one, and -no-perf leaves them out", from)
	}

	var pass, perfArgs []string
	if set["format"] {
		pass = append(pass, "-format", f.String())
	}
	if *strict {
		pass = append(pass, "-strict")
	}
	if set["exit"] {
		pass = append(pass, "-exit", *exitConv)
	}
	if *caseRE != "" {
		pass = append(pass, "-run", *caseRE)
	}
	if *caseTimeout > 0 {
		pass = append(pass, "-timeout", caseTimeout.String())
	}
	if *verbose {
		pass = append(pass, "-v")
	}
	if *profile != "" {
		perfArgs = append(perfArgs, "-profile", *profile)
	}

	if *list {
		for _, b := range bins {
			if b.Skip != "" {
				fmt.Fprintf(stdout, "%s\t# SKIP %s\n", b.Name, b.Skip)
				continue
			}
			cmd := []string{b.Path}
			if !b.Verbatim { // a program not ours gets its runtest line's arguments only
				cmd = append(cmd, pass...)
				if b.IsPerf() {
					cmd = append(cmd, perfArgs...)
				}
			}
			fmt.Fprintf(stdout, "%s\t%s\n", b.Name, strings.Join(append(cmd, b.Args...), " "))
		}
		return exitcode.Pass
	}

	resDir := *results
	if resDir == "" {
		resDir = os.Getenv("FSNSUITE_RESULTS_DIR")
	}
	if resDir == "" {
		resDir = newResultsDir()
	}
	opt := runner.Options{
		Timeout:    *timeout,
		Jobs:       *jobs,
		PassArgs:   pass,
		PerfArgs:   perfArgs,
		Format:     f,
		Strict:     *strict,
		ResultsDir: resDir,
		// In a VM guest, the directory its results reach on the host.
		ShownResultsDir: os.Getenv(vm.HostResultsEnv),
		Out:             stdout,
		Progress:        stderr,
		Live:            isTerminal(stderr) && !dumbTerminal() && stdoutNotShownThere(stdout),
		Colour:          colourOn(stderr),
		Log:             stderr,
	}
	// In a gcov guest (harness/vm init.sh exports it) the counters are
	// copied after every binary, so each line's count can be told by
	// binary: one binary at a time then.
	if dir := os.Getenv(coverage.SnapshotsEnv); dir != "" {
		if opt.Jobs > 1 {
			fmt.Fprintf(stderr, "fsnsuite: %s set: gcov counters are taken per binary, so binaries run one at a time (not -j %d)\n", coverage.SnapshotsEnv, opt.Jobs)
			opt.Jobs = 1
		}
		opt.AfterBinary = func(pos int, b runner.Binary) {
			to := filepath.Join(dir, fmt.Sprintf("%02d-%s", pos, b.Name))
			if _, err := coverage.Snapshot(coverage.GcovDebugfs, to); err != nil {
				fmt.Fprintf(stderr, "fsnsuite: gcov snapshot after %s: %v\n", b.Name, err)
				// fsncov then gives no per-binary counts rather than wrong ones.
				msg := fmt.Sprintf("after %s: %v\n", b.Name, err)
				if werr := os.WriteFile(filepath.Join(dir, coverage.SnapshotFailed), []byte(msg), 0o644); werr != nil {
					fmt.Fprintf(stderr, "fsnsuite: %v\n", werr)
				}
			}
		}
	}
	// One terminal for both: the stream and the view go through one writer,
	// the view below the stream, so that no redraw overwrites a TAP line.
	// Stdout elsewhere (a file, /dev/null): the view has stderr's terminal
	// to itself, and the runner's messages go above it.
	var screen *runner.Screen
	if tty, ok := sameTerminal(stdout, stderr); ok && !dumbTerminal() {
		screen = runner.NewScreen(tty, func() (int, int) { return termSize(tty) })
		opt.Out, opt.Log, opt.Screen = screen, screen, screen
	} else if tty, ok := stderr.(*os.File); ok && opt.Live {
		screen = runner.NewScreen(tty, func() (int, int) { return termSize(tty) })
		opt.Log, opt.Screen = screen, screen
	}
	rep, err := runner.Run(ctx, bins, opt)
	if screen != nil {
		screen.Close()
	}
	if err != nil {
		// Nothing ran: the results directory is unusable (read-only,
		// not a directory): an environment error, LTP's TBROK.
		fmt.Fprintf(stderr, "fsnsuite: results directory %s: %v\n", resDir, err)
		if *exitConv == "ltp" {
			_ = tap.LTPSummary(stdout, 0, 0, 1, 0, 0)
		}
		return exitcode.LTPBroken
	}
	// The summary fits the terminal it is read on (else SummaryRows lines),
	// its totals last.
	st := runner.SummaryTerm{Colour: opt.Colour, Self: self}
	if f, ok := stderr.(*os.File); ok && isTerminal(f) {
		cols, rows := termSize(f)
		if rows == 0 {
			rows = runner.SummaryRows + 2
		}
		st.Cols, st.Rows = cols, rows-2 // a row for the prompt, one for the blank line above
	}
	rep.WriteSummaryTo(stderr, st)
	if *exitConv == "ltp" {
		rep.WriteLTPSummary(stdout)
	}
	// Say exactly what is incomplete: the stream on stdout, the results
	// directory, or both.
	if rep.StdoutErr != nil {
		whole := "; the results in " + resDir + " are complete"
		if rep.WriteErr != nil {
			whole = ""
		}
		fmt.Fprintf(stderr, "fsnsuite: the TAP stream on stdout is incomplete: %v%s\n", rep.StdoutErr, whole)
	}
	if rep.WriteErr != nil {
		fmt.Fprintf(stderr, "fsnsuite: the results in %s are incomplete: %v\n", resDir, rep.WriteErr)
	}
	if rep.StdoutErr != nil || rep.WriteErr != nil {
		return exitcode.RunnerOutputLost
	}
	return rep.ExitCode(*exitConv == "ltp")
}

// runInVM hands the run to the VM mode: the guest runs fsnsuite with the
// flags given here, less those that only mean something on the host.
func runInVM(ctx context.Context, fs *flag.FlagSet, set map[string]bool, req vmRequest, mem, runtest, results string, stderr io.Writer) int {
	if mem != "" {
		mb, err := parseMiB(mem)
		if err != nil {
			fmt.Fprintf(stderr, "fsnsuite: -vm-mem: %v\n", err)
			return exitcode.Usage
		}
		req.MemMB = mb
	}
	req.ResultsDir = results
	if req.ResultsDir == "" {
		req.ResultsDir = newResultsDir()
	}
	// The guest's results land there: only in the caller's directory.
	if err := runner.CheckResultsDir(req.ResultsDir); err != nil {
		fmt.Fprintf(stderr, "fsnsuite: results directory %s: %v\n", req.ResultsDir, err)
		return exitcode.Usage
	}
	fs.Visit(func(fl *flag.Flag) {
		if !vmFlags[fl.Name] && fl.Name != "perf" {
			req.Args = append(req.Args, "-"+fl.Name+"="+fl.Value.String())
		}
	})
	if runtest != "" {
		const guestRuntest = "/opt/fsnsuite/runtest"
		abs, err := filepath.Abs(runtest)
		if err != nil {
			fmt.Fprintf(stderr, "fsnsuite: -f: %v\n", err)
			return exitcode.Usage
		}
		if req.Files == nil {
			req.Files = map[string]string{}
		}
		req.Files[guestRuntest] = abs
		req.Args = append(req.Args, "-f="+guestRuntest)
	}
	code, err := runVM(ctx, req)
	if err != nil {
		fmt.Fprintf(stderr, "fsnsuite: %v\n", err)
		return code
	}
	if req.Sharing != "" {
		return sharingReport(req, code, stderr)
	}
	return code
}

// newResultsDir names a fresh ./results/<UTC timestamp>[-N] directory.
func newResultsDir() string {
	base := filepath.Join("results", time.Now().UTC().Format("20060102-150405"))
	dir := base
	for n := 2; ; n++ {
		if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
			return dir
		}
		dir = fmt.Sprintf("%s-%d", base, n)
	}
}

// parseMiB reads "2048", "512M" or "2G" as MiB.
func parseMiB(s string) (int, error) {
	mult := 1
	switch {
	case strings.HasSuffix(strings.ToUpper(s), "G"):
		mult, s = 1024, s[:len(s)-1]
	case strings.HasSuffix(strings.ToUpper(s), "M"):
		s = s[:len(s)-1]
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad size %q (want MiB, or a number with M or G)", s)
	}
	return n * mult, nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// dumbTerminal reports whether TERM says the terminal moves no cursor and
// shows no colour (TERM=dumb: Emacs' shell, some CI consoles).
func dumbTerminal() bool { return os.Getenv("TERM") == "dumb" }

// colourOn reports whether w is a terminal to show colour on: not a pipe
// or a file, not a dumb terminal, and NO_COLOR unset or empty (any other
// value turns colour off: no-color.org).
func colourOn(w io.Writer) bool {
	return isTerminal(w) && !dumbTerminal() && os.Getenv("NO_COLOR") == ""
}

// stdoutNotShownThere reports whether stdout cannot be reaching stderr's
// terminal by another way: a file, /dev/null or a terminal (the same one is
// shared through a runner.Screen). A pipe or a socket may end on that
// terminal (fsnsuite | tee log), and a live view redrawn there would be drawn
// over the lines that come through it, so then the view is plain lines.
func stdoutNotShownThere(stdout io.Writer) bool {
	f, ok := stdout.(*os.File)
	if !ok {
		return false
	}
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return false
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG, unix.S_IFCHR:
		return true
	}
	return false
}

// sameTerminal returns stdout's file when stdout and stderr are both the
// same terminal device.
func sameTerminal(stdout, stderr io.Writer) (*os.File, bool) {
	o, ok1 := stdout.(*os.File)
	e, ok2 := stderr.(*os.File)
	if !ok1 || !ok2 || !isTerminal(o) || !isTerminal(e) {
		return nil, false
	}
	var so, se unix.Stat_t
	if unix.Fstat(int(o.Fd()), &so) != nil || unix.Fstat(int(e.Fd()), &se) != nil {
		return nil, false
	}
	return o, so.Rdev == se.Rdev
}

// termSize is the terminal's width and height, 0 where it does not say.
func termSize(f *os.File) (cols, rows int) {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0, 0
	}
	return int(ws.Col), int(ws.Row)
}
