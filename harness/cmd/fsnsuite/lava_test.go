package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/fsnsuite/fsnsuite/harness/internal/execfile"
)

// The LAVA test definition's last step (scripts/lava/lava-results.sh) turns
// a run's lava.txt into one lava-test-case call per line, with the
// measurement and units where there are some; checked with a stand-in
// lava-test-case that records its arguments.
func TestLAVADefinition(t *testing.T) {
	top, err := filepath.Abs("../../..")
	assert.NilError(t, err)
	def, err := os.ReadFile(filepath.Join(top, "scripts", "lava", "fsnsuite.yaml"))
	assert.NilError(t, err)
	for _, want := range []string{"format: Lava-Test Test Definition 1.0", "name: fsnsuite", "./scripts/lava/lava-results.sh \"${RESULTS}\"", "-results \"${RESULTS}\""} {
		assert.Check(t, is.Contains(string(def), want))
	}

	// A real run of fake binaries, then the script on its results.
	dir := binDir(t, map[string]string{"a": pass, "b": skipAll,
		"perf_x": "echo 1..1; echo '# measurement: ratio 1.005 ratio [0.998,1.012]'; echo 'ok 1 write.tmpfs'\n"})
	res := filepath.Join(t.TempDir(), "res")
	var out, errb strings.Builder
	run([]string{"-dir", dir, "-results", res}, &out, &errb)

	fakeBin := t.TempDir()
	calls := filepath.Join(fakeBin, "calls")
	assert.NilError(t, execfile.Write(filepath.Join(fakeBin, "lava-test-case"), []byte("#!/bin/sh\necho \"$*\" >> "+calls+"\n"), 0o755))
	cmd := exec.Command(filepath.Join(top, "scripts", "lava", "lava-results.sh"), res)
	cmd.Env = append(os.Environ(), "PATH="+fakeBin+":"+os.Getenv("PATH"))
	o, err := cmd.CombinedOutput()
	assert.NilError(t, err, "%s", o)
	got, err := os.ReadFile(calls)
	assert.NilError(t, err)
	assert.Equal(t, string(got), `a.a --result pass
b --result skip
perf_x.write.tmpfs --result pass
perf_x.write.tmpfs.ratio --result pass --measurement 1.005 --units ratio
`)

	// No results at all: one failed case says so.
	assert.NilError(t, os.Remove(calls))
	cmd = exec.Command(filepath.Join(top, "scripts", "lava", "lava-results.sh"), t.TempDir())
	cmd.Env = append(os.Environ(), "PATH="+fakeBin+":"+os.Getenv("PATH"))
	_, err = cmd.CombinedOutput()
	assert.NilError(t, err)
	got, err = os.ReadFile(calls)
	assert.NilError(t, err)
	assert.Equal(t, string(got), "fsnsuite.runner --result fail\n")

	// A results file that is not whole, and the runner's exit status
	// (issue 33 item 4: a lava.txt cut by a full disk gave "155 pass, 0
	// fail" while a leaf had failed).
	whole, err := os.ReadFile(filepath.Join(res, "lava.txt"))
	assert.NilError(t, err)
	text := string(whole)
	cut := strings.Index(text, "perf_x.write.tmpfs.ratio")
	for _, tc := range []struct {
		name, lava, status string
		want, why          string
	}{
		{"cut_mid_line", text[:cut+10], "", "a.a --result pass\nb --result skip\nperf_x.write.tmpfs --result pass\nfsnsuite.runner --result fail\n",
			"its last line has no newline: perf_x.wri"},
		{"cut_at_line_end", text[:cut], "", "a.a --result pass\nb --result skip\nperf_x.write.tmpfs --result pass\nfsnsuite.runner --result fail\n",
			"has no count line after its 3 result lines"},
		{"count_disagrees", strings.Replace(text, "pass=3", "pass=2", 1), "", "",
			"says '# count pass=2 fail=0 skip=1 total=4' but 4 lines were read ('# count pass=3 fail=0 skip=1 total=4')"},
		{"status_2", text, "2", "fsnsuite.run --result fail --measurement 2 --units exit_status\n", "fsnsuite exited with status 2"},
		{"status_1", text, "1", "fsnsuite.run --result pass --measurement 1 --units exit_status\n", ""},
		{"not_run", text, "", "fsnsuite.run --result fail\n", "fsnsuite did not run (no exit status)"},
		{"no_directory", "", "no-results-directory", "fsnsuite.run --result fail\nfsnsuite.runner --result fail\n", "no results directory (mktemp -d failed?)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			assert.NilError(t, os.WriteFile(filepath.Join(dir, "lava.txt"), []byte(tc.lava), 0o644))
			os.Remove(calls)
			args := []string{dir}
			switch tc.name {
			case "status_2", "status_1":
				args = append(args, tc.status)
			case "not_run":
				args = append(args, "")
			case "no_directory":
				args = []string{"", tc.status}
			}
			cmd := exec.Command(filepath.Join(top, "scripts", "lava", "lava-results.sh"), args...)
			cmd.Env = append(os.Environ(), "PATH="+fakeBin+":"+os.Getenv("PATH"))
			var stderr strings.Builder
			cmd.Stderr = &stderr
			assert.NilError(t, cmd.Run())
			got, _ := os.ReadFile(calls)
			assert.Check(t, is.Contains(string(got), tc.want))
			if tc.name == "count_disagrees" {
				assert.Check(t, is.Contains(string(got), "fsnsuite.runner --result fail\n"))
			}
			if tc.why != "" {
				assert.Check(t, is.Contains(stderr.String(), tc.why))
			} else {
				assert.Check(t, !strings.Contains(string(got), "--result fail"), "%s", got)
			}
			assert.Check(t, strings.Count(string(got), "fsnsuite.runner") <= 1, "reported once: %s", got)
		})
	}

	// The definition makes its results directory with mktemp -d, passes
	// the runner's exit status on, and names no fixed path in a
	// world-writable directory.
	assert.Check(t, is.Contains(string(def), `mktemp -d "${TMPDIR:-/tmp}/fsnsuite-results.XXXXXXXXXX"`))
	assert.Check(t, is.Contains(string(def), `lava-results.sh "${RESULTS}" "${FSNSUITE_STATUS}"`))
	assert.Check(t, !strings.Contains(string(def), "|| true"))
	assert.Check(t, !strings.Contains(string(def), "/tmp/fsnsuite-results\n"))
}

