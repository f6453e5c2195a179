package perf

import (
	"fmt"
	"strings"
	"testing"
)

// TestPerfCPUs: FSNSUITE_PERF_CPUS replaces the process's affinity as the
// engine's CPUs (the sharing guest's measured vCPUs); a malformed list is
// refused, naming the variable.
func TestPerfCPUs(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want []int
	}{
		{"1-2", []int{1, 2}}, {"3", []int{3}}, {"1,3-4", []int{1, 3, 4}},
		{"2-1", nil}, {"1,1", nil}, {"x", nil}, {"", nil}, {"-1", nil}, {"1-", nil},
	} {
		got, err := parsePerfCPUs(tc.v)
		if tc.want == nil {
			if err == nil || !strings.Contains(err.Error(), PerfCPUsEnv) {
				t.Errorf("parsePerfCPUs(%q) = %v, %v; want an error naming %s", tc.v, got, err, PerfCPUsEnv)
			}
			continue
		}
		if err != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("parsePerfCPUs(%q) = %v, %v; want %v", tc.v, got, err, tc.want)
		}
	}
	t.Setenv(PerfCPUsEnv, "1-2")
	if got, err := AllowedCPUs(); err != nil || fmt.Sprint(got) != "[1 2]" {
		t.Errorf("AllowedCPUs with %s=1-2: %v, %v", PerfCPUsEnv, got, err)
	}
}
