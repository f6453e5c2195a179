package perf

import (
	"errors"
	"math"
	"sort"
)

// Interval is a point estimate with a confidence interval around it.
type Interval struct {
	Center float64 `json:"center"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	// Confidence is the actual coverage of [Lo, Hi] (at least the one asked for).
	Confidence float64 `json:"confidence"`
	N          int     `json:"n"`
}

// Finite reports whether both bounds are finite (enough samples were available).
func (iv Interval) Finite() bool {
	return !math.IsInf(iv.Lo, 0) && !math.IsInf(iv.Hi, 0) && !math.IsNaN(iv.Lo) && !math.IsNaN(iv.Hi)
}

// HalfWidth returns the larger distance from the center to a bound, relative to the
// center (0.004 means ±0.4%).
func (iv Interval) HalfWidth() float64 {
	if iv.Center == 0 || !iv.Finite() {
		return math.Inf(1)
	}
	return math.Max(iv.Hi-iv.Center, iv.Center-iv.Lo) / math.Abs(iv.Center)
}

// Median returns the median of xs (the mean of the two middle values for an even
// count). xs is not modified. It returns NaN for an empty slice.
func Median(xs []float64) float64 {
	return Quantile(xs, 0.5)
}

// Quantile returns the q-quantile of xs (0 <= q <= 1) with linear interpolation
// between order statistics (the "type 7" estimator of R and NumPy). xs is not
// modified. It returns NaN for an empty slice.
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := sortedCopy(xs)
	return quantileSorted(s, q)
}

func quantileSorted(s []float64, q float64) float64 {
	if len(s) == 1 {
		return s[0]
	}
	h := q * float64(len(s)-1)
	lo := math.Floor(h)
	i := int(lo)
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[i] + (h-lo)*(s[i+1]-s[i])
}

func sortedCopy(xs []float64) []float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s
}

// MedianCI returns the sample median of xs and a distribution-free confidence interval
// for the population median built from two order statistics, the same construction
// benchstat uses: if B ~ Binomial(n, 1/2) counts the samples below the true median,
// [x(k), x(n+1-k)] covers it with probability 1 - 2·P(B <= k-1). The largest k that
// keeps the coverage at or above confidence is chosen. It assumes only independent
// samples from a continuous distribution (no symmetry, no normality), and a few
// outliers (a preempted round) move neither the center nor the bounds by much.
// With too few samples the bounds are -Inf and +Inf.
func MedianCI(xs []float64, confidence float64) Interval {
	n := len(xs)
	if n == 0 {
		return Interval{Center: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), N: 0}
	}
	s := sortedCopy(xs)
	iv := Interval{Center: quantileSorted(s, 0.5), Lo: math.Inf(-1), Hi: math.Inf(1), Confidence: 1, N: n}
	k, cover := medianOrder(n, confidence)
	if k == 0 {
		return iv
	}
	iv.Lo, iv.Hi, iv.Confidence = s[k-1], s[n-k], cover
	return iv
}

// medianOrder returns the 1-based order k of the lower bound of the median interval
// and its exact coverage, or 0 when no interval reaches the confidence.
func medianOrder(n int, confidence float64) (int, float64) {
	alpha := 1 - confidence
	// cdf = P(B <= k-1), accumulated as k grows.
	logHalfN := float64(n) * math.Log(0.5)
	lgN, _ := math.Lgamma(float64(n + 1))
	best, cover := 0, 0.0
	cdf := 0.0
	for k := 1; 2*k <= n+1; k++ {
		i := k - 1
		li, _ := math.Lgamma(float64(i + 1))
		lni, _ := math.Lgamma(float64(n - i + 1))
		cdf += math.Exp(lgN - li - lni + logHalfN)
		if 2*cdf > alpha {
			break
		}
		best, cover = k, 1-2*cdf
	}
	return best, cover
}

// RatioCI summarizes paired per-block ratios num[i]/den[i] by their median and the
// order-statistic interval of MedianCI. Pairs with a non-positive denominator are
// dropped.
func RatioCI(num, den []float64, confidence float64) Interval {
	n := min(len(num), len(den))
	r := make([]float64, 0, n)
	for i := 0; i < n; i++ {
		if den[i] > 0 {
			r = append(r, num[i]/den[i])
		}
	}
	return MedianCI(r, confidence)
}

// UTest is the result of a two-sided Mann-Whitney U test.
type UTest struct {
	U      float64 `json:"u"` // U statistic of the first sample
	Z      float64 `json:"z"`
	P      float64 `json:"p"` // two-sided p-value
	N1, N2 int
}

// ErrTooFew is returned by tests that need more samples than they were given.
var ErrTooFew = errors.New("too few samples")

// MannWhitney runs the two-sided Mann-Whitney U test of "x and y come from the same
// distribution" against "one is stochastically larger". It uses the normal
// approximation with tie and continuity corrections, accurate for the sample
// sizes this package works with (tens to thousands of rounds); with fewer than 5
// samples on either side it returns ErrTooFew.
func MannWhitney(x, y []float64) (UTest, error) {
	n1, n2 := len(x), len(y)
	res := UTest{N1: n1, N2: n2, P: 1}
	if n1 < 5 || n2 < 5 {
		return res, ErrTooFew
	}
	type obs struct {
		v     float64
		first bool
	}
	all := make([]obs, 0, n1+n2)
	for _, v := range x {
		all = append(all, obs{v, true})
	}
	for _, v := range y {
		all = append(all, obs{v, false})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	n := float64(n1 + n2)
	var r1, ties float64
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+j+1) / 2 // average of 1-based ranks i+1..j
		t := float64(j - i)
		ties += t*t*t - t
		for k := i; k < j; k++ {
			if all[k].first {
				r1 += rank
			}
		}
		i = j
	}
	f1, f2 := float64(n1), float64(n2)
	res.U = r1 - f1*(f1+1)/2
	mean := f1 * f2 / 2
	variance := f1 * f2 / 12 * ((n + 1) - ties/(n*(n-1)))
	if variance <= 0 {
		return res, nil // every value equal: no evidence of a difference
	}
	d := res.U - mean
	switch {
	case d > 0.5:
		d -= 0.5
	case d < -0.5:
		d += 0.5
	default:
		d = 0
	}
	res.Z = d / math.Sqrt(variance)
	res.P = math.Min(1, math.Erfc(math.Abs(res.Z)/math.Sqrt2))
	return res, nil
}

// ChangeCI returns how much larger the typical value of after is than that of
// before, as the ratio of their medians, with an interval that combines the two
// samples' MedianCI intervals: [after.Lo/before.Hi, after.Hi/before.Lo]. Each is
// taken at confidence 1-(1-confidence)/2, so the pair covers both true medians with
// probability at least confidence (Bonferroni) and the interval then covers their
// ratio. Distribution-free and, like the medians, insensitive to a few outlying
// blocks. Needs positive values.
func ChangeCI(before, after []float64, confidence float64) Interval {
	c := 1 - (1-confidence)/2
	b, a := MedianCI(before, c), MedianCI(after, c)
	iv := Interval{Center: a.Center / b.Center, Lo: math.Inf(-1), Hi: math.Inf(1), Confidence: confidence, N: a.N + b.N}
	if a.Finite() && b.Finite() && b.Lo > 0 {
		iv.Lo, iv.Hi = a.Lo/b.Hi, a.Hi/b.Lo
	}
	return iv
}

// NormalQuantile returns z such that P(Z <= z) = p for a standard normal Z
// (0 < p < 1), by bisection on math.Erfc: slow but exact to float precision, and
// called only a few times per experiment.
func NormalQuantile(p float64) float64 {
	if p <= 0 {
		return math.Inf(-1)
	}
	if p >= 1 {
		return math.Inf(1)
	}
	lo, hi := -40.0, 40.0
	for i := 0; i < 200; i++ {
		mid := (lo + hi) / 2
		if 0.5*math.Erfc(-mid/math.Sqrt2) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}
