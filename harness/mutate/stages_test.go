package mutate

import (
	"regexp"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/fsnsuite/fsnsuite/harness/runner"
	"github.com/fsnsuite/fsnsuite/tap"
)

func results(times map[string]time.Duration) *runner.Results {
	root := &tap.Node{}
	for _, name := range []string{"a_api", "b_basic", "c_explore", "d_ignore", "e_limits"} {
		if d, ok := times[name]; ok {
			root.Children = append(root.Children, &tap.Node{Name: name, Duration: d})
		}
	}
	return &runner.Results{Root: root}
}

// The first stage takes the quickest binaries up to the share, never the
// slowest one; the two stages hold every binary once.
func TestPlanStages(t *testing.T) {
	base := results(map[string]time.Duration{
		"a_api": 10 * time.Second, "b_basic": 5 * time.Second, "c_explore": 60 * time.Second,
		"d_ignore": 20 * time.Second, "e_limits": 5 * time.Second,
	})
	st := PlanStages(base, 0.35)
	assert.Assert(t, is.Len(st, 2))
	// 5+5+10 = 20 of 100 fits 35; +20 = 40 does not.
	assert.DeepEqual(t, st[0].Binaries, []string{"a_api", "b_basic", "e_limits"})
	assert.DeepEqual(t, st[1].Binaries, []string{"c_explore", "d_ignore"})
	assert.Equal(t, st[0].Share, 0.2)

	re := regexp.MustCompile(st[0].RunFlag())
	assert.Assert(t, re.MatchString("a_api") && re.MatchString("e_limits"))
	assert.Assert(t, !re.MatchString("c_explore") && !re.MatchString("xa_api"))

	// A share no binary fits still gives the quickest one its own stage;
	// one binary, or no times, is not staged.
	st = PlanStages(base, 0)
	assert.DeepEqual(t, st[0].Binaries, []string{"b_basic"})
	assert.Assert(t, is.Len(PlanStages(results(map[string]time.Duration{"a_api": time.Second}), 0.35), 0))
	assert.Assert(t, is.Len(PlanStages(results(map[string]time.Duration{"a_api": 0, "b_basic": 0}), 0.35), 0))
	// A share of everything still leaves the slowest for stage two.
	st = PlanStages(base, 1)
	assert.DeepEqual(t, st[1].Binaries, []string{"c_explore"})
}

func TestSelectsBinaries(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"-run", "^inotify_api$"}, true},
		{[]string{"-run=inotify"}, true},
		{[]string{"--f", "runtest/fsnsuite"}, true},
		{[]string{"-case", "init", "-v"}, false},
		{[]string{"-case", "run"}, false},
	} {
		assert.Equal(t, selectsBinaries(c.args), c.want, "%q", c.args)
	}
}

func TestNarrow(t *testing.T) {
	stages := []Stage{{Binaries: []string{"fanotify_api", "inotify_api"}, Share: 0.3}, {Binaries: []string{"fanotify_ignore", "fsnotify_explore"}, Share: 0.7}}
	order := []string{"fanotify_api", "fanotify_ignore", "fsnotify_explore", "inotify_api"}
	// The line ran in fsnotify_explore only: it and every later binary.
	got := Narrow(stages, []string{"fsnotify_explore"}, order)
	assert.DeepEqual(t, got, []Stage{{Binaries: []string{"inotify_api"}, Share: 0.3}, {Binaries: []string{"fsnotify_explore"}, Share: 0.7}})
	// In the first binary: everything.
	assert.DeepEqual(t, Narrow(stages, []string{"fanotify_api"}, order), stages)
	assert.DeepEqual(t, Narrow(stages, []string{"other"}, order), stages)
}
