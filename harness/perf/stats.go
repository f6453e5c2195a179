package perf

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"

	"golang.org/x/perf/benchmath"
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

// intervalJSON is Interval on the wire: JSON has no infinities or NaN, so a
// bound that is not finite (too few samples) is written as null.
type intervalJSON struct {
	Center     *float64 `json:"center"`
	Lo         *float64 `json:"lo"`
	Hi         *float64 `json:"hi"`
	Confidence float64  `json:"confidence"`
	N          int      `json:"n"`
}

func finiteOrNil(x float64) *float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return nil
	}
	return &x
}

func orDefault(p *float64, def float64) float64 {
	if p == nil {
		return def
	}
	return *p
}

// MarshalJSON writes non-finite values as null.
func (iv Interval) MarshalJSON() ([]byte, error) {
	return json.Marshal(intervalJSON{finiteOrNil(iv.Center), finiteOrNil(iv.Lo), finiteOrNil(iv.Hi), iv.Confidence, iv.N})
}

// UnmarshalJSON reads null bounds back as -Inf and +Inf, a null center as NaN.
func (iv *Interval) UnmarshalJSON(b []byte) error {
	var w intervalJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*iv = Interval{Center: orDefault(w.Center, math.NaN()), Lo: orDefault(w.Lo, math.Inf(-1)), Hi: orDefault(w.Hi, math.Inf(1)), Confidence: w.Confidence, N: w.N}
	return nil
}

// Number is a float64 that JSON can always carry (encoding/json refuses NaN
// and the infinities: "json: unsupported value: +Inf"): NaN (a statistic
// that could not be computed) is written as null, +Inf and -Inf (a rate over
// a block a coarse clock timed at 0) as the strings "+Inf" and "-Inf"; null
// and the strings "NaN", "+Inf", "-Inf" are read back as such.
type Number float64

// MarshalJSON writes NaN as null and an infinity as a string.
func (n Number) MarshalJSON() ([]byte, error) {
	switch x := float64(n); {
	case math.IsNaN(x):
		return []byte("null"), nil
	case math.IsInf(x, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(x, -1):
		return []byte(`"-Inf"`), nil
	default:
		return json.Marshal(x)
	}
}

// UnmarshalJSON reads a number, null (NaN) or "NaN", "+Inf", "Inf", "-Inf".
func (n *Number) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		switch str {
		case "NaN":
			*n = Number(math.NaN())
		case "+Inf", "Inf":
			*n = Number(math.Inf(1))
		case "-Inf":
			*n = Number(math.Inf(-1))
		default:
			return fmt.Errorf("perf: %q is not a number", str)
		}
		return nil
	}
	var p *float64
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*n = Number(orDefault(p, math.NaN()))
	return nil
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
// for the population median, computed by benchstat's own statistics package
// (golang.org/x/perf/benchmath, AssumeNothing): two order statistics [x(k), x(n+1-k)]
// whose binomial coverage is at least confidence. That interval assumes independent
// samples (no symmetry, no normality), and a few outliers (a preempted round) move
// neither the center nor the bounds by much. xs is taken in the order it was measured
// (blocks in time order): where consecutive values are correlated, as under another
// job's load that comes and goes, the interval is widened to the long-run variance of
// the series (SerialFactor), never narrowed. With too few samples the bounds are -Inf
// and +Inf. xs is not modified.
func MedianCI(xs []float64, confidence float64) Interval {
	n := len(xs)
	if n == 0 {
		return Interval{Center: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), N: 0}
	}
	sum := benchmath.AssumeNothing.Summary(newSample(xs), confidence)
	iv := Interval{Center: sum.Center, Lo: sum.Lo, Hi: sum.Hi, Confidence: sum.Confidence, N: n}
	if tau := SerialFactor(xs); tau > 1 && n >= minSerialN && iv.Finite() {
		// The median's interval in ranks: n/2 ± z·sqrt(n)/2 for independent
		// values (the normal approximation of the binomial the exact interval
		// uses); dependence multiplies the variance of the count of values
		// below the median by tau, so the half-width in ranks by sqrt(tau).
		z := math.Sqrt2 * math.Erfinv(confidence)
		h := z * math.Sqrt(float64(n)*tau) / 2
		lo, hi := int(math.Floor(float64(n)/2-h)), int(math.Ceil(float64(n)/2+h))+1
		s := sortedCopy(xs)
		if lo < 1 {
			iv.Lo = math.Inf(-1)
		} else {
			iv.Lo = min(iv.Lo, s[lo-1])
		}
		if hi > n {
			iv.Hi = math.Inf(1)
		} else {
			iv.Hi = max(iv.Hi, s[hi-1])
		}
	}
	return iv
}

// minSerialN is the fewest values whose serial correlation MedianCI estimates.
const minSerialN = 12

