package perf

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"time"
)

// Row is one line of the before/after table of a -baseline comparison.
type Row struct {
	Metric string `json:"metric"`
	// Gated rows (the experiment's gate ratio) carry a verdict; the others are
	// shown for information: absolute times vary 10-17% from one process to the next
	// on a noisy VM, so only ratios measured side by side are compared with the
	// threshold.
	Gated   bool       `json:"gated"`
	Before  []Interval `json:"before"` // one per baseline file
	After   Interval   `json:"after"`
	Change  []Interval `json:"change"`          // after/before, one per baseline (ChangeCI)
	P       []Number   `json:"p"`               // Mann-Whitney p of before against after, one per baseline
	Drift   *Interval  `json:"drift,omitempty"` // second baseline / first
	Verdict Verdict    `json:"verdict"`
	Reason  string     `json:"reason,omitempty"`
}

// Compare compares cur with the same experiment in each baseline (the first is
// "before", a second one is "before B": the table then shows the drift between
// the two) using the pre-registered regression threshold o.Threshold. For the gated
// ratio it decides:
//   - variability gate: each run's ratio interval must be within ±threshold/2, and
//     two baselines must agree within threshold/2, else undecided ("too variable");
//   - fail when the change interval (ChangeCI: ratio of medians, from the two
//     median intervals) lies wholly above +threshold against every baseline;
//   - pass when it lies wholly below +threshold against every baseline;
//   - undecided otherwise.
//
// In instruction count mode (cur.Clock) the gated rows are each condition's
// instructions per operation of the gate metric, not their ratio: counts are
// exact and do not vary from one process or boot to the next as times do, so
// the absolute change is what a patch did to each path (a ratio would hide a
// cost added to both); the threshold is o.threshold() (ICountThreshold unless
// -threshold was given). A baseline measured on the other clock (time against
// instructions) is not comparable: undecided.
func Compare(cur *Result, bases []*SavedFile, o *Options) []Row {
	var rows []Row
	conf := o.Confidence
	icount := cur.Clock == ClockICount
	for _, m := range cur.Metrics() {
		gate := m == cur.Gate.Metric && cur.Mode == "gate"
		ratioRow := Row{Metric: fmt.Sprintf("%s %s/%s %s ratio", cur.Name, cur.Cond, cur.Base, m), Gated: gate && !icount}
		absBase := Row{Metric: fmt.Sprintf("%s %s %s", cur.Name, cur.Base, m), Gated: gate && icount}
		absCond := Row{Metric: fmt.Sprintf("%s %s %s", cur.Name, cur.Cond, m), Gated: gate && icount}
		cb, cc := cur.BlockValues(m)
		cr := ratios(cc, cb)
		ratioRow.After, absBase.After, absCond.After = MedianCI(cr, conf), MedianCI(cb, conf), MedianCI(cc, conf)
		var beforeRatios, beforeBase, beforeCond [][]float64
		missing := ""
		for _, f := range bases {
			old := f.Find(cur.Name, cur.Mode)
			if old != nil && old.Clock != cur.Clock {
				missing = fmt.Sprintf("the baseline was measured in %s, this run in %s: not comparable", clockName(old.Clock), clockName(cur.Clock))
			} else if old == nil || old.Base != cur.Base || old.Cond != cur.Cond {
				missing = "not in every baseline (other profile, mode or conditions)"
			}
			if missing != "" {
				nan := Interval{Center: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
				for _, r := range []*Row{&ratioRow, &absBase, &absCond} {
					r.Before = append(r.Before, nan)
					r.Change = append(r.Change, nan)
					r.P = append(r.P, Number(math.NaN()))
				}
				beforeRatios, beforeBase, beforeCond = append(beforeRatios, nil), append(beforeBase, nil), append(beforeCond, nil)
				continue
			}
			ob, oc := old.BlockValues(m)
			or := ratios(oc, ob)
			beforeRatios, beforeBase, beforeCond = append(beforeRatios, or), append(beforeBase, ob), append(beforeCond, oc)
			for _, p := range []struct {
				r           *Row
				before, now []float64
			}{{&ratioRow, or, cr}, {&absBase, ob, cb}, {&absCond, oc, cc}} {
				p.r.Before = append(p.r.Before, MedianCI(p.before, conf))
				p.r.Change = append(p.r.Change, ChangeCI(p.before, p.now, conf))
				pv := math.NaN()
				if u, err := MannWhitney(p.before, p.now); err == nil {
					pv = u.P
				}
				p.r.P = append(p.r.P, Number(pv))
			}
		}
		for _, d := range []struct {
			r      *Row
			before [][]float64
		}{{&ratioRow, beforeRatios}, {&absBase, beforeBase}, {&absCond, beforeCond}} {
			if len(bases) >= 2 && d.before[0] != nil && d.before[1] != nil && (d.r.Gated || d.r == &ratioRow) {
				dr := ChangeCI(d.before[0], d.before[1], conf)
				d.r.Drift = &dr
			}
			d.r.Verdict, d.r.Reason = Info, ""
			if d.r.Gated {
				d.r.Verdict, d.r.Reason = decideChange(*d.r, missing, o.threshold())
			}
		}
		rows = append(rows, ratioRow, absBase, absCond)
	}
	return rows
}

func ratios(num, den []float64) []float64 {
	out := make([]float64, 0, len(num))
	for i := range num {
		if i < len(den) && den[i] > 0 {
			out = append(out, num[i]/den[i])
		}
	}
	return out
}

func clockName(c string) string {
	if c == ClockICount {
		return "instructions (instruction count mode)"
	}
	return "time"
}

func decideChange(r Row, missing string, th float64) (Verdict, string) {
	if missing != "" {
		return Undecided, fmt.Sprintf("%s: %s", r.Metric, missing)
	}
	var wide []string
	for i, b := range r.Before {
		if b.HalfWidth() > th/2 {
			wide = append(wide, fmt.Sprintf("baseline %d ±%.1f%%", i+1, 100*b.HalfWidth()))
		}
	}
	if r.After.HalfWidth() > th/2 {
		wide = append(wide, fmt.Sprintf("this run ±%.1f%%", 100*r.After.HalfWidth()))
	}
	if len(wide) > 0 {
		return Undecided, fmt.Sprintf("%s: variability gate: %s wider than ±%.1f%%", r.Metric, strings.Join(wide, ", "), 100*th/2)
	}
	if r.Drift != nil && math.Abs(r.Drift.Center-1) > th/2 {
		return Undecided, fmt.Sprintf("%s: baselines drift %s > %.1f%%", r.Metric, pct(r.Drift.Center), 100*th/2)
	}
	above, below := 0, 0
	for _, c := range r.Change {
		switch {
		case c.Lo > 1+th:
			above++
		case c.Hi <= 1+th:
			below++
		}
	}
	var chs []string
	for _, c := range r.Change {
		chs = append(chs, pctIv(c))
	}
	desc := fmt.Sprintf("%s change %s vs threshold +%.1f%%", r.Metric, strings.Join(chs, ", "), 100*th)
	switch {
	case above == len(r.Change):
		return Fail, "regression: " + desc
	case below == len(r.Change):
		return Pass, "no regression: " + desc
	}
	return Undecided, "undecided: " + desc
}

func pct(ratio float64) string {
	if math.IsNaN(ratio) {
		return "?"
	}
	s := fmt.Sprintf("%+.1f%%", 100*(ratio-1))
	return strings.Replace(s, "-", "−", 1)
}

func pctIv(iv Interval) string {
	if math.IsNaN(iv.Center) {
		return "?"
	}
	return fmt.Sprintf("%s [%s,%s]", pct(iv.Center), pct(iv.Lo), pct(iv.Hi))
}

// Table renders rows in the shape of the seed threads' tables: metric, before, after,
// change (and with two baselines: before A, after, before B, change vs A, change vs
// B, drift A→B).
func Table(rows []Row, names []string) []string {
	var out []string
	if len(names) >= 2 {
		out = append(out,
			"| metric | before A | after | before B | change vs A | change vs B | drift A→B | verdict |",
			"|---|---:|---:|---:|---:|---:|---:|---|")
	} else {
		out = append(out, "| metric | before | after | change | verdict |", "|---|---:|---:|---:|---|")
	}
	for _, r := range rows {
		v := r.Verdict.String()
		if len(names) >= 2 && len(r.Before) >= 2 {
			drift := ""
			if r.Drift != nil {
				drift = pct(r.Drift.Center)
			}
			out = append(out, fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s | %s |", r.Metric,
				cell(r.Before[0]), cell(r.After), cell(r.Before[1]), changeCell(r, 0), changeCell(r, 1), drift, v))
			continue
		}
		if len(r.Before) == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("| %s | %s | %s | %s | %s |", r.Metric, cell(r.Before[0]), cell(r.After), changeCell(r, 0), v))
	}
	return out
}

