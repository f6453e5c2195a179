package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/fsnsuite/fsnsuite/harness/internal/execfile"
)

// binDir makes a bin/ of fake test binaries: name -> script body.
func binDir(t *testing.T, bins map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range bins {
		assert.NilError(t, execfile.Write(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body), 0o755))
	}
	return dir
}

const (
	pass    = "echo 'TAP version 13'; echo 1..1; echo 'ok 1 a'\n"
	fail    = "echo 'TAP version 13'; echo 1..1; echo 'not ok 1 a'; exit 1\n"
	skipAll = "echo 'TAP version 13'; echo '1..0 # SKIP requires root'; exit 4\n"
	echoArg = "echo 'TAP version 13'; echo 1..1; echo \"# args: $*\"; echo 'ok 1 a'\n"
)

func TestExitStatus(t *testing.T) {
	tests := []struct {
		name string
		bins map[string]string
		args []string
		want int
	}{
		{"all_pass", map[string]string{"a": pass, "b": pass}, nil, 0},
		{"one_fail", map[string]string{"a": pass, "b": fail}, nil, 1},
		{"all_skip", map[string]string{"a": skipAll, "b": skipAll}, nil, 4},
		{"all_skip_ltp", map[string]string{"a": skipAll}, []string{"-exit", "ltp"}, 32},
		{"strict_skip", map[string]string{"a": skipAll}, []string{"-strict"}, 1},
		{"timeout_ltp", map[string]string{"a": "echo 1..1; sleep 60\n"}, []string{"-exit", "ltp", "-timeout", "300ms"}, 2},
		{"filtered_to_pass", map[string]string{"good": pass, "bad": fail}, []string{"-run", "^good$"}, 0},
		{"nothing_selected", map[string]string{"a": pass}, []string{"-run", "nomatch"}, 2},
		{"bad_flag", map[string]string{"a": pass}, []string{"-format", "xml"}, 2},
		{"negative_case_timeout", map[string]string{"a": pass}, []string{"-case-timeout", "-1s"}, 2},
		{"negative_timeout", map[string]string{"a": pass}, []string{"-timeout", "-5s"}, 2},
		{"zero_jobs", map[string]string{"a": pass}, []string{"-j", "0"}, 2},
		{"unknown_flag", map[string]string{"a": pass}, []string{"-bogus"}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := binDir(t, tc.bins)
			var out, errb bytes.Buffer
			args := append([]string{"-dir", dir, "-results", filepath.Join(t.TempDir(), "res")}, tc.args...)
			got := run(args, &out, &errb)
			assert.Equal(t, got, tc.want, "stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
		})
	}
}

// failWriter fails every write, as /dev/full or a pipe whose reader went
// away (fsnsuite | head) does.
type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }

// An unwritable stdout or results directory is exit 2, and the closing line
// says exactly which is incomplete (issue 22 item 2: "the results in DIR are
// incomplete" was printed for a complete results directory when only stdout
// failed).
func TestIncompleteOutputSaysWhich(t *testing.T) {
	dir := binDir(t, map[string]string{"a": pass})
	res := filepath.Join(t.TempDir(), "res")
	var errb bytes.Buffer
	got := run([]string{"-dir", dir, "-results", res}, failWriter{unix.EPIPE}, &errb)
	assert.Equal(t, got, 2, "stderr:\n%s", errb.String())
	assert.Check(t, is.Contains(errb.String(), "fsnsuite: the TAP stream on stdout is incomplete: writing the merged stream to stdout: broken pipe; the results in "+res+" are complete\n"))
	assert.Check(t, !strings.Contains(errb.String(), "are incomplete"), "stderr:\n%s", errb.String())
	b, err := os.ReadFile(filepath.Join(res, "results.tap"))
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(b), "ok 1 a\n"))
}

