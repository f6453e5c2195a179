package perf

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/fixture"
	"github.com/fsnsuite/fsnsuite/harness/reexec"
)

// Profile sizes an experiment. The quick profile keeps each binary well under a
// minute on a 2-core VM; full uses the sizes of the seed threads (10^7 one-byte
// writes per condition, 10^5 open/close per mode and more).
type Profile struct {
	Name string `json:"name"`
	// OpsScale multiplies an experiment's OpsPerRun (operations in one timed run).
	OpsScale int `json:"ops_scale"`
	// WarmupBlocks are measured and thrown away before the first counted block.
	WarmupBlocks int `json:"warmup_blocks"`
	// MinBlocks is the first point at which a verdict may be taken.
	MinBlocks int `json:"min_blocks"`
	// MaxBlocks stops the experiment even if the budget is not used up.
	MaxBlocks int `json:"max_blocks"`
	// Budget is the wall-time limit of one experiment (one gate).
	Budget time.Duration `json:"budget_ns"`
}

// Profiles known to -profile.
var Profiles = map[string]Profile{
	"quick": {Name: "quick", OpsScale: 1, WarmupBlocks: 3, MinBlocks: 24, MaxBlocks: 4000, Budget: 8 * time.Second},
	"full":  {Name: "full", OpsScale: 5, WarmupBlocks: 10, MinBlocks: 500, MaxBlocks: 20000, Budget: 240 * time.Second},
}

// Options are the engine's command-line settings, shared by every experiment of a
// binary.
type Options struct {
	Profile   string
	Save      string
	Baselines []string
	// AA makes both conditions of every experiment the base condition: the engine must
	// then find no difference.
	AA bool
	// Inject is the fraction of extra work (0.02 for "-inject 2%") added to the
	// measured condition, which is replaced by the base condition plus that work: the
	// engine must then find the slowdown.
	Inject float64
	// Budget overrides the profile's per-experiment time budget when non-zero.
	Budget time.Duration
	// Threshold is the pre-registered regression threshold of -baseline comparisons.
	Threshold float64
	// Confidence is the confidence level of every interval.
	Confidence float64
	// Strict turns undecided verdicts into failures even if the harness's own -strict
	// is not set.
	Strict bool
	// Clock is ClockICount in instruction count mode (from PerfClockEnv), ""
	// when the engine's clock measures time.
	Clock string

	thresholdSet bool // -threshold given: it also holds in instruction count mode

	saveDir int // O_PATH descriptor of Save's directory, 0 if none
}

// Flags holds the engine's command-line options. A perf binary carries them by its
// Suite (harness.Suite{Flags: perf.Flags.Register, ...}), so it accepts -profile,
// -save, -baseline, -aa, -inject, -budget, -threshold and -confidence.
var Flags = NewOptions()

// NewOptions returns the defaults: quick profile, 5% regression threshold, 99%
// confidence.
func NewOptions() *Options {
	o := &Options{Profile: "quick", Threshold: 0.05, Confidence: 0.99}
	if ICount() {
		o.Clock = ClockICount
	}
	return o
}

// ICountThreshold is the default -baseline threshold in instruction count
// mode, on the change of each condition's instructions per operation. Counts
// are exact there (an A/A run gives ratio 1 to the instruction), so the
// threshold need not absorb noise as the 5% on time does: 2% of a 1-byte
// pwrite on tmpfs (1856 instructions on Debian's 6.1, 1778 on 7.3) is about
// 36 instructions, more than a patch adds with a flag test or a branch, less
// than entering fsnotify() for a mark that does not want the event (a
// DELETE_SELF mark's write cost +115 instructions on 6.1, +0.1 on 7.3).
const ICountThreshold = 0.02

// clock returns the engine's clock mode: o.Clock.
func (o *Options) clock() string { return o.Clock }

// threshold is the -baseline threshold in force: -threshold when given, else
// ICountThreshold in instruction count mode and Threshold (5%) in time.
func (o *Options) threshold() float64 {
	if o.Clock == ClockICount && !o.thresholdSet {
		return ICountThreshold
	}
	return o.Threshold
}

