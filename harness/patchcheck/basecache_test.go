package patchcheck

import "testing"

// A cost run is cached only when its figures are counts (review of issue 35's
// base cache: a time from another run is not side by side).
func TestCountedRun(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"-perf", "-f", "rt"}, false},
		{[]string{"-vm-icount", "-f", "rt"}, true},
		{[]string{"-vm-sharing", "/x/plugin.so", "-f", "rt"}, true},
		{[]string{"--vm-sharing=/x/plugin.so"}, true},
		{[]string{"-no-perf"}, false},
	} {
		if got := countedRun(tc.args); got != tc.want {
			t.Errorf("countedRun(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}
