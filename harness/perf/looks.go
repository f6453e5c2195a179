package perf

import "math"

// MaxLooks is the most times an experiment looks at its interval before it must
// stop. The overall error rate alpha = 1 - confidence is split evenly over these
// looks (Bonferroni): each look uses the confidence 1 - alpha/MaxLooks, so the
// probability that any look of an experiment takes a wrong decision is at most
// alpha whatever the data, and however early the experiment stops (the union
// bound holds for any subset of the looks).
const MaxLooks = 12

// lookGrowth spaces the looks: look i+1 comes after lookGrowth times the samples of
// look i (24, 36, 54, 81, ... 2076 blocks in the quick profile).
const lookGrowth = 1.5

// Looks is the fixed schedule of a sequential test with Bonferroni alpha spending:
// at most MaxLooks looks, at sample counts growing by lookGrowth from the first,
// each at the per-look confidence PerLook. When the time budget runs out between
// two scheduled looks, the final look is taken at once and replaces the next
// scheduled one, so an experiment never looks more than MaxLooks times.
type Looks struct {
	// Overall is the confidence that no look of the experiment decides wrongly.
	Overall float64
	next    int
	taken   int
}

// NewLooks returns the schedule whose first look is at first samples.
func NewLooks(first int, overall float64) *Looks {
	return &Looks{Overall: overall, next: max(first, 1)}
}

// PerLook is the confidence of each look's interval: 1 - (1-Overall)/MaxLooks.
func (l *Looks) PerLook() float64 { return 1 - (1-l.Overall)/MaxLooks }

// Due reports whether a look is to be taken with n samples; out says the budget is
// spent (the look is then taken whatever n). It counts the look.
func (l *Looks) Due(n int, out bool) bool {
	if n < l.next && !out {
		return false
	}
	l.taken++
	l.next = max(l.next+1, int(math.Ceil(float64(l.next)*lookGrowth)))
	return true
}

// Last reports whether the look just counted by Due must be the final one: the
// schedule is used up.
func (l *Looks) Last() bool { return l.taken >= MaxLooks }

// Taken is the number of looks counted so far.
func (l *Looks) Taken() int { return l.taken }