func TestPassThrough(t *testing.T) {
	dir := binDir(t, map[string]string{"inotify_basic": echoArg, "perf_watch_add": echoArg})
	tests := []struct {
		name string
		args []string
		want []string // lines of -list output
	}{
		{"defaults", nil, []string{
			"inotify_basic\t" + dir + "/inotify_basic",
			"perf_watch_add\t" + dir + "/perf_watch_add",
		}},
		{"flags", []string{"-case", "rename", "-strict", "-format", "ktap", "-exit", "ltp", "-v", "-case-timeout", "10s", "-profile", "full"}, []string{
			"inotify_basic\t" + dir + "/inotify_basic -format ktap -strict -exit ltp -run rename -timeout 10s -v",
			"perf_watch_add\t" + dir + "/perf_watch_add -format ktap -strict -exit ltp -run rename -timeout 10s -v -profile full",
		}},
		{"no_perf", []string{"-no-perf"}, []string{"inotify_basic\t" + dir + "/inotify_basic"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(append([]string{"-dir", dir, "-list"}, tc.args...), &out, &errb)
			assert.Equal(t, code, 0, errb.String())
			assert.DeepEqual(t, strings.Split(strings.TrimSpace(out.String()), "\n"), tc.want)
		})
	}

	// The flags really reach the binary.
	var out, errb bytes.Buffer
	res := filepath.Join(t.TempDir(), "res")
	code := run([]string{"-dir", dir, "-results", res, "-run", "inotify", "-case", "x"}, &out, &errb)
	assert.Equal(t, code, 0, errb.String())
	assert.Assert(t, is.Contains(out.String(), "    # args: -run x\n"))
	assert.Assert(t, is.Contains(errb.String(), "fsnsuite: 1 binary: 1 passed, 0 failed, 0 skipped"))
	for _, f := range []string{"results.tap", "results.json", "junit.xml", "summary.txt", "logs/inotify_basic.stdout"} {
		_, err := os.Stat(filepath.Join(res, f))
		assert.Check(t, err)
	}
}

func TestRuntestFile(t *testing.T) {
	dir := binDir(t, map[string]string{"inotify_basic": echoArg})
	rt := filepath.Join(t.TempDir(), "fsnsuite")
	assert.NilError(t, os.WriteFile(rt, []byte("# comment\ninotify_basic inotify_basic -exit ltp\nagain inotify_basic -v\n"), 0o644))
	var out, errb bytes.Buffer
	code := run([]string{"-dir", dir, "-f", rt, "-results", filepath.Join(t.TempDir(), "res")}, &out, &errb)
	assert.Equal(t, code, 0, errb.String())
	assert.Assert(t, is.Contains(out.String(), "# args: -exit ltp\n    ok 1 a\nok 1 inotify_basic\n"))
	assert.Assert(t, is.Contains(out.String(), "# args: -v\n    ok 1 a\nok 2 again\n"))
}

func TestVMArgs(t *testing.T) {
	var got vmRequest
	old := runVM
	t.Cleanup(func() { runVM = old })
	runVM = func(_ context.Context, r vmRequest) (int, error) { got = r; return 4, nil }
	rt := filepath.Join(t.TempDir(), "rt")
	assert.NilError(t, os.WriteFile(rt, []byte("a a\n"), 0o644))
	var out, errb bytes.Buffer
	code := run([]string{"-kernel", "/boot/vmlinuz", "-vm-mem", "1G", "-vm-cpus", "4", "-dir", "/opt/bin",
		"-results", "/tmp/r", "-f", rt, "-strict", "-run", "fanotify", "-timeout", "1m0s",
		"-vm-file", rt + "=/opt/in/rec.json"}, &out, &errb)
	assert.Equal(t, code, 4)
	assert.Equal(t, got.Kernel, "/boot/vmlinuz")
	assert.Equal(t, got.MemMB, 1024)
	assert.Equal(t, got.CPUs, 4)
	assert.Equal(t, got.BinDir, "/opt/bin")
	assert.Equal(t, got.ResultsDir, "/tmp/r")
	assert.DeepEqual(t, got.Files, map[string]string{"/opt/fsnsuite/runtest": rt, "/opt/in/rec.json": rt})
	assert.DeepEqual(t, got.Args, []string{"-run=fanotify", "-strict=true", "-timeout=1m0s", "-f=/opt/fsnsuite/runtest"})
}

func TestVMFileFlag(t *testing.T) {
	old := runVM
	t.Cleanup(func() { runVM = old })
	runVM = func(_ context.Context, r vmRequest) (int, error) { return 0, nil }
	f := filepath.Join(t.TempDir(), "f")
	assert.NilError(t, os.WriteFile(f, nil, 0o644))
	for _, bad := range []string{f, f + "=rel/path", f + "=/", "/nonexistent=/x", filepath.Dir(f) + "=/x"} {
		var out, errb bytes.Buffer
		code := run([]string{"-kernel", "/boot/vmlinuz", "-vm-file", bad}, &out, &errb)
		assert.Equal(t, code, 2, "-vm-file %s: %s", bad, errb.String())
	}
	var out, errb bytes.Buffer
	code := run([]string{"-vm-file", f + "=/x", "-dir", t.TempDir()}, &out, &errb)
	assert.Equal(t, code, 2)
	assert.Assert(t, is.Contains(errb.String(), "-vm-file is for VM mode"))
}