// SerialFactor estimates how much the serial correlation of xs (in measured order)
// inflates the variance of the count of values above the median, the quantity the
// median's interval rests on: the long-run variance factor 1 + 2·Σ w_k·ρ_k of the
// series sign(x_i - median), with its lag-k autocorrelations ρ_k up to the lag
// K = ⌊n^(1/3)⌋ weighted by Bartlett's kernel w_k = 1 - k/(K+1) (the Newey-West
// estimator, which is never negative). 1 for independent values on average; at
// least 1 (dependence is only ever allowed to widen an interval); 1 for fewer than
// minSerialN values, or fewer than minSerialN of them off the median (ties).
func SerialFactor(xs []float64) float64 {
	n := len(xs)
	if n < minSerialN {
		return 1
	}
	m := Median(xs)
	sg := make([]float64, n)
	var ss float64
	for i, x := range xs {
		switch {
		case x > m:
			sg[i] = 1
		case x < m:
			sg[i] = -1
		}
		ss += sg[i] * sg[i]
	}
	// Values tied with the median (instruction counts: nearly every block
	// the same) leave too few signs to estimate a correlation from, and
	// their interval is the tied value already.
	if ss < minSerialN {
		return 1
	}
	// Centred: with ties at the median the signs do not average to 0,
	// and an uncentred series would read that offset as correlation.
	var mean float64
	for _, v := range sg {
		mean += v / float64(n)
	}
	ss = 0
	for i := range sg {
		sg[i] -= mean
		ss += sg[i] * sg[i]
	}
	k := int(math.Cbrt(float64(n)))
	tau := 1.0
	for lag := 1; lag <= k; lag++ {
		var c float64
		for i := 0; i+lag < n; i++ {
			c += sg[i] * sg[i+lag]
		}
		tau += 2 * (1 - float64(lag)/float64(k+1)) * c / ss
	}
	return max(tau, 1)
}

// newSample copies xs into a benchmath.Sample (which sorts its values in place).
func newSample(xs []float64) *benchmath.Sample {
	return benchmath.NewSample(append([]float64(nil), xs...), &benchmath.DefaultThresholds)
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
	P      float64 `json:"p"` // two-sided p-value
	N1, N2 int
}

// ErrTooFew is returned by tests that need more samples than they were given.
var ErrTooFew = errors.New("too few samples")

// MannWhitney runs the two-sided Mann-Whitney U test of "x and y come from the same
// distribution" against "their locations differ", as benchstat does
// (benchmath.AssumeNothing.Compare: exact for small tie-free samples, normal
// approximation with tie correction otherwise). With fewer than 5 samples on either
// side it returns ErrTooFew.
func MannWhitney(x, y []float64) (UTest, error) {
	res := UTest{N1: len(x), N2: len(y), P: 1}
	if len(x) < 5 || len(y) < 5 {
		return res, ErrTooFew
	}
	res.P = benchmath.AssumeNothing.Compare(newSample(x), newSample(y)).P
	if math.IsNaN(res.P) {
		// Every value tied (the rank variance is zero): no evidence of a
		// difference.
		res.P = 1
	}
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

// runRecordJSON is RunRecord on the wire: its values as Numbers.
type runRecordJSON struct {
	Block  int               `json:"block"`
	Pos    int               `json:"pos"`
	Cond   string            `json:"cond"`
	N      int               `json:"n"`
	Ns     int64             `json:"ns"`
	Values map[string]Number `json:"values"`
}

// MarshalJSON writes the values as Numbers (an infinite ops/s is "+Inf").
func (r RunRecord) MarshalJSON() ([]byte, error) {
	w := runRecordJSON{Block: r.Block, Pos: r.Pos, Cond: r.Cond, N: r.N, Ns: r.Ns, Values: make(map[string]Number, len(r.Values))}
	for k, v := range r.Values {
		w.Values[k] = Number(v)
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (r *RunRecord) UnmarshalJSON(b []byte) error {
	var w runRecordJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = RunRecord{Block: w.Block, Pos: w.Pos, Cond: w.Cond, N: w.N, Ns: w.Ns, Values: make(map[string]float64, len(w.Values))}
	for k, v := range w.Values {
		r.Values[k] = float64(v)
	}
	return nil
}

// resultJSON is Result on the wire: its float fields as Numbers (the fields
// named here shadow the embedded ones of the same JSON name).
type resultJSON struct {
	*resultAlias
	Inject         Number   `json:"inject,omitempty"`
	SpinNs         Number   `json:"spin_ns_per_iter,omitempty"`
	Seconds        Number   `json:"seconds"`
	Confidence     Number   `json:"confidence"`
	LookConfidence Number   `json:"look_confidence"`
	Precision      Number   `json:"precision,omitempty"`
	ClockNs        Number   `json:"clock_ns,omitempty"`
	InjectWant     Number   `json:"inject_predicted,omitempty"`
	Gate           gateJSON `json:"gate"`
}

type resultAlias Result

type gateJSON struct {
	Metric    string `json:"metric"`
	Max       Number `json:"max"`
	Why       string `json:"why,omitempty"`
	DecidedBy string `json:"decided_by,omitempty"`
}

// MarshalJSON writes a non-finite float field as a Number does.
func (r Result) MarshalJSON() ([]byte, error) {
	return json.Marshal(resultJSON{
		resultAlias: (*resultAlias)(&r), Inject: Number(r.Inject), SpinNs: Number(r.SpinNs), Seconds: Number(r.Seconds),
		Confidence: Number(r.Confidence), LookConfidence: Number(r.LookConfidence), Precision: Number(r.Precision),
		ClockNs: Number(r.ClockNs), InjectWant: Number(r.InjectWant),
		Gate: gateJSON{Metric: r.Gate.Metric, Max: Number(r.Gate.Max), Why: r.Gate.Why, DecidedBy: r.Gate.DecidedBy},
	})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (r *Result) UnmarshalJSON(b []byte) error {
	w := resultJSON{resultAlias: (*resultAlias)(r)}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	r.Inject, r.SpinNs, r.Seconds = float64(w.Inject), float64(w.SpinNs), float64(w.Seconds)
	r.Confidence, r.LookConfidence, r.Precision = float64(w.Confidence), float64(w.LookConfidence), float64(w.Precision)
	r.ClockNs, r.InjectWant = float64(w.ClockNs), float64(w.InjectWant)
	r.Gate = Gate{Metric: w.Gate.Metric, Max: float64(w.Gate.Max), Why: w.Gate.Why, DecidedBy: w.Gate.DecidedBy}
	return nil
}
