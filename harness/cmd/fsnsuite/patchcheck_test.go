package main

import (
	"strings"
	"testing"

	"github.com/fsnsuite/fsnsuite/harness/patchcheck"
)

// report.html states the seeds covered per filesystem and every explorer
// difference with its script, after the changed leaves and before the
// figures and plots.
func TestReportWithExplorer(t *testing.T) {
	page := "<html><body><h1>x</h1><p id=\"verdict\">v</p><h2>Perf figures, before and after</h2><svg></svg></body></html>"
	ex := &patchcheck.Explore{Scenarios: 1000,
		Seeds: []patchcheck.Seeds{{Filesystem: "tmpfs", First: 1, Last: 184, Ran: 184, Replayed: 184, Differ: 2}},
		Differences: []patchcheck.Difference{
			{Seed: 1, Statement: "seed 1 (tmpfs): a (recorded) and b (here) differ at step 5 of 7 (x): recorded result: EINVAL; here result: ok", Script: []string{"g0 = fid", "1. actor write <g>"}},
			{Seed: 3, Statement: "seed 3 (tmpfs): ...", Script: []string{"shrunk to 1 steps, 1 groups:"}},
		}}
	got := withExplorer(page, ex)
	for _, want := range []string{"Explorer: 2 differences", "<li>tmpfs: seeds 1..184 run on the base (184 scenarios), 184 replayed on the patched kernel, 2 differ</li>",
		"difference 1 of 2: seed 1 (tmpfs)", "1. actor write &lt;g&gt;", "difference 2 of 2: seed 3"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
	if e, f := strings.Index(got, "Explorer:"), strings.Index(got, "<h2>Perf figures"); e < strings.Index(got, "verdict") || e > f {
		t.Errorf("explorer section at %d, want between the verdict and the figures at %d", e, f)
	}
}
