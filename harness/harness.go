// Package harness is the framework every fsnsuite test binary links. A binary
// declares a Suite (its cases as a table) and calls Main, which parses the
// command line, checks for root, and supervises a case process (the binary
// re-executed in a private mount namespace, supervise.go) that runs each case
// on each filesystem with a deadline (caseproc.go); a case that hangs or
// crashes costs that case only, the next runs in a fresh case process. Output
// is TAP (or KTAP) with kselftest (or LTP) exit codes (harness/exitcode).
package harness

import (
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/fsnsuite/fsnsuite/harness/actor"
	"github.com/fsnsuite/fsnsuite/harness/exitcode"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/fixture"
	"github.com/fsnsuite/fsnsuite/harness/reexec"
	"github.com/fsnsuite/fsnsuite/tap"
)

// Suite describes one test binary.
type Suite struct {
	// Name is the binary's name, [a-z0-9_].
	Name string
	// Doc says in one line what the binary checks.
	Doc string
	// Needs are features without which no case can run; when one is missing
	// every case is reported as skipped with the reason.
	Needs []*feature.Feature
	// Filesystems each case runs on, in order ("tmpfs", "ext4"); the case
	// name gets the filesystem as a suffix after a dot. Empty: each case runs
	// once, unsuffixed, on tmpfs.
	Filesystems []string
	// Cases is the table.
	Cases []Case
	// CaseFunc, when set, builds more cases after the command line is parsed,
	// for tables that depend on flags (perf suites size their cases by
	// -profile). Its cases follow Cases.
	CaseFunc func() []Case
	// Timeout is the per-case deadline when -timeout is not given (default
	// 30s). Perf suites, whose cases bound themselves by a time budget, set
	// it higher so the full profile is not cut short.
	Timeout time.Duration
	// NoNamespace runs the case process in the binary's own mount namespace
	// (for binaries that need none, such as pure API checks). Default false.
	NoNamespace bool
	// Flags, when set, adds the binary's own flags to the command line before
	// it is parsed (perf binaries: perf.Flags.Register).
	Flags func(*flag.FlagSet)
	// Rules declares, by case name, the rule ids of harness/spec/rules.txt
	// each case checks: a case would fail if a kernel broke one of them. A
	// key is a case name (every filesystem's leaf), a case's leaf name
	// ("case.ext4") or "case/subtest" for a declared subtest. `-list-rules`
	// prints "leaf rule-id" for the selected leaves, and refuses a key that
	// names no case or a rule the map lacks. By convention the map lives in
	// the binary's spec.go.
	Rules map[string][]string
	// Roles are the binary's own helper processes, by reexec role: a copy
	// of the binary started with reexec.Command(role, ...) runs the role's
	// function with its arguments and exits with its status (Main registers
	// and dispatches them before parsing anything).
	Roles map[string]func(args []string) int
}

// Case is one row of a suite's table.
type Case struct {
	// Name is the case's stable name, [a-z0-9_].
	Name string
	// Doc says in one line what the case proves; printed before its result.
	Doc string
	// Needs are features this case needs beyond the suite's.
	Needs []*feature.Feature
	// Fix names the kernel commit the expected behaviour depends on. It
	// prints nothing by itself: a failing case prints "HINT: kernel may lack"
	// a fix only when it saw what a kernel without it does (T.KernelLacks,
	// often with T.CaseFix).
	Fix *Fix
	// Filesystems overrides Suite.Filesystems for this case when non-nil.
	Filesystems []string
	// Subtests names every subtest Run may start (t.Run), in order. A case
	// that declares them keeps its leaves when it ends early: each subtest it
	// did not run is reported skipped with the reason (CI history keys on
	// leaf names), `-list -subtests` prints them, and a t.Run name missing
	// here (or any t.Run in a case that declares none) fails the case.
	Subtests []string
	// Run is the case body.
	Run func(t *T)
}

// Fix is a kernel commit a case's expectation depends on.
type Fix struct {
	Commit  string
	Subject string
}

