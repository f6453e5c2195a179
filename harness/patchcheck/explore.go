package patchcheck

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/fsnsuite/fsnsuite/harness/runner"
	"github.com/fsnsuite/fsnsuite/tap"
)

// Difference is one recorded scenario the patched kernel does differently
// from the base kernel's recording (fsnotify_explore -against).
type Difference struct {
	// Leaf is the replay's leaf (fsnotify_explore.scenarios.tmpfs).
	Leaf       string `json:"leaf"`
	Filesystem string `json:"filesystem"`
	Seed       int64  `json:"seed"`
	// Step is the first step (from 1) whose observations differ.
	Step int `json:"step"`
	// Statement is the explorer's line about it, whole: both kernels,
	// the step, what each observed.
	Statement string `json:"statement"`
	// Script is the scenario as the explorer printed it: shrunk when
	// Shrunk (with the step that differs and both sides after it), else
	// cut after the step that differs.
	Script []string `json:"script"`
	Shrunk bool     `json:"shrunk"`
}

// Seeds is what the explorer covered on one filesystem: the seed range
// the base kernel ran (and recorded), and what the replay compared.
type Seeds struct {
	Filesystem string `json:"filesystem"`
	// First and Last bound the seeds run on the base kernel (Last <
	// First: none); Ran counts the scenarios run there, NotRun those of
	// the range left out, each with its reason in NotRunWhy.
	First     int64    `json:"first"`
	Last      int64    `json:"last"`
	Ran       int      `json:"ran"`
	NotRunWhy []string `json:"not_run,omitempty"`
	// Replayed is how many recorded scenarios the patched kernel
	// compared, Differ how many of those differ (-1: no replay line).
	Replayed int `json:"replayed"`
	Differ   int `json:"differ"`
}

// differenceHead matches the explorer's line for one differing scenario:
// "seed 17 (tmpfs): A (recorded) and B (here) differ at step 5 of 7 (...)"
// (older builds: "seed 17: A (recorded) and B (here) differ at step 5:"),
// possibly after the leaf's own "scenarios.tmpfs (tmpfs): ".
var differenceHead = regexp.MustCompile(`(?:^|: )seed (\d+)(?: \((\w+)\))?: .* \(recorded\) and .* \(here\) differ at step (\d+)`)

// Differences parses a replay leaf's diagnostics into its differences:
// each starts at a differenceHead line and takes the indented lines after
// it; the script is the one under "shrunk to ..." when there is one, else
// the scenario's lines ("g0 = ...", "1. ...").
func Differences(path string, n *tap.Node) []Difference {
	fs := path[strings.LastIndex(path, ".")+1:]
	var out []Difference
	var cur *Difference
	inShrunk := false
	for _, d := range n.Diagnostics {
		if m := differenceHead.FindStringSubmatch(d); m != nil && !indented(d) {
			seed, _ := strconv.ParseInt(m[1], 10, 64)
			step, _ := strconv.Atoi(m[3])
			out = append(out, Difference{Leaf: path, Filesystem: fs, Seed: seed, Step: step, Statement: runner.TrimLeafName(strings.TrimSpace(d), n.Name)})
			cur, inShrunk = &out[len(out)-1], false
			continue
		}
		if cur == nil {
			continue
		}
		if !indented(d) {
			cur = nil
			continue
		}
		t := strings.TrimSpace(d)
		switch {
		case strings.HasPrefix(t, "shrunk to "):
			cur.Script, cur.Shrunk, inShrunk = []string{t}, true, true
		case inShrunk:
			cur.Script = append(cur.Script, strings.TrimPrefix(d, "  "))
		case scriptLine.MatchString(t):
			cur.Script = append(cur.Script, strings.TrimPrefix(d, "  "))
		case strings.HasPrefix(t, "("):
			// "(not shrunk: ...)": why the script is the cut one.
			cur.Script = append(cur.Script, strings.TrimPrefix(d, "  "))
		}
	}
	return out
}

// scriptLine matches a scenario's lines as Scenario.Script prints them.
var scriptLine = regexp.MustCompile(`^(g\d+ = |\d+\. )`)

func indented(d string) bool { return d != "" && (d[0] == ' ' || d[0] == '\t') }

