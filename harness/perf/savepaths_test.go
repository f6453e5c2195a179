package perf

import "testing"

// -save X.txt must not write JSON to X.txt and benchmarks to X.txt.txt (issue 15 item 6).
func TestSavePaths(t *testing.T) {
	for in, want := range map[string][2]string{
		"old.txt":  {"old.json", "old.txt"},
		"old.json": {"old.json", "old.txt"},
		"old":      {"old.json", "old.txt"},
		"a.b/old":  {"a.b/old.json", "a.b/old.txt"},
	} {
		j, b := SavePaths(in)
		if j != want[0] || b != want[1] || BenchPath(j) != b {
			t.Errorf("SavePaths(%q) = %q, %q (BenchPath %q); want %q", in, j, b, BenchPath(j), want)
		}
	}
}
