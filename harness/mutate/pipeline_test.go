package mutate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/fsnsuite/fsnsuite/harness/coverage"
)

// fakeMake stands for make: it "compiles" the source copy's fs/notify into
// one object and a bzImage that hold the source's text, so the fake suite
// can tell the mutants apart, and fails on a line that says BUILDFAIL.
// First it waits up to 1.5 s for a run of the fake suite to be in flight,
// and logs it if one is (FAKE_LOG), unless FAKE_NOWAIT is set.
const fakeMake = `#!/bin/sh
i=0
[ -n "$FAKE_NOWAIT" ] && i=150
while [ $i -lt 150 ]; do
	if [ -e "$FAKE_LOG.running" ]; then echo "build during a run" >> "$FAKE_LOG"; break; fi
	sleep 0.01; i=$((i+1))
done
while [ $# -gt 0 ]; do
	case $1 in
	-C) src=$2; shift ;;
	O=*) build=${1#O=} ;;
	esac
	shift
done
if grep -q BUILDFAIL "$src"/fs/notify/*.c; then echo "a.c:1: error: no"; exit 1; fi
mkdir -p "$build/fs/notify" "$build/arch/x86/boot"
cat "$src"/fs/notify/*.c > "$build/fs/notify/a.o"
cp "$build/fs/notify/a.o" "$build/arch/x86/boot/bzImage"
echo CONFIG_FANOTIFY=y > "$build/.config"
`

// fakeSuite stands for bin/fsnsuite -kernel K -results DIR: one leaf, which
// fails on a kernel whose source says "if (!x)", after a pause (so that
// builds overlap runs). While it runs, $FAKE_LOG.running exists: the fake
// make logs that it saw one, the fake suite that it found another.
const fakeSuite = `#!/bin/sh
while [ $# -gt 0 ]; do
	case $1 in
	-kernel) kernel=$2; shift ;;
	-results) dir=$2; shift ;;
	-vm-append) app=$2; shift ;;
	esac
	shift
done
case $app in *"oops=panic panic_on_warn=1"*) ;; *) echo "no panic options: $app" >&2; exit 3 ;; esac
if [ -e "$FAKE_LOG.running" ]; then echo "two runs at once" >> "$FAKE_LOG"; fi
touch "$FAKE_LOG.running"
sleep 0.3
mkdir -p "$dir"
st=pass; rc=0
if grep -q 'if (!x)' "$kernel"; then st=fail; rc=1; fi
echo '{"suite":"fsnsuite","start":"2026-01-01T00:00:00Z"}' > "$dir/run.json"
echo '{"version":"TAP version 13","status":"'$st'","plan":1,"children":[{"name":"b","number":1,"status":"'$st'","plan":1,"children":[{"name":"a","number":1,"status":"'$st'","plan":-1}]}]}' > "$dir/results.json"
rm -f "$FAKE_LOG.running"
exit $rc
`

// fakeWorld is a fake make and suite on PATH and a kernel tree of one
// fs/notify file: what Run needs to run without a kernel or qemu.
type fakeWorld struct {
	root, ksrc, src, build, suite, log string
	rel, orig                          string
}

// newFakeWorld puts the fake make and suiteScript (as bin/fsnsuite) first on
// PATH, points FAKE_LOG at root/fake.log, and writes orig as fs/notify/a.c
// of the source tree and of its private copy.
func newFakeWorld(t *testing.T, suiteScript, orig string) *fakeWorld {
	t.Helper()
	root := t.TempDir()
	w := &fakeWorld{root: root, ksrc: filepath.Join(root, "ksrc"), src: filepath.Join(root, "dir", "src"), build: filepath.Join(root, "dir", "build"),
		suite: filepath.Join(root, "bin", "fsnsuite"), log: filepath.Join(root, "fake.log"), rel: "fs/notify/a.c", orig: orig}
	bin := filepath.Dir(w.suite)
	assert.NilError(t, os.MkdirAll(bin, 0o755))
	assert.NilError(t, os.WriteFile(filepath.Join(bin, "make"), []byte(fakeMake), 0o755))
	assert.NilError(t, os.WriteFile(w.suite, []byte(suiteScript), 0o755))
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	t.Setenv("FAKE_LOG", w.log)
	for _, d := range []string{w.ksrc, w.src} {
		assert.NilError(t, os.MkdirAll(filepath.Join(d, "fs/notify"), 0o755))
		assert.NilError(t, os.WriteFile(filepath.Join(d, w.rel), []byte(orig), 0o644))
	}
	return w
}