var (
	// seedsNote is the explorer's "seeds covered: tmpfs 1..363 of
	// 1..1000 (time cap 25s)" (or "none of ..."); older builds said only
	// "-duration D reached: seeds A..B not run" (durationCut).
	seedsNote   = regexp.MustCompile(`^seeds covered: (\S+) (?:none|(\d+)\.\.(\d+)) of (\d+)\.\.(-?\d+)(?: \((.*)\))?$`)
	ranNote     = regexp.MustCompile(`^(\d+) scenarios \(\d+ steps\) in `)
	durationCut = regexp.MustCompile(`^-duration \S+ reached: seeds (\d+)\.\.(\d+) not run`)
	notRunNote  = regexp.MustCompile(`^(\d+) scenarios not run: (.*)`)
	againstNote = regexp.MustCompile(`^against .*: (\d+) scenarios, (\d+) differ`)
)

// SeedsOf reads the seeds one filesystem's explorer leaf covered from the
// explorer's notes: the base run's "seeds covered: FS A..B of C..D (WHY
// IT STOPPED)" (older builds: "-duration D reached: seeds A..B not run"),
// "N scenarios (M steps) in ..." and "K scenarios not run: WHY",
// and the replay's "against FILE (K): N scenarios, D differ". first and n
// are the seed range asked for (-seed, -n).
func SeedsOf(path string, base, replay *tap.Node, first int64, n int) Seeds {
	s := Seeds{Filesystem: path[strings.LastIndex(path, ".")+1:], First: first, Last: first + int64(n) - 1, Differ: -1}
	if base != nil {
		for _, d := range append([]string{base.Reason}, base.Diagnostics...) {
			d = strings.TrimSpace(d)
			if m := ranNote.FindStringSubmatch(d); m != nil {
				s.Ran, _ = strconv.Atoi(m[1])
			}
			if m := seedsNote.FindStringSubmatch(d); m != nil {
				s.First, _ = strconv.ParseInt(m[4], 10, 64)
				if m[2] == "" { // none
					s.Last = s.First - 1
				} else {
					s.First, _ = strconv.ParseInt(m[2], 10, 64)
					s.Last, _ = strconv.ParseInt(m[3], 10, 64)
				}
				if m[6] != "" {
					s.NotRunWhy = append(s.NotRunWhy, fmt.Sprintf("of %s..%s: %s", m[4], m[5], m[6]))
				}
			}
			if m := durationCut.FindStringSubmatch(d); m != nil {
				a, _ := strconv.ParseInt(m[1], 10, 64)
				s.Last = a - 1
				s.NotRunWhy = append(s.NotRunWhy, d)
			}
			if m := notRunNote.FindStringSubmatch(d); m != nil {
				s.NotRunWhy = append(s.NotRunWhy, d)
			}
		}
	}
	if replay != nil {
		for _, d := range append([]string{replay.Reason}, replay.Diagnostics...) {
			if m := againstNote.FindStringSubmatch(strings.TrimSpace(d)); m != nil {
				s.Replayed, _ = strconv.Atoi(m[1])
				s.Differ, _ = strconv.Atoi(m[2])
			}
		}
	}
	return s
}

// String is the coverage in one line: "tmpfs: seeds 1..3000 run on the
// base (2990 scenarios; 10 scenarios not run: ...), 2990 replayed, 0 differ".
func (s Seeds) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ", s.Filesystem)
	if s.Last < s.First {
		b.WriteString("no seed run on the base")
		if len(s.NotRunWhy) > 0 {
			b.WriteString(" (" + strings.Join(s.NotRunWhy, "; ") + ")")
		}
	} else {
		fmt.Fprintf(&b, "seeds %d..%d run on the base (%d scenarios", s.First, s.Last, s.Ran)
		for _, w := range s.NotRunWhy {
			b.WriteString("; " + w)
		}
		b.WriteString(")")
	}
	if s.Differ >= 0 {
		fmt.Fprintf(&b, ", %d replayed on the patched kernel, %d differ", s.Replayed, s.Differ)
	} else {
		b.WriteString(", no replay on the patched kernel")
	}
	return b.String()
}