func TestParseMiB(t *testing.T) {
	tests := []struct {
		in   string
		want int
		err  bool
	}{
		{"2048", 2048, false},
		{"512M", 512, false},
		{"2G", 2048, false},
		{"2g", 2048, false},
		{"lots", 0, true},
		{"-1", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseMiB(tc.in)
			if tc.err {
				assert.Assert(t, err != nil)
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, got, tc.want)
		})
	}
}

// A bad command line gets one line and a pointer to -h (issue 14 item 5).
func TestUsageErrorsAreOneLine(t *testing.T) {
	for _, args := range [][]string{{"-bogus"}, {"-timeout", "soon"}, {"-case-timeout", "-1s"}, {"extra"}} {
		var out, errb bytes.Buffer
		assert.Equal(t, run(args, &out, &errb), 2)
		assert.Equal(t, strings.Count(errb.String(), "\n"), 1, "stderr: %q", errb.String())
		if args[0] == "-bogus" || args[0] == "extra" || args[1] == "soon" {
			assert.Check(t, is.Contains(errb.String(), "; see -h"))
		}
	}
}

// What a bad selection or flag value says: once, naming the real cause
// (issue 23), and under -exit ltp followed by the Summary: block kirk reads.
func TestUsageWording(t *testing.T) {
	dir := binDir(t, map[string]string{"inotify_basic": pass, "perf_open_path": pass})
	empty := filepath.Join(t.TempDir(), "empty")
	assert.NilError(t, os.WriteFile(empty, []byte("# only a comment\n\n"), 0o644))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-f", empty}, "fsnsuite: " + empty + " lists no test binary (the file is empty, or has only blank lines and comments)\n"},
		{[]string{"-run", "nomatch"}, "fsnsuite: no test binary in " + dir + " matches -run nomatch (2 there)\n"},
		{[]string{"-run", "perf", "-no-perf"}, "fsnsuite: every test binary in " + dir + " that was selected is a perf_* one, and -no-perf leaves them out\n"},
		{[]string{"-profile", "bogus"}, "fsnsuite: unknown -profile \"bogus\" (want quick or full)\n"},
		{[]string{"-vm-file", "bad"}, "fsnsuite: invalid value \"bad\" for flag -vm-file: want HOST=GUEST with an absolute guest path; see -h\n"},
	} {
		var out, errb bytes.Buffer
		assert.Equal(t, run(append([]string{"-dir", dir}, tc.args...), &out, &errb), 2)
		assert.Check(t, is.Equal(errb.String(), tc.want))
		assert.Check(t, is.Equal(out.String(), ""))
	}
	var out, errb bytes.Buffer
	assert.Equal(t, run([]string{"-dir", dir, "-run", "nomatch", "-exit", "ltp"}, &out, &errb), 2)
	assert.Check(t, is.Equal(out.String(), "\nSummary:\npassed   0\nfailed   0\nbroken   1\nskipped  0\nwarnings 0\n"))
	assert.Check(t, is.Equal(strings.Count(errb.String(), "\n"), 1), errb.String())
}

// A results directory that cannot be used is exit 2 (usage/environment,
// LTP's TBROK), not 1, under either convention (issue 14 item 1).
func TestUnusableResultsDir(t *testing.T) {
	dir := binDir(t, map[string]string{"a": pass})
	file := filepath.Join(t.TempDir(), "file")
	assert.NilError(t, os.WriteFile(file, nil, 0o644))
	for _, conv := range []string{"kselftest", "ltp"} {
		var out, errb bytes.Buffer
		got := run([]string{"-dir", dir, "-exit", conv, "-results", filepath.Join(file, "res")}, &out, &errb)
		assert.Equal(t, got, 2, "stderr: %s", errb.String())
		assert.Check(t, is.Contains(errb.String(), "not a directory"))
	}
	if os.Geteuid() != 0 {
		return
	}
	ro := filepath.Join(t.TempDir(), "ro")
	assert.NilError(t, os.Mkdir(ro, 0o755))
	assert.NilError(t, unix.Mount("tmpfs", ro, "tmpfs", unix.MS_RDONLY, "mode=0755"))
	t.Cleanup(func() { _ = unix.Unmount(ro, unix.MNT_DETACH) })
	var out, errb bytes.Buffer
	assert.Equal(t, run([]string{"-dir", dir, "-exit", "ltp", "-results", ro}, &out, &errb), 2)
	assert.Check(t, is.Contains(errb.String(), "read-only file system"))
}