// fsnsuite export -kcidb on a results directory.
func TestExportKCIDB(t *testing.T) {
	dir := binDir(t, map[string]string{"a": pass, "b": fail})
	res := filepath.Join(t.TempDir(), "res")
	var out, errb strings.Builder
	run([]string{"-dir", dir, "-results", res}, &out, &errb)
	var js, e2 strings.Builder
	assert.Equal(t, run([]string{"export", "-kcidb", "-origin", "mylab", res}, &js, &e2), 0, e2.String())
	assert.Check(t, is.Contains(js.String(), `"path": "fsnsuite.b.a"`))
	assert.Check(t, is.Contains(js.String(), `"status": "FAIL"`))
	assert.Check(t, is.Contains(js.String(), `"build_id": "mylab:`))
	assert.Equal(t, run([]string{"export", res}, &js, &e2), 2)
	assert.Equal(t, run([]string{"export", "-kcidb", t.TempDir()}, &js, &e2), 2)
}

// The mutants' LAVA pieces (issue 35): mutants-jobs.sh writes one job per
// shard K/N with every placeholder filled, and lava-mutants.sh turns a
// shard's report.txt into one case per mutant (killed or crashed pass,
// survived fail, the rest skip) after the case mutants.run.
func TestLAVAMutants(t *testing.T) {
	top, err := filepath.Abs("../../..")
	assert.NilError(t, err)
	lava := filepath.Join(top, "scripts", "lava")

	out := t.TempDir()
	vars := []string{"DEVICE_TYPE=x86", "KERNEL_URL=http://k", "ROOTFS_URL=http://r", "BOOT_METHOD=ipxe",
		"REPOSITORY=https://example.org/fsnsuite.git", "REVISION=0123abc", "FILES=fs/notify/fsnotify.c", "UPLOAD="}
	o, err := exec.Command(filepath.Join(lava, "mutants-jobs.sh"), append([]string{"3", out}, vars...)...).CombinedOutput()
	assert.NilError(t, err, "%s", o)
	for k := 1; k <= 3; k++ {
		job, err := os.ReadFile(filepath.Join(out, "mutants-shard-"+string(rune('0'+k))+"-of-3.yaml"))
		assert.NilError(t, err)
		assert.Check(t, is.Contains(string(job), `SHARD: "`+string(rune('0'+k))+`/3"`))
		assert.Check(t, !regexp.MustCompile(`@[A-Z_]+@`).Match(job), "a placeholder left:\n%s", job)
	}
	o, err = exec.Command(filepath.Join(lava, "mutants-jobs.sh"), "2", t.TempDir(), "DEVICE_TYPE=x86").CombinedOutput()
	assert.Check(t, err != nil, "placeholders left must be refused: %s", o)
	assert.Check(t, is.Contains(string(o), "placeholders not given: @BOOT_METHOD@"))

	fakeBin := t.TempDir()
	calls := filepath.Join(fakeBin, "calls")
	assert.NilError(t, execfile.Write(filepath.Join(fakeBin, "lava-test-case"), []byte("#!/bin/sh\necho \"$*\" >> "+calls+"\n"), 0o755))
	res := t.TempDir()
	report := "Mutation score: 2/3\n\nMutants:\n" +
		"  648a90f7d0 killed       fs/notify/fanotify/fanotify_user.c:1592 equality   fanotify_events_supported (build 7s)\n" +
		"      pass -> fail fanotify_api.x: fs/notify/fake.c:1 is not a mutant line\n" +
		"  0e9031cba3 survived     fs/notify/fsnotify.c:120                delcall    fsnotify (build 9s)\n" +
		"  817fd5fb82 crashed      fs/notify/notification.c:80             return     fsnotify_add_event\n" +
		"  1111111111 not-covered  fs/notify/mark.c:10                     negate     fsnotify_put_mark\n"
	assert.NilError(t, os.WriteFile(filepath.Join(res, "report.txt"), []byte(report), 0o644))
	cmd := exec.Command(filepath.Join(lava, "lava-mutants.sh"), res, "0")
	cmd.Env = append(os.Environ(), "PATH="+fakeBin+":"+os.Getenv("PATH"))
	o, err = cmd.CombinedOutput()
	assert.NilError(t, err, "%s", o)
	got, err := os.ReadFile(calls)
	assert.NilError(t, err)
	assert.Equal(t, string(got), `mutants.run --result pass
mutants.648a90f7d0 --result pass
mutants.0e9031cba3 --result fail
mutants.817fd5fb82 --result pass
mutants.1111111111 --result skip
`)

	// A shard that did not finish: mutants.run fails with its status.
	assert.NilError(t, os.Remove(calls))
	cmd = exec.Command(filepath.Join(lava, "lava-mutants.sh"), t.TempDir(), "2")
	cmd.Env = append(os.Environ(), "PATH="+fakeBin+":"+os.Getenv("PATH"))
	_, err = cmd.CombinedOutput()
	assert.NilError(t, err)
	got, err = os.ReadFile(calls)
	assert.NilError(t, err)
	assert.Equal(t, string(got), "mutants.run --result fail --measurement 2 --units status\n")
}
