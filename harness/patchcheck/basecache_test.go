package patchcheck

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/fsnsuite/fsnsuite/harness/vm"
)

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

// keyInputs is a Config and runner flags whose base-run key a row of
// TestBaseKeyComponents changes one input of.
type keyInputs struct {
	cfg  *Config
	args []string
	dir  string // holds the image, the suite build, the runtest file, the plugin and a -vm-file
}

func newKeyInputs(t *testing.T) *keyInputs {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{"bzImage": "kernel v1", "runtest": "inotify_api inotify_api\n", "plugin.so": "plugin v1", "input": "input v1"} {
		assert.NilError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	assert.NilError(t, os.Mkdir(filepath.Join(dir, "bin"), 0o755))
	for name, content := range map[string]string{"fsnsuite": "runner v1", "inotify_api": "test v1"} {
		assert.NilError(t, os.WriteFile(filepath.Join(dir, "bin", name), []byte(content), 0o755))
	}
	return &keyInputs{
		cfg: &Config{Suite: filepath.Join(dir, "bin", "fsnsuite"), Base: Kernel{Image: filepath.Join(dir, "bzImage"), Release: "7.3.4-fsnbase"}, Host: hostCopy()},
		args: []string{"-vm-cpus", "2", "-f", filepath.Join(dir, "runtest"), "-vm-file", filepath.Join(dir, "input") + "=/input",
			"-vm-sharing", filepath.Join(dir, "plugin.so")},
		dir: dir,
	}
}

func (k *keyInputs) key(t *testing.T) baseEntry {
	t.Helper()
	k.cfg.suiteSHA = "" // hashed anew, as by a new patchcheck
	e, err := k.cfg.baseKey("cost", k.args)
	assert.NilError(t, err)
	return e
}

// The base run's key changes with each thing a run's result depends on
// (review of issue 35's base cache, C2: the qemu binary, the accelerator,
// the guest userland and the sharing plugin's content were not in it), and
// only with them: the same inputs give the same key.
func TestBaseKeyComponents(t *testing.T) {
	write := func(t *testing.T, p, content string) { assert.NilError(t, os.WriteFile(p, []byte(content), 0o644)) }
	noSharing := func(t *testing.T, k *keyInputs) { k.args = k.args[:len(k.args)-2] }
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, k *keyInputs) // before the first key
		change  func(t *testing.T, k *keyInputs)
		same    bool
	}{
		{name: "nothing", change: func(*testing.T, *keyInputs) {}, same: true},
		{name: "kernel_image", change: func(t *testing.T, k *keyInputs) { write(t, k.cfg.Base.Image, "kernel v2") }},
		{name: "suite_build", change: func(t *testing.T, k *keyInputs) { write(t, filepath.Join(k.dir, "bin", "inotify_api"), "test v2") }},
		{name: "flags", change: func(t *testing.T, k *keyInputs) { k.args = append(k.args, "-vm-mem", "2G") }},
		{name: "runtest_content", change: func(t *testing.T, k *keyInputs) {
			write(t, filepath.Join(k.dir, "runtest"), "inotify_api inotify_api -v\n")
		}},
		{name: "vm_file_content", change: func(t *testing.T, k *keyInputs) { write(t, filepath.Join(k.dir, "input"), "input v2") }},
		{name: "qemu_version", change: func(t *testing.T, k *keyInputs) { k.cfg.Host.QEMUVersion = "QEMU emulator version 9.0.0" }},
		{name: "qemu_executable", change: func(t *testing.T, k *keyInputs) { k.cfg.Host.QEMUSHA256 = "q2" }},
		// Without -vm-sharing (which forces TCG) the host's accelerator counts.
		{name: "accelerator", prepare: noSharing, change: func(t *testing.T, k *keyInputs) { k.cfg.Host.Accel = "kvm" }},
		{name: "icount", prepare: noSharing, change: func(t *testing.T, k *keyInputs) { k.args = append(k.args, "-vm-icount") }},
		{name: "guest_busybox", change: func(t *testing.T, k *keyInputs) { k.cfg.Host.Userland[0] = "/bin/busybox sha256:b2" }},
		{name: "guest_tool_added", change: func(t *testing.T, k *keyInputs) {
			k.cfg.Host.Userland = append(k.cfg.Host.Userland, "/usr/sbin/debugfs sha256:d1")
		}},
		{name: "sharing_plugin_content", change: func(t *testing.T, k *keyInputs) { write(t, filepath.Join(k.dir, "plugin.so"), "plugin v2") }},
		{name: "sharing_plugin_content_inline_flag", prepare: func(t *testing.T, k *keyInputs) {
			noSharing(t, k)
			k.args = append(k.args, "--vm-sharing="+filepath.Join(k.dir, "plugin.so"))
		}, change: func(t *testing.T, k *keyInputs) { write(t, filepath.Join(k.dir, "plugin.so"), "plugin v2") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKeyInputs(t)
			if tc.prepare != nil {
				tc.prepare(t, k)
			}
			before := k.key(t)
			tc.change(t, k)
			after := k.key(t)
			if tc.same {
				assert.Equal(t, after.Key, before.Key)
				assert.Assert(t, sameEntry(after, before))
				return
			}
			assert.Assert(t, after.Key != before.Key, "key %s unchanged by %s", after.Key, tc.name)
			assert.Assert(t, !sameEntry(before, after), "an entry of the old inputs matches the new ones")
		})
	}
}

// HostOf reads the qemu the runner would start (here a stand-in in PATH
// that only prints a version: no guest is started) and hashes the guest's
// userland from the host: another qemu is another VMHost, and so another
// base-run key.
func TestHostOf(t *testing.T) {
	dir := t.TempDir()
	qemu := filepath.Join(dir, vm.DefaultQEMU)
	assert.NilError(t, os.WriteFile(qemu, []byte("#!/bin/sh\necho 'QEMU emulator version 8.2.2'\necho 'Copyright'\n"), 0o755))
	t.Setenv("PATH", dir)
	t.Setenv("FSNSUITE_VM_ACCEL", "tcg")
	h, err := HostOf(context.Background())
	if err != nil && strings.Contains(err.Error(), "busybox") {
		t.Skipf("no busybox on this host: %v", err)
	}
	assert.NilError(t, err)
	assert.Equal(t, h.QEMUVersion, "QEMU emulator version 8.2.2")
	sum, err := fileSum(qemu)
	assert.NilError(t, err)
	assert.Equal(t, h.QEMUSHA256, sum)
	assert.Equal(t, h.Accel, "tcg")
	bb, err := fileSum(vm.DefaultBusybox)
	assert.NilError(t, err)
	assert.Assert(t, is.Contains(h.Userland, "/bin/busybox sha256:"+bb), "%q", h.Userland)

	assert.NilError(t, os.WriteFile(qemu, []byte("#!/bin/sh\necho 'QEMU emulator version 9.0.0'\n"), 0o755))
	h2, err := HostOf(context.Background())
	assert.NilError(t, err)
	assert.Equal(t, h2.QEMUVersion, "QEMU emulator version 9.0.0")
	assert.Assert(t, h2.QEMUSHA256 != h.QEMUSHA256)
	assert.DeepEqual(t, h2.Userland, h.Userland)
}
