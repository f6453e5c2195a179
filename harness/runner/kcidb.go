package runner

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/fsnsuite/fsnsuite/harness/envfault"
	"github.com/fsnsuite/fsnsuite/harness/setup"
	"github.com/fsnsuite/fsnsuite/tap"
)

// KCIDB schema version written (kernelci/kcidb-io, schema v5.3).
const (
	KCIDBMajor = 5
	KCIDBMinor = 3
)

// kcidbLogMax is the schema's maxLength of a test's log_excerpt.
const kcidbLogMax = 16384

// KCIDBOptions name the submitting CI system and what was tested.
type KCIDBOptions struct {
	// Origin is the CI system's KCIDB origin, [a-z0-9_]+ (default "fsnsuite").
	Origin string
	// BuildID is the KCIDB id of the kernel build tested, "origin:..."
	// (default ORIGIN:KERNEL_RELEASE).
	BuildID string
	// RunID makes test ids unique per run (default: the run's start time).
	RunID string
}

type kcidbDoc struct {
	Version kcidbVersion `json:"version"`
	Tests   []kcidbTest  `json:"tests"`
}

type kcidbVersion struct {
	Major int `json:"major"`
	Minor int `json:"minor"`
}

type kcidbTest struct {
	ID          string         `json:"id"`
	BuildID     string         `json:"build_id"`
	Origin      string         `json:"origin"`
	Path        string         `json:"path"`
	Status      string         `json:"status"`
	Comment     string         `json:"comment,omitempty"`
	LogExcerpt  string         `json:"log_excerpt,omitempty"`
	StartTime   string         `json:"start_time,omitempty"`
	Duration    *float64       `json:"duration,omitempty"`
	Number      *kcidbNumber   `json:"number,omitempty"`
	Environment *kcidbEnv      `json:"environment,omitempty"`
	Misc        map[string]any `json:"misc,omitempty"`
}

type kcidbNumber struct {
	Value float64 `json:"value"`
	Unit  string  `json:"unit,omitempty"`
}

type kcidbEnv struct {
	Comment string         `json:"comment,omitempty"`
	Misc    map[string]any `json:"misc,omitempty"`
}

var kcidbOrigin = regexp.MustCompile(`^[a-z0-9_]+$`)

// kcidbStatus maps a leaf's TAP status to KCIDB's: a case that did not
// complete (timeout, error, never reported) or that the harness could not
// set up (a harness/setup failure: setup.Prefix) is ERROR, its code's state
// unknown. A case an environment fault stopped (harness/envfault) is never
// FAIL: SKIP as its TAP line says, or ERROR where -strict counted that skip
// as a failure (the case did not run).
func kcidbStatus(n *tap.Node) string {
	switch n.Status {
	case tap.StatusFail:
		if setupFailed(n) || strictEnvFault(n) {
			return "ERROR"
		}
		return "FAIL"
	case tap.StatusSkip:
		return "SKIP"
	case tap.StatusTimeout, tap.StatusError, tap.StatusMissing:
		return "ERROR"
	}
	return "PASS"
}

// strictEnvFault reports whether a failed case is an environment fault's
// skip that -strict counted as a failure.
func strictEnvFault(n *tap.Node) bool {
	for _, d := range n.Diagnostics {
		if envfault.IsStrictDiag(d) {
			return true
		}
	}
	return false
}

// setupFailed reports whether a failed case says it could not be set up.
func setupFailed(n *tap.Node) bool {
	for _, d := range n.Diagnostics {
		if strings.HasPrefix(d, setup.Prefix) {
			return true
		}
	}
	return false
}

