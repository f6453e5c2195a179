package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/tap"
)

// RunInfo describes where and when a run happened; the runner writes it to
// run.json in the results directory, beside results.json.
type RunInfo struct {
	Suite string `json:"suite"`
	// Kernel is the release (uname -r) and Arch the machine (uname -m).
	Kernel  string    `json:"kernel"`
	Arch    string    `json:"arch"`
	Host    string    `json:"host"`
	Start   time.Time `json:"start"`
	Seconds float64   `json:"seconds"`
}

func hostInfo(suite string, start time.Time, elapsed time.Duration) RunInfo {
	ri := RunInfo{Suite: suite, Start: start.UTC(), Seconds: elapsed.Seconds()}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		ri.Kernel, ri.Arch, ri.Host = unix.ByteSliceToString(u.Release[:]), unix.ByteSliceToString(u.Machine[:]), unix.ByteSliceToString(u.Nodename[:])
	}
	return ri
}

// Results is a results directory read back: the merged tree and the run's facts.
type Results struct {
	Dir  string
	Root *tap.Node
	Info RunInfo
	// Label names the run in a report (fsnsuite report -label); empty:
	// its kernel and directory.
	Label string
}

// LoadResults reads results.json and run.json from a results directory. A
// file that is not what the runner writes (JSON null, {}, an object of other
// fields) is refused with an error naming the file and what is wrong: read
// as a document, it would give an empty report or export, as if the run had
// nothing to say. So is a directory whose files the run could not write
// whole (a results filesystem that filled, then freed): a results.json cut
// short, or a results.tap without its last newline or without a result line
// for every binary its plan promised. The text of the tree is escaped as
// Parse escapes it (tap.Escape), whoever wrote the file.
func LoadResults(dir string) (*Results, error) {
	r := &Results{Dir: dir, Root: &tap.Node{}}
	path := filepath.Join(dir, "results.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading results: %w", err)
	}
	if err := jsonObject(b); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) && se.Offset >= int64(len(bytes.TrimRight(b, " \t\r\n"))) {
			return nil, fmt.Errorf("%s: cut short: the JSON ends after %d bytes, before the document does (the run could not write it whole: a full disk?)", path, len(b))
		}
		return nil, fmt.Errorf("%s: not a results document: %w", path, err)
	}
	if err := json.Unmarshal(b, r.Root); err != nil {
		return nil, fmt.Errorf("%s: not a results document: %w", path, err)
	}
	if err := checkResultsRoot(r.Root); err != nil {
		return nil, fmt.Errorf("%s: not a results document: %w", path, err)
	}
	escapeTree(r.Root)
	path = filepath.Join(dir, "results.tap")
	if b, err := os.ReadFile(path); err == nil {
		if err := completeTAP(b, r.Root.Plan); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("reading results: %w", err)
	}
	path = filepath.Join(dir, "run.json")
	b, err = os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading run facts: %w", err)
	}
	if err := jsonObject(b); err != nil {
		return nil, fmt.Errorf("%s: not a run description: %w", path, err)
	}
	if err := json.Unmarshal(b, &r.Info); err != nil {
		return nil, fmt.Errorf("%s: not a run description: %w", path, err)
	}
	if r.Info.Suite == "" || r.Info.Start.IsZero() {
		return nil, fmt.Errorf("%s: not a run description: no \"suite\" or \"start\"", path)
	}
	return r, nil
}

// completeTAP checks a results.tap the runner wrote (a results directory
// made by other means may have none): it ends with a newline, and its top
// level has a plan of plan binaries and a result line for each. A stream
// cut at a line's end has its plan but fewer results.
func completeTAP(b []byte, plan int) error {
	const why = "the run could not write it whole (a full disk?), and its other files may not be either"
	if len(b) == 0 || b[len(b)-1] != '\n' {
		return fmt.Errorf("cut short: no newline at its end (%d bytes): %s", len(b), why)
	}
	st := tap.ParseString(string(b))
	got := 0 // the result lines (Parse fills what the plan promised with missing points)
	for _, c := range st.Children {
		if c.Status != tap.StatusMissing {
			got++
		}
	}
	switch {
	case st.Plan < 0:
		return fmt.Errorf("cut short: no plan: %s", why)
	case got < st.Plan:
		return fmt.Errorf("cut short: plan 1..%d but only %d result lines: %s", st.Plan, got, why)
	case st.Plan != plan:
		return fmt.Errorf("plan 1..%d but results.json has %d binaries: not the same run", st.Plan, plan)
	}
	return nil
}