// changeCell renders a change with its interval and, benchstat-like, the U-test p.
func changeCell(r Row, i int) string {
	s := pctIv(r.Change[i])
	if i < len(r.P) && !math.IsNaN(float64(r.P[i])) {
		s += fmt.Sprintf(" p=%.3f", float64(r.P[i]))
	}
	return s
}

func cell(iv Interval) string {
	if math.IsNaN(iv.Center) {
		return "—"
	}
	if iv.Center < 10 {
		return fmt.Sprintf("%.4f", iv.Center)
	}
	return fmtVal(iv.Center)
}

var baselineCache struct {
	sync.Mutex
	files map[string]*SavedFile
}

func loadCached(path string) (*SavedFile, error) {
	baselineCache.Lock()
	defer baselineCache.Unlock()
	if f, ok := baselineCache.files[path]; ok {
		return f, nil
	}
	f, err := Load(path)
	if err != nil {
		return nil, err
	}
	if baselineCache.files == nil {
		baselineCache.files = map[string]*SavedFile{}
	}
	baselineCache.files[path] = f
	return f, nil
}

// compareWithFiles loads o.Baselines, compares res with them and returns the verdict
// of the gated rows and the table lines.
func compareWithFiles(res *Result, o *Options) (Verdict, string, []string, error) {
	var files []*SavedFile
	var lines []string
	for i, p := range o.Baselines {
		f, err := loadCached(p)
		if err != nil {
			return Undecided, err.Error(), nil, err
		}
		files = append(files, f)
		k := ""
		if f.Env != nil {
			k = fmt.Sprintf(" (kernel %s, saved %s)", f.Env.Kernel, f.Env.Time)
		}
		lines = append(lines, fmt.Sprintf("baseline %c: %s%s", 'A'+i, p, k))
	}
	rows := Compare(res, files, o)
	on := "the gated ratio"
	if res.Clock == ClockICount {
		on = fmt.Sprintf("each condition's %s (instruction count mode: exact counts, so a small threshold; %s)", res.Gate.Metric, icountThresholdWhy)
	}
	lines = append(lines, fmt.Sprintf("this run: kernel %s; pre-registered regression threshold +%.1f%% on %s", res.Env.Kernel, 100*o.threshold(), on))
	lines = append(lines, Table(rows, o.Baselines)...)
	v, reason := Info, ""
	for _, r := range rows {
		if !r.Gated {
			continue
		}
		if v == Info {
			v, reason = r.Verdict, r.Reason
			continue
		}
		v, reason = worse(v, reason, r.Verdict, r.Reason)
	}
	if v == Info {
		return Pass, "", lines, nil
	}
	return v, "baseline: " + reason, lines, nil
}

// icountThresholdWhy is the reason for ICountThreshold, printed with the
// comparison.
const icountThresholdWhy = "2% of a ~1800-instruction pwrite is 36 instructions: more than a flag test or a branch, " +
	"less than entering fsnotify() for a mark that does not want the event (+115 per write on 6.1)"

func deadlineOf(t TB) time.Time {
	switch d := t.(type) {
	case interface{ Deadline() time.Time }:
		return d.Deadline()
	case interface{ Deadline() (time.Time, bool) }:
		dl, _ := d.Deadline()
		return dl
	}
	return time.Time{}
}