// config is a Config of the world's trees, results under root/results.
func (w *fakeWorld) config() *Config {
	return &Config{KSRC: w.ksrc, Src: w.src, Build: w.build, Suite: w.suite, Results: filepath.Join(w.root, "results"), Jobs: 1, NoStages: true}
}

// TestRunOverlapped runs the whole loop with a fake make and a fake suite:
// every mutant gets its verdict, in the sample's order, though runs overlap
// the next build and mutants decided without a run (not covered, build
// failed) come between them; the source copy is unmutated at the end, and
// no bzImage copy is left behind.
func TestRunOverlapped(t *testing.T) {
	w := newFakeWorld(t, fakeSuite, body("\tif (x)", "\t\treturn -EINVAL;", "\tif (y)", "\t\treturn -ENOENT;", "\treturn 0;"))
	rel, orig, ksrc, fakeLog := w.rel, w.orig, w.ksrc, w.log
	ms := Generate(rel, orig, nil)
	sum, err := FileSum(filepath.Join(ksrc, rel))
	assert.NilError(t, err)
	// Line 7 ("return 0;") never ran: its mutants are not covered.
	lines := &coverage.LineData{Files: map[string]coverage.LineFile{rel: {SHA256: sum, Lines: map[int]coverage.LineCount{
		3: {Suite: 1}, 4: {Suite: 1}, 5: {Suite: 1}, 6: {Suite: 1}, 7: {Suite: 0},
	}}}}
	// One mutant that does not build, between the others.
	ms = append(ms[:2:2], append([]Mutant{{ID: "buildfail0", File: rel, Line: 5, Orig: "\tif (y)", New: "\tif (y) BUILDFAIL", Op: "negate", Func: "f"}}, ms[2:]...)...)

	cfg := w.config()
	cfg.Lines = lines
	var seen [][]string
	_, rs, err := Run(context.Background(), cfg, ms, func(_ *Baseline, rs []Result) error {
		var ids []string
		for _, r := range rs {
			ids = append(ids, r.ID)
		}
		seen = append(seen, ids)
		return nil
	})
	assert.NilError(t, err)
	assert.Equal(t, len(rs), len(ms))
	var covered, notCovered, killed, buildFailed int
	for i, r := range rs {
		assert.Equal(t, r.ID, ms[i].ID, "result %d is not the sample's mutant %d", i, i)
		switch {
		case r.Line == 7:
			assert.Equal(t, r.Outcome, NotCovered, r.Where())
			notCovered++
		case r.ID == "buildfail0":
			assert.Equal(t, r.Outcome, BuildFailed)
			buildFailed++
		case strings.Contains(r.New, "if (!x)"):
			assert.Equal(t, r.Outcome, Killed, r.Where())
			killed++
		default:
			assert.Equal(t, r.Outcome, Survived, "%s %s", r.Where(), r.New)
			covered++
		}
		_, err := os.Stat(filepath.Join(cfg.Results, r.ID, "bzImage"))
		assert.Assert(t, os.IsNotExist(err), "%s: the bzImage copy is left", r.ID)
	}
	assert.Assert(t, notCovered > 0 && killed == 1 && buildFailed == 1 && covered > 0, "not covered %d, killed %d, build failed %d, survived %d", notCovered, killed, buildFailed, covered)
	// The report grew one mutant at a time, each a prefix of the next.
	assert.Equal(t, len(seen), len(ms))
	for i, ids := range seen {
		assert.Equal(t, len(ids), i+1)
	}
	b, err := os.ReadFile(filepath.Join(w.src, rel))
	assert.NilError(t, err)
	assert.Equal(t, string(b), orig, "the source copy is left mutated")
	// Overlap: the fake make waits up to 1.5 s for a run to be in flight
	// (the fake suite's marker), which only an overlapped pipeline gives it;
	// and no run ever started while another was in flight.
	log, err := os.ReadFile(fakeLog)
	assert.Assert(t, err == nil || os.IsNotExist(err), "%v", err)
	assert.Assert(t, strings.Contains(string(log), "build during a run"), "no build ran while a run was in flight: %q", log)
	assert.Assert(t, !strings.Contains(string(log), "two runs at once"), "two runs were in flight at once: %q", log)
}
