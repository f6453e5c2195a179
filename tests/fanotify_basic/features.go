package main

import (
	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/feature"
)

// featuresCase lists every declared probe's answer on this kernel, one note
// line each, so a CI log says what was and was not tested here. It fails when
// an answer is neither "supported" nor a skip with a reason: a feature missing
// where its release or this kernel's config says it must be present
// (harness/feature's Kind rules), a probe whose call succeeded with a wrong
// result (feature.Misbehaved), or a probe that stayed inconclusive. A
// behaviour feature is listed with the rule this kernel follows and what
// decided it (its probe, or the release where the probe could not tell).
var featuresCase = harness.Case{
	Name:        "features",
	Doc:         "every feature probe's answer on this kernel (harness/feature: release features from their merge release, kconfig features from their option)",
	Filesystems: []string{}, // once, unsuffixed: probes do not depend on the test filesystem
	Run: func(t *harness.T) {
		for _, f := range feature.All() {
			if f.Kind == feature.Behaviour {
				newer, basis := f.Rule()
				rule := "the older rule"
				if newer {
					rule = "the newer rule"
				}
				t.Notef("%s (%s): %s: %s", f.Name, f.Describe(), rule, basis)
				continue
			}
			err := f.Check()
			switch {
			case err == nil:
				t.Notef("%s (%s): supported", f.Name, f.Describe())
			case feature.IsSkip(err):
				t.Notef("%s (%s): absent: %v", f.Name, f.Describe(), err)
			default:
				t.Errorf("%s (%s): %v", f.Name, f.Describe(), err)
			}
		}
	},
}