// escapeTree passes the text of every node below n through tap.Escape.
func escapeTree(n *tap.Node) {
	n.Name, n.Reason, n.SkipAll, n.BailOut = tap.Escape(n.Name), tap.Escape(n.Reason), tap.Escape(n.SkipAll), tap.Escape(n.BailOut)
	for _, l := range [][]string{n.Diagnostics, n.YAML, n.Problems} {
		for i := range l {
			l[i] = tap.Escape(l[i])
		}
	}
	for _, c := range n.Children {
		if c != nil {
			escapeTree(c)
		}
	}
}

// jsonObject checks that b is one JSON value and an object (json.Unmarshal
// takes null for any struct and leaves it empty).
func jsonObject(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if _, ok := v.(map[string]any); !ok {
		s := strings.TrimSpace(string(b))
		if len(s) > 20 {
			s = s[:20] + "..."
		}
		return fmt.Errorf("the JSON value is %s, not an object", s)
	}
	return nil
}

// checkResultsRoot checks what every results.json the runner writes has: a
// TAP or KTAP version, a plan of one entry per binary run, each with a name.
func checkResultsRoot(root *tap.Node) error {
	switch root.Version {
	case "TAP version 13", "KTAP version 1":
	case "":
		return fmt.Errorf("no \"version\" (want \"TAP version 13\" or \"KTAP version 1\")")
	default:
		return fmt.Errorf("\"version\" is %q (want \"TAP version 13\" or \"KTAP version 1\")", root.Version)
	}
	if len(root.Children) == 0 {
		return fmt.Errorf("no binary in \"children\" (a run has at least one)")
	}
	if root.Plan != len(root.Children) {
		return fmt.Errorf("\"plan\" is %d but \"children\" lists %d binaries", root.Plan, len(root.Children))
	}
	for i, c := range root.Children {
		if c == nil || c.Name == "" {
			return fmt.Errorf("binary %d of %d has no \"name\"", i+1, len(root.Children))
		}
	}
	return nil
}

// Leaf is one result for CI: a dotted path below the suite (binary, case,
// subtest; Node.Key of each), the node, and its binary's block.
type Leaf struct {
	Path   string
	Node   *tap.Node
	Binary *tap.Node
}

// Leaves lists every leaf of root, plus a VerdictCase entry for each binary
// whose block went wrong as a whole (crash, timeout, broken plan) so that such
// a binary can never read as green, and a binary without cases as a leaf of
// its own.
func Leaves(root *tap.Node) []Leaf {
	var out []Leaf
	for _, bin := range root.Children {
		if len(bin.Children) == 0 {
			out = append(out, Leaf{Path: bin.Key(), Node: bin, Binary: bin})
			continue
		}
		bin.WalkKeys(func(p []string, l *tap.Node) {
			out = append(out, Leaf{Path: bin.Key() + "." + strings.Join(p, "."), Node: l, Binary: bin})
		})
		if bin.Status.Failed() && !anyFailed(bin) {
			out = append(out, Leaf{Path: bin.Key() + "." + tap.VerdictCase, Node: bin, Binary: bin})
		}
	}
	return out
}

func anyFailed(n *tap.Node) bool {
	failed := false
	n.Walk(func(_ []string, l *tap.Node) { failed = failed || l.Status.Failed() })
	return failed
}

// ResultWord is a status as one lowercase word: "fail" for anything that
// fails, "skip", else "pass" (lava-test-case's result words; the report's
// CSS classes).
func ResultWord(s tap.Status) string {
	switch {
	case s.Failed():
		return "fail"
	case s == tap.StatusSkip:
		return "skip"
	}
	return "pass"
}

