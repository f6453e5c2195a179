package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/model"
)

// rulesOf returns the model rules a scenario applies (model.Coverage).
func rulesOf(s *Scenario) map[string]bool {
	cov := model.NewCoverage()
	k := model.Fixed
	k.Cov = cov
	predict(k, s)
	out := map[string]bool{}
	for _, r := range model.Rules {
		out[r] = true
	}
	for _, m := range cov.Missed() {
		delete(out, m)
	}
	return out
}

// TestRulesReached: with every group kind, the default seed range reaches
// every model rule, the latest within the first 200 seeds (a TCG guest's
// 25 s covers 184 to 363); each directed seed's scenario applies its aim's
// rule. It prints, per rule, how many of seeds 1..2000 apply it and the
// first that does.
func TestRulesReached(t *testing.T) {
	gen := Generator{Kinds: allKinds}
	const n = 2000
	count, first := map[string]int{}, map[string]int64{}
	for seed := int64(defaultSeed); seed < defaultSeed+n; seed++ {
		s := gen.Scenario(seed)
		hit := rulesOf(s)
		if s.Aim != "" && !hit[s.Aim] {
			t.Errorf("seed %d is directed at %q but does not apply it:\n%s", seed, s.Aim, s.Script())
		}
		for r := range hit {
			if count[r]++; count[r] == 1 {
				first[r] = seed
			}
		}
	}
	rs := slices.Clone(model.Rules)
	sort.SliceStable(rs, func(i, j int) bool { return count[rs[i]] < count[rs[j]] })
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "%5d  first seed %4d  %s\n", count[r], first[r], r)
		switch {
		case count[r] == 0:
			t.Errorf("rule never reached in seeds 1..%d: %s", n, r)
		case first[r] > 200:
			t.Errorf("rule first reached at seed %d (> 200): %s", first[r], r)
		}
	}
	t.Logf("scenarios of seeds 1..%d applying each rule:\n%s", n, b.String())
}

// TestDirectedKeepsDrawnSteps: a directed seed's scenario is the seed's
// undirected one with the aim's group added last and the prelude put
// first, and the drawn steps give the drawn groups exactly what they gave
// them undirected (the prelude leaves the tree as it found it and the
// drawn groups have no mark while it runs), so directing a seed takes
// nothing from what it found before.
func TestDirectedKeepsDrawnSteps(t *testing.T) {
	gen, plain := Generator{Kinds: allKinds}, Generator{Kinds: allKinds, Undirected: true}
	directed := 0
	for seed := int64(defaultSeed); seed < defaultSeed+defaultN; seed++ {
		s, u := gen.Scenario(seed), plain.Scenario(seed)
		if s.Aim == "" {
			if s.Script() != u.Script() {
				t.Fatalf("seed %d is not directed but differs from its undirected scenario", seed)
			}
			continue
		}
		directed++
		pre := len(s.Steps) - len(u.Steps)
		aimGroup := fmt.Sprintf("g%d ", len(u.Groups))
		if !slices.Equal(s.Groups[:len(u.Groups)], u.Groups) || len(s.Groups) != len(u.Groups)+1 || !slices.Equal(s.Steps[pre:], u.Steps) {
			t.Fatalf("seed %d: directed scenario is not the undirected one plus a group and a prelude:\n%s\nundirected:\n%s", seed, s.Script(), u.Script())
		}
		for _, st := range s.Steps[:pre] {
			if (st.Op == "mark" || st.Op == "markw" || st.Op == "watch" || st.Op == "rmwatch") && st.Group != len(u.Groups) {
				t.Fatalf("seed %d: prelude step %s is not the aim group's", seed, st)
			}
		}
		got, want := predict(model.Fixed, s)[pre:], predict(model.Fixed, u)
		for i := range want {
			g := slices.DeleteFunc(slices.Clone(got[i]), func(l string) bool { return strings.HasPrefix(l, aimGroup) })
			if !slices.Equal(g, want[i]) {
				t.Fatalf("seed %d step %d (%s): the drawn groups get %v directed, %v undirected\n%s", seed, pre+i+1, s.Steps[pre+i], g, want[i], s.Script())
			}
		}
	}
	if want := defaultN / aimEvery; directed != want {
		t.Errorf("%d of seeds 1..%d directed, want %d", directed, defaultN, want)
	}
}

// TestAimDeterministic: the aim and the prelude are functions of the seed
// and the kinds on offer; a kind a kernel lacks leaves the seed undirected
// or directs it with an offered kind, never with the missing one.
func TestAimDeterministic(t *testing.T) {
	gen := Generator{Kinds: allKinds}
	for seed := int64(1); seed <= 200; seed++ {
		a, b := gen.Scenario(seed), gen.Scenario(seed)
		if a.Script() != b.Script() || a.Aim != b.Aim {
			t.Fatalf("seed %d gave two scenarios:\n%s\n%s", seed, a.Script(), b.Script())
		}
	}
	few := Generator{Kinds: []string{"notif", "inotify"}}
	for seed := int64(1); seed <= 200; seed++ {
		s := few.Scenario(seed)
		for _, g := range s.Groups {
			if !slices.Contains(few.Kinds, g) {
				t.Fatalf("seed %d uses a %s group, not offered:\n%s", seed, g, s.Script())
			}
		}
		if s.Aim == model.RuleDFIDNoDir {
			t.Fatalf("seed %d aims at %s without a dfid_name group", seed, s.Aim)
		}
	}
	if out := aimsOutOfReach(few.Kinds); len(out) != 1 || out[model.RuleDFIDNoDir] == nil {
		t.Errorf("aimsOutOfReach(notif, inotify) = %v, want the DFID_NAME rule only", out)
	}
}