// Under -exit ltp the runner's stdout ends with LTP's summary counts (what
// kirk parses), so a partly skipped run shows its skips.
func TestLTPSummaryCounts(t *testing.T) {
	dir := binDir(t, map[string]string{"a": pass, "b": skipAll,
		"c": "echo 1..3; echo 'ok 1 x'; echo 'ok 2 y # SKIP no ext4'; echo 'not ok 3 z'; printf '\\nSummary:\\npassed   1\\nfailed   1\\nbroken   0\\nskipped  1\\nwarnings 0\\n'; exit 1\n"})
	var out, errb bytes.Buffer
	assert.Equal(t, run([]string{"-dir", dir, "-exit", "ltp", "-results", t.TempDir()}, &out, &errb), 1)
	assert.Check(t, is.Contains(out.String(), "\nSummary:\npassed   2\nfailed   1\nbroken   0\nskipped  2\nwarnings 0\n"), out.String())
	assert.Equal(t, strings.Count(out.String(), "Summary:"), 1, "the binaries' own summaries stay out of the merged stream")
	out.Reset()
	run([]string{"-dir", dir, "-results", t.TempDir()}, &out, &errb)
	assert.Check(t, !strings.Contains(out.String(), "Summary:"))
}

// fsnsuite report names each run by its -label, in the order of the
// directories, else by its kernel and directory; more labels than
// directories is a usage error.
func TestReportLabels(t *testing.T) {
	dir := binDir(t, map[string]string{"a": pass})
	resA, resB := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	for _, res := range []string{resA, resB} {
		var out, errb bytes.Buffer
		assert.Equal(t, run([]string{"-dir", dir, "-results", res}, &out, &errb), 0, errb.String())
	}
	var out, errb bytes.Buffer
	code := run([]string{"report", "-label", "before", resA, resB, "-o", "-"}, &out, &errb)
	assert.Equal(t, code, 0, errb.String())
	assert.Check(t, is.Contains(out.String(), "<h2>Run 1: before</h2>"))
	assert.Check(t, is.Regexp(`<h2>Run 2: [^<]+ \(`+regexp.QuoteMeta(resB)+`\)</h2>`, out.String()))
	errb.Reset()
	code = run([]string{"report", "-label", "x", "-label", "y", resA}, &out, &errb)
	assert.Equal(t, code, 2)
	assert.Check(t, is.Contains(errb.String(), "2 labels for 1 results directory"))
}

func TestVMICountFlags(t *testing.T) {
	var got vmRequest
	old := runVM
	t.Cleanup(func() { runVM = old })
	runVM = func(_ context.Context, r vmRequest) (int, error) { got = r; return 0, nil }
	var out, errb bytes.Buffer
	code := run([]string{"-kernel", "/boot/vmlinuz", "-vm-icount", "-vm-append", "clocksource=hpet quiet", "-run", "^perf_",
		"-results", "/tmp/r"}, &out, &errb)
	assert.Equal(t, code, 0, errb.String())
	assert.Equal(t, got.ICount, true)
	assert.Equal(t, got.Append, "clocksource=hpet quiet")
	// Host-side flags, not the guest runner's.
	assert.DeepEqual(t, got.Args, []string{"-run=^perf_"})
	errb.Reset()
	code = run([]string{"-kernel", "/boot/vmlinuz", "-vm-sharing", "/p/fsnshare.so", "-results", "/tmp/r"}, &out, &errb)
	// The stand-in left no records: the report says so and the run fails.
	assert.Equal(t, code, 1, errb.String())
	assert.Equal(t, got.Sharing, "/p/fsnshare.so")
	assert.DeepEqual(t, got.Args, []string(nil))
	assert.Assert(t, is.Contains(errb.String(), "sharing-plugin.txt"))
	for _, f := range []string{"-vm-icount", "-vm-append=x", "-vm-sharing=x"} {
		errb.Reset()
		code = run([]string{f, "-dir", t.TempDir()}, &out, &errb)
		assert.Equal(t, code, 2)
		assert.Assert(t, is.Contains(errb.String(), "is for VM mode"))
	}
}
