package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/fsnsuite/fsnsuite/harness/vm"
)

// The guest runner of the VM mode, as /init starts it under TCG (the
// runner's flags -timeout=1800s -case-timeout=120s, vm.LeftOutEnv naming the
// perf binaries left out of the guest): an `sh -c` runtest line gets its
// own arguments, not the -timeout 120s meant for our binaries, and a line
// naming a left-out perf binary is a skip saying why, not a failure to
// start it (issue 33 item 9).
func TestRuntestInGuest(t *testing.T) {
	dir := binDir(t, map[string]string{"inotify_basic": pass})
	rt := filepath.Join(t.TempDir(), "runtest")
	assert.NilError(t, os.WriteFile(rt, []byte("inotify_basic inotify_basic\n"+
		`shline sh -c "echo 1..1; echo \"ok 1 args_\$#\""`+"\n"+
		"perf_watch_add perf_watch_add -exit ltp\n"), 0o644))
	t.Setenv(vm.LeftOutEnv, "perf_open_path perf_watch_add")
	flags := []string{"-dir", dir, "-f", rt, "-timeout=1800s", "-case-timeout=120s"}

	var out, errb bytes.Buffer
	code := run(append(flags, "-results", filepath.Join(t.TempDir(), "res")), &out, &errb)
	assert.Equal(t, code, 0, "stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	for _, want := range []string{
		"ok 1 inotify_basic\n",
		"    ok 1 args_0\nok 2 shline\n",
		"ok 3 perf_watch_add # SKIP " + vm.LeftOutReason + "\n",
	} {
		assert.Check(t, is.Contains(out.String(), want))
	}

	// -list says the same.
	out.Reset()
	code = run(append(flags, "-list"), &out, &errb)
	assert.Equal(t, code, 0, errb.String())
	sh, err := exec.LookPath("sh")
	assert.NilError(t, err)
	assert.DeepEqual(t, strings.Split(strings.TrimSpace(out.String()), "\n"), []string{
		"inotify_basic\t" + dir + "/inotify_basic",
		"shline\t" + sh + " -c echo 1..1; echo \"ok 1 args_$#\"",
		"perf_watch_add\t# SKIP " + vm.LeftOutReason,
	})

	// Outside a guest (no vm.LeftOutEnv) the line is run, and a binary
	// that is not there is a failure, as before.
	t.Setenv(vm.LeftOutEnv, "")
	out.Reset()
	code = run(append(flags, "-results", filepath.Join(t.TempDir(), "res")), &out, &errb)
	assert.Equal(t, code, 1, "stdout:\n%s", out.String())
	assert.Check(t, is.Contains(out.String(), "not ok 3 perf_watch_add\n"))
}