// WriteLAVA writes the results file the LAVA test definition
// (scripts/lava/fsnsuite.yaml) turns into lava-test-case calls: one line per
// leaf, "NAME RESULT", and one line per measurement a leaf reported,
// "NAME.MEASUREMENT RESULT VALUE UNIT". NAME is a stable dotted path (no
// reason, no numbering): reasons stay in the TAP log. The last line counts
// the lines above it by result, "# count pass=N fail=M skip=K total=T":
// scripts/lava/lava-results.sh checks what it read against it, so a file cut
// short (a full disk) is reported as such, never as fewer passes.
func WriteLAVA(w io.Writer, root *tap.Node) error {
	count := map[string]int{}
	total := 0
	line := func(format string, a ...any) error {
		if _, err := fmt.Fprintf(w, format, a...); err != nil {
			return fmt.Errorf("writing lava results: %w", err)
		}
		return nil
	}
	for _, l := range Leaves(root) {
		res := ResultWord(l.Node.Status)
		if err := line("%s %s\n", l.Path, res); err != nil {
			return err
		}
		count[res]++
		total++
		if l.Node == l.Binary && len(l.Binary.Children) > 0 {
			continue // the binary's verdict line has no figures of its own
		}
		for _, m := range l.Node.Measurements() {
			if err := line("%s.%s %s %s %s\n", l.Path, m.Name, res, fmtMeasure(m.Value), m.Unit); err != nil {
				return err
			}
			count[res]++
			total++
		}
	}
	return line("%s\n", lavaCount(count, total))
}

// lavaCount is the last line of a LAVA results file.
func lavaCount(count map[string]int, total int) string {
	return fmt.Sprintf("# count pass=%d fail=%d skip=%d total=%d", count["pass"], count["fail"], count["skip"], total)
}

func fmtMeasure(v float64) string { return fmt.Sprintf("%g", v) }

// LAVALine is one line of a LAVA results file.
type LAVALine struct {
	Name, Result string
	Measurement  string // empty when the line has none
	Units        string
}

// ParseLAVA reads a results file written by WriteLAVA and checks what LAVA
// needs of it: names are dotted paths and unique, results are pass, fail,
// skip or unknown, a measurement is a number with units, and the file ends
// with its count line (newline included), which agrees with the lines above.
func ParseLAVA(r io.Reader) ([]LAVALine, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading lava results: %w", err)
	}
	text := string(b)
	if !strings.HasSuffix(text, "\n") {
		return nil, fmt.Errorf("cut short: no newline at the end (%d bytes)", len(b))
	}
	var out []LAVALine
	seen := map[string]int{}
	count := map[string]int{}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "# count ") {
		return nil, fmt.Errorf("cut short: the last line is %q, not the count line", last)
	}
	for i, line := range lines[:len(lines)-1] {
		f := strings.Fields(line)
		if len(f) != 2 && len(f) != 4 {
			return nil, fmt.Errorf("line %d: %q: want NAME RESULT [MEASUREMENT UNITS]", i+1, line)
		}
		l := LAVALine{Name: f[0], Result: f[1]}
		if !tap.DottedPath.MatchString(l.Name) {
			return nil, fmt.Errorf("line %d: name %q is not a dotted path", i+1, l.Name)
		}
		if prev, dup := seen[l.Name]; dup {
			return nil, fmt.Errorf("line %d: name %q already on line %d", i+1, l.Name, prev)
		}
		seen[l.Name] = i + 1
		switch l.Result {
		case "pass", "fail", "skip", "unknown":
		default:
			return nil, fmt.Errorf("line %d: result %q: want pass, fail, skip or unknown", i+1, l.Result)
		}
		if len(f) == 4 {
			l.Measurement, l.Units = f[2], f[3]
			v, err := strconv.ParseFloat(l.Measurement, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("line %d: measurement %q is not a finite number", i+1, l.Measurement)
			}
		}
		count[l.Result]++
		out = append(out, l)
	}
	if want := lavaCount(count, len(out)); last != want {
		return nil, fmt.Errorf("the count line says %q, the lines above it %q", last, want)
	}
	return out, nil
}