// TestMarkWhileOpenForWrite: the model adds no non-surviving ignore mask
// to a file the actor holds open for write (fanotify_add_inode_mark on
// 6.1, do_fanotify_mark on 7.3: inode_is_open_for_write), so the close in
// the same step is reported; a surviving one goes in and hides it.
func TestMarkWhileOpenForWrite(t *testing.T) {
	for _, tc := range []struct {
		flags uint
		want  string // the markw step's events
	}{
		{unix.FAN_MARK_IGNORED_MASK, "g0 FAN_CLOSE_WRITE|FAN_OPEN f"},
		{unix.FAN_MARK_IGNORED_MASK | unix.FAN_MARK_IGNORED_SURV_MODIFY, "g0 FAN_OPEN f"},
	} {
		s := &Scenario{Groups: []string{"notif"}, Steps: []Step{
			{Op: "mark", Flags: unix.FAN_MARK_ADD | unix.FAN_MARK_MOUNT, Mask: unix.FAN_OPEN | unix.FAN_CLOSE_WRITE},
			{Op: "markw", Flags: unix.FAN_MARK_ADD | tc.flags, Mask: unix.FAN_CLOSE_WRITE, Obj: "f"},
		}}
		cov := model.NewCoverage()
		k := model.Fixed
		k.Cov = cov
		got := predict(k, s)[1]
		if want := (Obs{"result: ok", tc.want}); !slices.Equal(got, want) {
			t.Errorf("%s: got %v, want %v", s.Steps[1], got, want)
		}
		applied := !slices.Contains(cov.Missed(), model.RuleIgnoreOpenForWrite)
		if surv := tc.flags&unix.FAN_MARK_IGNORED_SURV_MODIFY != 0; applied == surv {
			t.Errorf("%s: rule %q applied: %t", s.Steps[1], model.RuleIgnoreOpenForWrite, applied)
		}
	}
}

// TestRulesLine: the note names every rule within reach that was not
// reached, and the rules out of reach apart, with why.
func TestRulesLine(t *testing.T) {
	cov := model.NewCoverage() // nothing reached
	away := map[string]string{model.RuleDFIDNoDir: "needs a dfid_name group"}
	line := rulesLine(cov, away)
	for _, want := range []string{
		fmt.Sprintf("rules reached 0/%d; not reached: ", len(model.Rules)),
		fmt.Sprintf("%q", model.RuleIgnoreOpenForWrite),
		fmt.Sprintf("; out of reach here (1): %q (needs a dfid_name group)", model.RuleDFIDNoDir),
	} {
		if !strings.Contains(line, want) {
			t.Errorf("rules line lacks %q:\n%s", want, line)
		}
	}
	if got := len(missedWithin(cov, away)); got != len(model.Rules)-1 {
		t.Errorf("missedWithin: %d rules, want %d", got, len(model.Rules)-1)
	}
	s := (&Generator{Kinds: allKinds}).Scenario(defaultSeed)
	k := model.Fixed
	k.Cov = cov
	predict(k, s)
	if line := rulesLine(cov, nil); strings.Contains(line, "not reached: \"\"") || !strings.HasPrefix(line, "rules reached ") {
		t.Errorf("rules line after a scenario: %s", line)
	}
}

// TestSeedsCovered: the note names the seeds drawn of those asked for, and
// why it stopped short (harness/runner's summary keys on its prefix).
func TestSeedsCovered(t *testing.T) {
	for _, tc := range []struct {
		drawn int
		stop  string
		want  string
	}{
		{1000, "", "seeds covered: tmpfs 1..1000 of 1..1000"},
		{363, "time cap 25s", "seeds covered: tmpfs 1..363 of 1..1000 (time cap 25s)"},
		{57, "stopped at the mismatch of seed 57", "seeds covered: tmpfs 1..57 of 1..1000 (stopped at the mismatch of seed 57)"},
		{0, "time cap 0s", "seeds covered: tmpfs none of 1..1000 (time cap 0s)"},
	} {
		if got := seedsCovered("tmpfs", 1, tc.drawn, 1000, tc.stop); got != tc.want {
			t.Errorf("seedsCovered(%d, %q) = %q, want %q", tc.drawn, tc.stop, got, tc.want)
		}
	}
}

// TestSoakAsked: -soak is seen before the flags are parsed (it sets the
// case's deadline), in each spelling the flag package takes, and not after
// "--" or as another flag's prefix.
func TestSoakAsked(t *testing.T) {
	for args, want := range map[string]bool{
		"-soak": true, "--soak": true, "-soak=true": true, "-n 5 -soak": true,
		"": false, "-soak=false": false, "-soaked": false, "-- -soak": false, "-run soak": false,
	} {
		if got := soakAsked(strings.Fields(args)); got != want {
			t.Errorf("soakAsked(%q) = %t, want %t", args, got, want)
		}
	}
}
