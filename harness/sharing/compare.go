package sharing

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// ChangeThreshold is the pre-registered gate of a kernel change on
// remote-writes/op, in writes per operation: one more remote write every ten
// operations. Writers without a shared line give 0 per write in
// perf_parent_write's isolated guest (7.3, 2 and 4 measured vCPUs; the
// chunk's own start and end gave 0.005-0.02 before it), far below; one parent reference
// per write taken from every CPU (seed 004: dget_parent and dput, two lockref
// cmpxchg on the parent dentry) adds about (n-1)/n·2, far above.
const ChangeThreshold = 0.1

// Change is one condition's remote-writes/op on two kernels.
type Change struct {
	Suite, Case, Mode, Cond string
	Before, After           float64
	// Lo and Hi bound the difference after - before: [after.lo -
	// before.hi, after.hi - before.lo] from the two 99% median intervals
	// (at least 98% jointly).
	Lo, Hi  float64
	Verdict string // pass, fail, undecided
}

// Compare pairs the cases of two runs (same suite, case, mode) and judges
// each condition's remote-writes/op change against ChangeThreshold: fail when
// the difference interval lies wholly above it, pass when wholly below,
// undecided otherwise.
func Compare(before, after []*Case) []Change {
	type key struct{ suite, name, mode string }
	old := map[key]*Case{}
	for _, c := range before {
		old[key{c.Suite, c.Name, c.Mode}] = c
	}
	var out []Change
	for _, a := range after {
		b := old[key{a.Suite, a.Name, a.Mode}]
		if b == nil {
			continue
		}
		for t, cond := range []string{a.Base, a.Cond} {
			fb, fa := b.Figures[0], a.Figures[0]
			ib, ia := fb.Base, fa.Base
			if t == 1 {
				ib, ia = fb.Cond, fa.Cond
			}
			ch := Change{Suite: a.Suite, Case: a.Name, Mode: a.Mode, Cond: cond, Before: ib.Center, After: ia.Center,
				Lo: ia.Lo - ib.Hi, Hi: ia.Hi - ib.Lo}
			switch {
			case math.IsNaN(ch.Lo) || math.IsNaN(ch.Hi) || math.IsInf(ch.Lo, 0) || math.IsInf(ch.Hi, 0):
				ch.Verdict = "undecided"
			case ch.Lo > ChangeThreshold:
				ch.Verdict = "fail"
			case ch.Hi < ChangeThreshold:
				ch.Verdict = "pass"
			default:
				ch.Verdict = "undecided"
			}
			out = append(out, ch)
		}
	}
	return out
}

// FormatChanges writes the comparison as a table, verdict last.
func FormatChanges(w io.Writer, cs []Change) {
	fmt.Fprintf(w, "# remote-writes/op before -> after (kernel-mode writes to lines another vCPU also wrote, not by the line's main writer); gate: change <= +%g per op\n", ChangeThreshold)
	fmt.Fprintln(w, "| case | condition | before | after | change [98% interval] | verdict |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, c := range cs {
		mode := ""
		if c.Mode != "gate" {
			mode = " (" + c.Mode + ")"
		}
		fmt.Fprintf(w, "| %s%s | %s | %s | %s | %s [%s,%s] | %s |\n", c.Case, mode, c.Cond, plain(c.Before, false), plain(c.After, false),
			plain(c.After-c.Before, true), plain(c.Lo, true), plain(c.Hi, true), c.Verdict)
	}
}

// plain prints x as a plain decimal of 4 significant digits (never
// scientific notation: a difference of two equal medians came out as
// -5.551e-17), with its sign when signed; a rounding residue under 1e-9 is 0.
func plain(x float64, signed bool) string {
	if math.Abs(x) < 1e-9 {
		x = 0
	}
	digits := 0
	if a := math.Abs(x); a > 0 && a < 1000 {
		digits = 3 - int(math.Floor(math.Log10(a)))
	}
	f := "%." + strconv.Itoa(digits) + "f"
	if signed {
		f = "%+." + strconv.Itoa(digits) + "f"
	}
	out := fmt.Sprintf(f, x)
	if strings.Contains(out, ".") {
		out = strings.TrimRight(strings.TrimRight(out, "0"), ".")
	}
	return out
}
