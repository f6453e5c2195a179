package vm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The perf binaries left out of a TCG guest are named to the guest runner
// (LeftOutEnv in run.conf, which /init sources), so that a runtest line
// naming one is a skip saying why; with IncludePerf nothing is left out and
// nothing is named.
func TestLeftOutNamedToGuest(t *testing.T) {
	const guest = `echo "FSNSUITE-VM init 6.1.0-fake 1" >&4
echo "FSNSUITE-VM start" >&4
echo "1..0 # SKIP fake" >&4
echo "FSNSUITE-VM exit 4" >&4
echo "FSNSUITE-VM done" >&4
`
	for _, tc := range []struct {
		name        string
		includePerf bool
		want        string // the run.conf line, "" for none
	}{
		{"tcg", false, "export '" + LeftOutEnv + "=perf_x'\n"},
		{"tcg_include_perf", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			code, err, _, _ := fakeRun(t, guest, Config{WorkDir: work, IncludePerf: tc.includePerf})
			if err != nil || code != 4 {
				t.Fatalf("got %d, %v; want 4, nil", code, err)
			}
			conf, err := os.ReadFile(filepath.Join(work, "root", "etc", "fsnsuite", "run.conf"))
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			for _, l := range strings.SplitAfter(string(conf), "\n") {
				if strings.Contains(l, LeftOutEnv) {
					got += l
				}
			}
			if got != tc.want {
				t.Errorf("run.conf names %q, want %q:\n%s", got, tc.want, conf)
			}
			_, err = os.Stat(filepath.Join(work, "root", GuestBinDir, "perf_x"))
			if inGuest := err == nil; inGuest != tc.includePerf {
				t.Errorf("perf_x in the guest: %v, want %v", inGuest, tc.includePerf)
			}
		})
	}
}

// The guest is told where its results land on the host (HostResultsEnv in
// run.conf), so that its summary suggests commands that work there.
func TestHostResultsNamedToGuest(t *testing.T) {
	const guest = `echo "FSNSUITE-VM init 6.1.0-fake 1" >&4
echo "FSNSUITE-VM start" >&4
echo "1..0 # SKIP fake" >&4
echo "FSNSUITE-VM exit 4" >&4
echo "FSNSUITE-VM done" >&4
`
	work := t.TempDir()
	res := filepath.Join(t.TempDir(), "vm-results")
	if _, err, _, _ := fakeRun(t, guest, Config{WorkDir: work, ResultsDir: res}); err != nil {
		t.Fatal(err)
	}
	conf, err := os.ReadFile(filepath.Join(work, "root", "etc", "fsnsuite", "run.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "export '" + HostResultsEnv + "=" + res + "'\n"; !strings.Contains(string(conf), want) {
		t.Errorf("run.conf does not say %q:\n%s", want, conf)
	}
}