// Hint renders the line a failing case prints when it called T.KernelLacks.
func (f *Fix) Hint() string {
	id := f.Commit
	if len(id) > 12 {
		id = id[:12]
	}
	return fmt.Sprintf("HINT: kernel may lack %s (%q)", id, f.Subject)
}

// Options are the parsed common flags, visible to suites that need them
// (perf binaries read Profile through their own flags).
type Options struct {
	List        bool
	ListRules   bool
	Subtests    bool
	Run         string
	Timeout     time.Duration
	Format      string
	Strict      bool
	Exit        string
	Verbose     bool
	runRegex    *regexp.Regexp
	conv        exitcode.Convention
	noNamespace bool
}

// Opts holds the options of the running binary once Main has parsed them.
var Opts Options

func registerFlags(fs *flag.FlagSet) {
	fs.BoolVar(&Opts.List, "list", false, "print the case names and exit")
	fs.BoolVar(&Opts.ListRules, "list-rules", false, "print \"leaf rule-id\" for each man-page rule (harness/spec) a selected leaf declares it checks, and exit")
	fs.BoolVar(&Opts.Subtests, "subtests", false, "with -list: print each case's declared subtests below it, indented by four spaces")
	fs.StringVar(&Opts.Run, "run", "", "run only cases whose name matches this regular expression")
	fs.DurationVar(&Opts.Timeout, "timeout", 30*time.Second, "deadline of each case (0: none)")
	fs.StringVar(&Opts.Format, "format", envOr("FSNSUITE_FORMAT", "tap13"), "output format: tap13 or ktap")
	fs.BoolVar(&Opts.Strict, "strict", os.Getenv("FSNSUITE_STRICT") == "1", "treat every skip as a failure")
	fs.StringVar(&Opts.Exit, "exit", envOr("FSNSUITE_EXIT", "kselftest"), "exit code convention: kselftest or ltp")
	fs.BoolVar(&Opts.Verbose, "v", false, "print every case's log, not only failures'")
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

type instance struct {
	c    *Case
	fs   string
	name string
}

func expand(s *Suite) []instance {
	var out []instance
	for i := range s.Cases {
		c := &s.Cases[i]
		fss := s.Filesystems
		if c.Filesystems != nil {
			fss = c.Filesystems
		}
		if len(fss) == 0 {
			out = append(out, instance{c: c, fs: "tmpfs", name: c.Name})
			continue
		}
		for _, f := range fss {
			out = append(out, instance{c: c, fs: f, name: c.Name + "." + f})
		}
	}
	return out
}

var validName = regexp.MustCompile(`^[a-z0-9_]+(\.[a-z0-9_]+)*$`)

// init registers the harness's own role (the actor) and hands a process
// started in it to that role before the main package builds its case table:
// an actor needs none of it, and large generated tables would slow every
// actor start. It is the only init function of the suite; a binary's own roles
// and flags come through its Suite.
func init() {
	reexec.Register(actor.Role, func([]string) int { return actor.Serve() })
	reexec.Dispatch()
}

// Main runs the suite and exits. It never returns.
func Main(s Suite) {
	for role, fn := range s.Roles {
		reexec.Register(role, fn)
	}
	reexec.Dispatch() // the binary's own roles (Suite.Roles)
	os.Exit(run(s, os.Args[1:]))
}

// run runs the binary with args and returns its exit status. A stream that
// could not be written whole to stdout is never a pass: one line on stderr
// names the error, and the status is the convention's broken one
// (exitcode.OutputLost: 1, or LTP's 2).
func run(s Suite, args []string) int {
	out := &stdoutWriter{w: os.Stdout}
	code := runTo(s, args, out)
	if err := out.Err(); err != nil {
		what := "the TAP stream"
		if Opts.List {
			what = "the case list"
		}
		if Opts.ListRules {
			what = "the rule list"
		}
		fmt.Fprintf(os.Stderr, "%s: %s on stdout is incomplete: %v\n", s.Name, what, err)
		if code == exitcode.Usage {
			return code // a bad command line says so itself
		}
		return exitcode.OutputLost(Opts.conv)
	}
	return code
}

func runTo(s Suite, args []string, out io.Writer) int {
	fs := flag.NewFlagSet(s.Name, flag.ContinueOnError)
	registerFlags(fs)
	if s.Flags != nil {
		s.Flags(fs)
	}
	// A bad flag is one line and a pointer to -h, not the whole usage.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprintf(os.Stderr, "%s: %s\n\nusage: %s [flags]\n", s.Name, s.Doc, s.Name)
			fs.SetOutput(os.Stderr)
			fs.PrintDefaults()
			return exitcode.Pass
		}
		return usageError(s.Name, "%v", err)
	}
	if fs.NArg() > 0 {
		return usageError(s.Name, "unexpected argument %q", fs.Arg(0))
	}
	var err error
	if Opts.conv, err = exitcode.Parse(Opts.Exit); err != nil {
		return usageError(s.Name, "-exit: %v", err)
	}
	if s.Timeout > 0 {
		given := false
		fs.Visit(func(f *flag.Flag) { given = given || f.Name == "timeout" })
		if !given {
			Opts.Timeout = s.Timeout
		}
	}
	if Opts.Timeout < 0 {
		return usageError(s.Name, "-timeout %v: a deadline cannot be negative (0 means none)", Opts.Timeout)
	}
	format, err := tap.ParseFormat(Opts.Format)
	if err != nil {
		return usageError(s.Name, "-format: %v", err)
	}
	if Opts.Run != "" {
		if Opts.runRegex, err = regexp.Compile(Opts.Run); err != nil {
			return usageError(s.Name, "-run: %v", err)
		}
	}
	if s.CaseFunc != nil {
		s.Cases = append(append([]Case(nil), s.Cases...), s.CaseFunc()...)
	}
	all := expand(&s)
	seen := map[string]bool{}
	for _, in := range all {
		if !validName.MatchString(in.name) || seen[in.name] {
			fmt.Fprintf(os.Stderr, "%s: bad or duplicate case name %q\n", s.Name, in.name)
			return exitcode.Usage
		}
		seen[in.name] = true
	}
	var selected []instance
	for _, in := range all {
		if Opts.runRegex == nil || Opts.runRegex.MatchString(in.name) {
			selected = append(selected, in)
		}
	}
	if Opts.ListRules {
		if err := listRules(&s, all, selected, out); err != nil {
			fmt.Fprintf(os.Stderr, "%s: -list-rules: %v\n", s.Name, err)
			return exitcode.Usage
		}
		return exitcode.Pass
	}
	if Opts.List {
		for _, in := range selected {
			fmt.Fprintln(out, in.name)
			if Opts.Subtests {
				for _, sub := range in.c.Subtests {
					fmt.Fprintln(out, "    "+sub)
				}
			}
		}
		return exitcode.Pass
	}

	Opts.noNamespace = s.NoNamespace
	if fixture.InPrivateNamespace() {
		return runCaseProcess(&s, selected, format)
	}
	w := tap.NewWriter(out, format)
	skipAll := func(reason string) int {
		w.Version()
		w.SkipAll(reason)
		if Opts.conv == exitcode.LTP {
			// As LTP's own tests end a run that TCONFs in its setup: the
			// whole test is one skip (kirk reads these counts).
			_ = tap.LTPSummary(out, 0, 0, 0, 1, 0)
		}
		return Opts.conv.Skip()
	}
	if len(selected) == 0 {
		return skipAll(fmt.Sprintf("no case matches -run %s", Opts.Run))
	}
	if os.Geteuid() != 0 {
		return skipAll("requires root")
	}
	return supervise(&s, selected, w, out)
}

// usageError prints one line about a bad command line and returns the usage
// status.
func usageError(name, format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "%s: %s (see -h)\n", name, fmt.Sprintf(format, args...))
	return exitcode.Usage
}

func joinReasons(rs []string) string { return strings.Join(rs, "; ") }
