package mutate

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// configOptions returns the CONFIG_ lines of a kernel config fragment, in
// order, comments and blank lines left out.
func configOptions(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "CONFIG_") {
			out = append(out, l)
		}
	}
	return out
}

// TestMutantsConfigMatchesCoverage: the kernel `make mutants` builds must be
// the one `make coverage` measured, gcov aside. Its per-line counts
// (lines.json, tied to each file's source by sha256) decide which mutants are
// on lines the suite never runs; an option built into one kernel and not the
// other (a filesystem, dnotify) would make those counts wrong for the other.
func TestMutantsConfigMatchesCoverage(t *testing.T) {
	gcov := slices.DeleteFunc(configOptions(t, "../../scripts/coverage/gcov.config"), func(o string) bool {
		return strings.HasPrefix(o, "CONFIG_GCOV_")
	})
	mut := configOptions(t, "../../scripts/mutants/mutants.config")
	slices.Sort(gcov)
	slices.Sort(mut)
	if !slices.Equal(gcov, mut) {
		t.Errorf("scripts/mutants/mutants.config has %v; scripts/coverage/gcov.config without gcov has %v: the two kernels must match", mut, gcov)
	}
}
