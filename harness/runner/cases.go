package runner

import (
	"bufio"
	"bytes"
	"context"
	"debug/buildinfo"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/fsnsuite/fsnsuite/tap"
)

// ListedCase is one case a binary would run, as its `-list -subtests` prints it.
type ListedCase struct {
	Name     string
	Subtests []string
}

// Lister names the cases b runs with args, in order. It returns nil (and no
// error) for a program it cannot ask.
type Lister func(ctx context.Context, b Binary, args []string) ([]ListedCase, error)

// ourModule is the main module of every fsnsuite test binary.
const ourModule = "github.com/fsnsuite/fsnsuite"

// listTimeout bounds a -list call: it only prints the table.
const listTimeout = 10 * time.Second

// ListCases asks one of our test binaries (known by its Go build info, so a
// foreign program from a runtest file is never started again) for its cases
// under the same arguments (the same -run filter, the same -profile), with
// `-list -subtests`.
func ListCases(ctx context.Context, b Binary, args []string) ([]ListedCase, error) {
	bi, err := buildinfo.ReadFile(b.Path)
	if err != nil || bi.Main.Path != ourModule {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.Path, append(append([]string(nil), args...), "-list", "-subtests")...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s -list: %w", b.Name, err)
	}
	return ParseList(out), nil
}

// ParseList reads `-list -subtests` output: a case name per line, each
// followed by its subtests indented.
func ParseList(out []byte) []ListedCase {
	var cases []ListedCase
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		l := sc.Text()
		name := strings.TrimSpace(l)
		switch {
		case name == "":
		case indentedLine(l) && len(cases) > 0:
			cases[len(cases)-1].Subtests = append(cases[len(cases)-1].Subtests, name)
		case !indentedLine(l):
			cases = append(cases, ListedCase{Name: name})
		}
	}
	return cases
}

// stoppedBySignal returns the case a binary reported stopped by a signal (its
// last result, not ok, after a tap.StoppedBySignal diagnostic) and the
// signal's name, or "" when its last result is no such case.
func stoppedBySignal(st *tap.Node) (name, sig string) {
	last := 0
	for _, c := range st.Children {
		if c.Status != tap.StatusMissing {
			last = max(last, c.Number)
		}
	}
	i := slices.IndexFunc(st.Children, func(c *tap.Node) bool { return c.Number == last })
	if i < 0 || st.Children[i].Status != tap.StatusFail {
		return "", ""
	}
	c := st.Children[i]
	for _, d := range c.Diagnostics {
		if rest, ok := strings.CutPrefix(d, c.Name+": "+tap.StoppedBySignal); ok {
			sig, _, _ = strings.Cut(rest, ";")
			return c.Name, strings.TrimSpace(sig)
		}
	}
	return "", ""
}

func indentedLine(l string) bool { return strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") }

// closingLines completes the stream of a binary that was killed (or died)
// before reporting every case: the first unreported case is the one it was in
// (not ok, with why), each later one is reported skipped as not run, every
// case keeps its declared subtests as leaves, and a block without a plan gets
// one. The lines are in the binary's own dialect, unindented, numbered after
// its last result. It returns nil when nothing is missing or the cases are
// not known.
func closingLines(st *tap.Node, cases []ListedCase, killed, why string) []string {
	if len(cases) == 0 || st.BailOut != "" {
		return nil
	}
	reported := map[string]bool{}
	last := 0
	for _, c := range st.Children {
		if c.Status != tap.StatusMissing {
			reported[c.Name] = true
			last = max(last, c.Number)
		}
	}
	// The harness reports the case a signal stopped itself (not ok, after
	// a tap.StoppedBySignal diagnostic): then the runner's kill stopped no
	// other case, and every unreported one is a case that did not run.
	stopped, _ := stoppedBySignal(st)
	if stopped != "" {
		why = ""
	}
	var rest []ListedCase
	for _, c := range cases {
		if !reported[c.Name] {
			rest = append(rest, c)
		}
	}
	if len(rest) == 0 {
		return nil
	}
	f := tap.TAP13
	if strings.HasPrefix(st.Version, "KTAP") {
		f = tap.KTAP
	}
	var buf bytes.Buffer
	w := tap.NewWriter(&buf, f)
	if st.Plan < 0 && last == 0 {
		w.Plan(len(cases))
	}
	w.SetCount(last)
	if stopped != "" {
		w.Diag(fmt.Sprintf("fsnsuite: %s while %s ran (reported above)", killed, stopped))
	}
	for i, c := range rest {
		r := tap.Result{OK: true, Name: c.Name, Directive: tap.Skip, Reason: "not run: " + killed}
		if i == 0 && why != "" {
			w.Diag(fmt.Sprintf("fsnsuite: %s; this case had not finished", killed))
			r = tap.Result{OK: false, Name: c.Name, Directive: tap.Directive(why), Reason: killed}
			if why == "FAIL" {
				r.Directive = tap.NoDirective
			}
		}
		if len(c.Subtests) == 0 {
			w.Result(r)
			continue
		}
		sub := w.Sub(c.Name)
		for _, s := range c.Subtests {
			sub.Result(tap.Result{OK: true, Name: s, Directive: tap.Skip, Reason: "not run: " + killed})
		}
		w.EndSub(sub, r)
	}
	return strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
}