// Register adds the engine's flags to fs.
func (o *Options) Register(fs *flag.FlagSet) {
	fs.Func("profile", "perf profile: quick (CI, default) or full (the seed threads' sizes)", func(s string) error {
		if _, ok := Profiles[s]; !ok {
			return errors.New("want quick or full") // the flag package names the value
		}
		o.Profile = s
		return nil
	})
	fs.Func("save", "write every perf sample and the environment to `NAME`.json (for -baseline) and Go benchmark lines to NAME.txt (for benchstat); a .json or .txt ending of NAME is dropped first", o.setSave)
	fs.Func("baseline", "compare with results saved by -save on another kernel (`FILE`, its .json; repeat: before-A, before-B gives a drift check)", func(s string) error {
		if strings.HasSuffix(s, ".txt") {
			// The benchstat companion holds no samples: use its JSON twin.
			s, _ = SavePaths(s)
		}
		// Loaded now: the test binary later mounts its workspace over /tmp, where
		// the file may be.
		if _, err := loadCached(s); err != nil {
			return err
		}
		o.Baselines = append(o.Baselines, s)
		return nil
	})
	fs.BoolVar(&o.AA, "aa", o.AA, "self-check: measure the base condition against itself; a flagged difference fails")
	fs.Func("inject", "self-check: add `PCT` extra work (e.g. 2%) to a copy of the base condition; a missed slowdown fails", func(s string) error {
		v, err := ParsePercent(s)
		if err != nil {
			return err
		}
		if v <= 0 || v >= 1 {
			return fmt.Errorf("inject %q: want a percentage between 0 and 100", s)
		}
		o.Inject = v
		return nil
	})
	fs.DurationVar(&o.Budget, "budget", o.Budget, "wall-time budget of one perf experiment (default: the profile's)")
	fs.Func("threshold", "pre-registered regression threshold for -baseline (default 5% on time ratios; 2% on instructions per op in instruction count mode)", func(s string) error {
		v, err := ParsePercent(s)
		if err != nil {
			return err
		}
		o.Threshold, o.thresholdSet = v, true
		return nil
	})
	fs.Func("confidence", "confidence level of intervals (default 99%)", func(s string) error {
		v, err := ParsePercent(s)
		if err != nil {
			return err
		}
		if v <= 0.5 || v >= 1 {
			return fmt.Errorf("confidence %q: want between 50%% and 100%%", s)
		}
		o.Confidence = v
		return nil
	})
}

// setSave records the -save path and opens its directory now, so that the file can
// still be written after the test binary has mounted its workspace tmpfs over /tmp
// (or over the directory holding the file).
func (o *Options) setSave(path string) error {
	jsonPath, benchPath := SavePaths(path)
	// Said once, by the binary's own process (its case process, a re-exec,
	// parses the same flags).
	if role, _ := reexec.Current(); role == "" {
		fmt.Fprintf(os.Stderr, "perf: -save %s: JSON results to %s (for -baseline), Go benchmark lines to %s (for benchstat)\n", path, jsonPath, benchPath)
	}
	dfd, abs, err := fixture.OutputDir(jsonPath)
	if err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	if o.saveDir > 0 {
		unix.Close(o.saveDir)
	}
	o.Save, o.saveDir = abs, dfd
	return nil
}

// ParsePercent parses "2%", "2" (percent) or "0.02%"; a value without a percent sign
// is read as percent too, so "-inject 2" means 2%.
func ParsePercent(s string) (float64, error) {
	t := strings.TrimSuffix(strings.TrimSpace(s), "%")
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return 0, fmt.Errorf("parse percentage %q: %w", s, err)
	}
	return v / 100, nil
}

// FullProfile reports whether -profile full was given. It is meaningful once the
// harness has parsed the command line: call it from harness.Suite.CaseFunc.
func FullProfile() bool { return Flags.profile().Name == "full" }

// OpsScale is the selected profile's OpsScale (after the harness has parsed the
// command line), for an experiment that sizes its fixtures to its runs.
func OpsScale() int { return Flags.profile().OpsScale }

// profile returns the selected profile with the budget override applied.
func (o *Options) profile() Profile {
	p, ok := Profiles[o.Profile]
	if !ok {
		p = Profiles["quick"]
	}
	if o.Budget > 0 {
		p.Budget = o.Budget
	}
	return p
}

// Mode names the kind of run: "gate", "aa" or "inject".
func (o *Options) Mode() string {
	switch {
	case o.AA:
		return "aa"
	case o.Inject > 0:
		return "inject"
	}
	return "gate"
}

// CaseTimeout is the per-case deadline perf suites give the harness
// (harness.Suite.Timeout). Each case stops itself when its budget is spent, well
// before this in the quick profile; the deadline only has to let the full profile
// finish and to catch a case that hangs.
const CaseTimeout = 10 * time.Minute
