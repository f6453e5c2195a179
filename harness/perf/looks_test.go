package perf

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestLooksSchedule(t *testing.T) {
	l := NewLooks(24, 0.99)
	var at []int
	for n := 1; n <= 100000 && !l.Last(); n++ {
		if l.Due(n, false) {
			at = append(at, n)
		}
	}
	want := []int{24, 36, 54, 81, 122, 183, 275, 413, 620, 930, 1395, 2093}
	if !slices.Equal(at, want) {
		t.Errorf("looks at %v, want %v", at, want)
	}
	if got := l.PerLook(); got < 0.99916 || got > 0.99917 {
		t.Errorf("per-look confidence %v, want 1-0.01/12", got)
	}
	// The budget running out forces a look at once, and it counts.
	l = NewLooks(24, 0.99)
	if !l.Due(5, true) || l.Taken() != 1 {
		t.Errorf("budget out: no look")
	}
}

// TestSequentialFalseDecisions measures the A/A false-flag rate of the sequential
// rule on synthetic paired ratios (no difference, 2% noise, heavy-tailed outliers):
// looked at on the Looks schedule, each look at PerLook, stopping at the first
// decision as the engine does. Bonferroni bounds the rate by alpha over all looks;
// the old rule (a 99% interval at every look) is measured beside it.
func TestSequentialFalseDecisions(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	const runs, alpha = 300, 0.05
	rng := rand.New(rand.NewPCG(1, 2))
	flag := func(perLook func(*Looks) float64) int {
		flagged := 0
		for r := 0; r < runs; r++ {
			l := NewLooks(24, 1-alpha)
			var xs []float64
			for n := 1; ; n++ {
				x := 1 + 0.02*rng.NormFloat64()
				if rng.IntN(20) == 0 {
					x += 0.2 * rng.ExpFloat64() // a preempted block
				}
				xs = append(xs, x)
				if !l.Due(n, false) {
					continue
				}
				iv := MedianCI(xs, perLook(l))
				if iv.Lo > 1 || iv.Hi < 1 {
					flagged++
					break
				}
				if iv.Lo >= 1-Equivalence && iv.Hi <= 1+Equivalence || l.Last() {
					break
				}
			}
		}
		return flagged
	}
	bonf := flag((*Looks).PerLook)
	naive := flag(func(*Looks) float64 { return 1 - alpha })
	t.Logf("A/A false flags over %d runs: %d with alpha %.2f split over the looks, %d with %.2f at every look", runs, bonf, alpha, naive, 1-alpha)
	// Binomial(300, 0.05): mean 15, sd 3.8; more than 27 would be 3 sd above the bound.
	if bonf > 27 {
		t.Errorf("%d of %d A/A runs flagged, want <= alpha (%.0f) within noise", bonf, runs, alpha*runs)
	}
}