// WriteKCIDB writes r as KCIDB I/O JSON: one test per leaf (path
// SUITE.BINARY.CASE[.SUBTEST], the dotted path KCIDB keys history on) with
// its status, its share of its binary's time, the kernel release and arch as
// environment, the skip reason or failure diagnostics, and one more test per
// measurement a leaf reported, carrying it as the test's number (status DONE
// unless its case failed or broke).
func WriteKCIDB(w io.Writer, r *Results, o KCIDBOptions) error {
	if o.Origin == "" {
		o.Origin = "fsnsuite"
	}
	if !kcidbOrigin.MatchString(o.Origin) {
		return fmt.Errorf("kcidb origin %q: want [a-z0-9_]+", o.Origin)
	}
	if o.BuildID == "" {
		o.BuildID = o.Origin + ":" + orUnknown(r.Info.Kernel)
	}
	if !strings.HasPrefix(o.BuildID, o.Origin+":") {
		return fmt.Errorf("kcidb build id %q: want %s:...", o.BuildID, o.Origin)
	}
	if o.RunID == "" {
		o.RunID = r.Info.Start.UTC().Format("20060102T150405Z")
	}
	suite := r.Info.Suite
	if suite == "" {
		suite = "fsnsuite"
	}
	env := &kcidbEnv{
		Comment: fmt.Sprintf("kernel %s on %s", orUnknown(r.Info.Kernel), orUnknown(r.Info.Arch)),
		Misc:    map[string]any{"kernel_release": r.Info.Kernel, "arch": r.Info.Arch},
	}
	start := ""
	if !r.Info.Start.IsZero() {
		start = r.Info.Start.UTC().Format(time.RFC3339)
	}
	doc := kcidbDoc{Version: kcidbVersion{KCIDBMajor, KCIDBMinor}, Tests: []kcidbTest{}}
	leafCount := map[*tap.Node]int{}
	for _, l := range Leaves(r.Root) {
		leafCount[l.Binary]++
	}
	for _, l := range Leaves(r.Root) {
		path := tap.Node{Name: suite}
		t := kcidbTest{
			ID: o.Origin + ":" + o.RunID + "." + path.Key() + "." + l.Path, BuildID: o.BuildID, Origin: o.Origin,
			Path: path.Key() + "." + l.Path, Status: kcidbStatus(l.Node), StartTime: start, Environment: env,
		}
		if l.Node == l.Binary && len(l.Binary.Children) > 0 {
			t.Status = "ERROR" // the binary_verdict entry
		}
		if d := l.Binary.Duration.Seconds() / float64(max(1, leafCount[l.Binary])); d > 0 {
			t.Duration = &d
		}
		if l.Node.Reason != "" {
			t.Misc = map[string]any{"reason": l.Node.Reason}
		}
		if l.Node.Status.Failed() || t.Status == "ERROR" {
			t.LogExcerpt = excerpt(strings.Join(l.Node.Diagnostics, "\n"))
		}
		leaf := len(doc.Tests)
		doc.Tests = append(doc.Tests, t)
		// A figure with a non-finite number (NaN, ±Inf: JSON has no
		// such value) is left out; the leaf says which and why, and the
		// rest of the run is exported as usual.
		if dropped := l.Node.NonFinite(); len(dropped) > 0 {
			misc := map[string]any{}
			for k, v := range t.Misc {
				misc[k] = v
			}
			for i := range dropped {
				dropped[i] += " (figure left out)"
			}
			misc["dropped_figures"] = dropped
			doc.Tests[leaf].Misc = misc
		}
		for _, m := range l.Node.Measurements() {
			mt := t
			mt.ID, mt.Path = t.ID+"."+m.Name, t.Path+"."+m.Name
			mt.Number = &kcidbNumber{Value: m.Value, Unit: m.Unit}
			// The figure is this test's main output: DONE (the schema's
			// status for a test that produced a measurement and judged
			// nothing), also when the case's gate was undecided (SKIP,
			// which the schema bars from carrying a number); a failed
			// or broken case's figure keeps its FAIL or ERROR.
			if mt.Status == "PASS" || mt.Status == "SKIP" {
				mt.Status = "DONE"
			}
			mt.LogExcerpt = ""
			switch {
			case math.IsInf(m.Lo, 0) || math.IsInf(m.Hi, 0):
				// JSON has no infinity: the perf engine's undecided
				// interval is said in words.
				mt.Misc = map[string]any{"interval": "unbounded"}
			case m.Lo != 0 || m.Hi != 0:
				mt.Misc = map[string]any{"interval": []float64{m.Lo, m.Hi}}
			}
			doc.Tests = append(doc.Tests, mt)
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("writing kcidb json: %w", err)
	}
	return nil
}

// excerpt keeps the end of s within the schema's limit (the end of a log is
// where the failure is).
func excerpt(s string) string {
	s = strings.ReplaceAll(s, "\x00", "")
	if len(s) <= kcidbLogMax {
		return s
	}
	return s[len(s)-kcidbLogMax:]
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
