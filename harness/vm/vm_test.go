package vm

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fsnsuite/fsnsuite/harness/internal/execfile"
)

func TestCheckKernelImage(t *testing.T) {
	dir := t.TempDir()
	bogus := filepath.Join(dir, "bogus")
	if err := os.WriteFile(bogus, []byte("hello, not a kernel\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var e *Error
	if err := checkKernelImage(bogus); !errors.As(err, &e) || e.Kind != "kernel" || strings.Contains(e.Error(), "\n") {
		t.Fatalf("bogus image: got %v, want a one-line kernel *Error", err)
	}
	img := make([]byte, 0x400)
	copy(img[0x202:], "HdrS")
	good := filepath.Join(dir, "bzImage")
	if err := os.WriteFile(good, img, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkKernelImage(good); err != nil {
		t.Fatalf("bzImage header: %v", err)
	}
	if err := checkKernelImage(filepath.Join(dir, "nope")); !errors.As(err, &e) {
		t.Fatalf("missing file: got %v", err)
	}
}

func TestKernelConfig(t *testing.T) {
	dir := t.TempDir()
	var cfg strings.Builder
	for _, o := range Options {
		if o.Name == "FANOTIFY" || o.Name == "FANOTIFY_ACCESS_PERMISSIONS" || o.Name == "FHANDLE" {
			cfg.WriteString("# CONFIG_" + o.Name + " is not set\n")
			continue
		}
		cfg.WriteString("CONFIG_" + o.Name + "=y\n")
	}
	kernel := filepath.Join(dir, "vmlinuz-6.1.0-test")
	if err := os.WriteFile(filepath.Join(dir, "config-6.1.0-test"), []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := findKernelConfig(kernel); got != filepath.Join(dir, "config-6.1.0-test") {
		t.Fatalf("findKernelConfig = %q", got)
	}
	var progress bytes.Buffer
	c := Config{Kernel: kernel, Progress: &progress}
	err := c.checkKernelConfig()
	var e *Error
	if !errors.As(err, &e) || e.Kind != "config" || !reflect.DeepEqual(e.Missing, []string{"FANOTIFY"}) {
		t.Fatalf("got %v, want missing FANOTIFY", err)
	}
	if !strings.Contains(err.Error(), "CONFIG_FANOTIFY,") || strings.Contains(err.Error(), "\n") {
		t.Errorf("diagnosis %q: want one line naming CONFIG_FANOTIFY", err)
	}
	if !strings.Contains(progress.String(), "CONFIG_FHANDLE") || strings.Contains(progress.String(), "CONFIG_FANOTIFY_ACCESS_PERMISSIONS") {
		t.Errorf("want a warning about FHANDLE only (ACCESS_PERMISSIONS is implied by FANOTIFY): %q", progress.String())
	}

	// Asking for gcov data from a kernel built without gcov fails before boot.
	full := filepath.Join(dir, "config-full")
	var all strings.Builder
	for _, o := range Options {
		all.WriteString("CONFIG_" + o.Name + "=y\n")
	}
	if err := os.WriteFile(full, []byte(all.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	c = Config{Kernel: kernel, KernelConfig: full, GcovDir: dir}
	if err := c.checkKernelConfig(); !errors.As(err, &e) || e.Kind != "gcov" || !strings.Contains(e.Msg, "CONFIG_GCOV_KERNEL") {
		t.Errorf("gcov without CONFIG_GCOV_KERNEL: got %v, want a gcov *Error", err)
	}
	if err := os.WriteFile(full, []byte(all.String()+"CONFIG_GCOV_KERNEL=y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.checkKernelConfig(); err != nil {
		t.Errorf("gcov kernel: got %v, want no error", err)
	}
}

func TestModuleResolve(t *testing.T) {
	root := t.TempDir()
	d := filepath.Join(root, "lib", "modules", "6.1.0-test")
	if err := os.MkdirAll(filepath.Join(d, "kernel"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"modules.dep": "kernel/fs/ext4/ext4.ko.xz: kernel/lib/crc16.ko.xz kernel/fs/mbcache.ko.xz kernel/fs/jbd2/jbd2.ko.xz\n" +
			"kernel/lib/crc16.ko.xz:\nkernel/fs/mbcache.ko.xz:\nkernel/fs/jbd2/jbd2.ko.xz:\n" +
			"kernel/drivers/block/loop.ko.xz:\nkernel/crypto/crc32c_generic.ko.xz:\n",
		"modules.softdep": "# comment\nsoftdep ext4 pre: crypto-crc32c\n",
		"modules.alias":   "alias crypto-crc32c crc32c_generic\nalias pci:v*d* something\n",
		"modules.builtin": "kernel/fs/fat/vfat.ko\n",
	}
	for n, s := range files {
		if err := os.WriteFile(filepath.Join(d, n), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tree, err := loadModuleTree(root)
	if err != nil {
		t.Fatal(err)
	}
	if tree.version != "6.1.0-test" {
		t.Errorf("version %q", tree.version)
	}
	order, notFound := tree.resolve([]string{"loop", "ext4", "vfat", "nosuch"})
	want := []string{"kernel/drivers/block/loop.ko.xz", "kernel/crypto/crc32c_generic.ko.xz",
		"kernel/fs/jbd2/jbd2.ko.xz", "kernel/fs/mbcache.ko.xz", "kernel/lib/crc16.ko.xz", "kernel/fs/ext4/ext4.ko.xz"}
	if !reflect.DeepEqual(order, want) {
		t.Errorf("order\n got %q\nwant %q", order, want)
	}
	if !reflect.DeepEqual(notFound, []string{"nosuch"}) {
		t.Errorf("notFound %q", notFound)
	}
	if g := guestModulePath("v", "kernel/fs/ext4/ext4.ko.xz"); g != "/lib/modules/v/kernel/fs/ext4/ext4.ko" {
		t.Errorf("guestModulePath = %q", g)
	}
}

func TestShQuote(t *testing.T) {
	out, err := exec.Command("sh", "-c", "printf '%s|' "+shQuote("a b")+" "+shQuote("it's")+" "+shQuote("$x")).Output()
	if err != nil {
		t.Skip("no sh:", err)
	}
	if string(out) != "a b|it's|$x|" {
		t.Errorf("got %q", out)
	}
}

func TestMonitorProtocol(t *testing.T) {
	var stdout, progress bytes.Buffer
	c := &Config{Stdout: &stdout, Progress: &progress, Stderr: &progress, ResultsDir: t.TempDir()}
	m := &monitor{cfg: c, start: time.Now(), console: tail{n: 5}, qemuOut: tail{n: 5}}
	for _, s := range []string{
		"FSNSUITE-VM init 6.1.0 2", "FSNSUITE-VM start", "TAP version 13", "1..1",
		"# Subtest: fanotify_basic", "    1..1", "    ok 1 x", "ok 1 fanotify_basic",
		"FSNSUITE-VM exit 4",
	} {
		if err := m.handle(line{srcOut, s}); err != nil {
			t.Fatal(err)
		}
	}
	if !m.gotExit || m.exitCode != 4 {
		t.Fatalf("exit: got %v %d", m.gotExit, m.exitCode)
	}
	if want := "TAP version 13\n1..1\n# Subtest: fanotify_basic\n    1..1\n    ok 1 x\nok 1 fanotify_basic\n"; stdout.String() != want {
		t.Errorf("stdout %q", stdout.String())
	}
	if !strings.Contains(progress.String(), "running fanotify_basic") || !strings.Contains(progress.String(), "ok 1 fanotify_basic") {
		t.Errorf("progress %q", progress.String())
	}

	m2 := &monitor{cfg: c, start: time.Now(), console: tail{n: 5}}
	err := m2.handle(line{srcConsole, "[    1.0] Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(0,0)"})
	var e *Error
	if !errors.As(err, &e) || e.Kind != "panic" || !strings.Contains(e.Msg, "BLK_DEV_INITRD") {
		t.Errorf("panic diagnosis: %v", err)
	}
	m3 := &monitor{cfg: c, start: time.Now()}
	err = m3.handle(line{srcOut, "FSNSUITE-VM missing FANOTIFY"})
	if !errors.As(err, &e) || e.Kind != "config" || !strings.Contains(e.Msg, "CONFIG_FANOTIFY") {
		t.Errorf("missing diagnosis: %v", err)
	}
}

// TestBootPayload boots a real kernel when FSNSUITE_VM_KERNEL names one
// (FSNSUITE_VM_MODULES optionally a module tree), with a stand-in runner.
func TestBootPayload(t *testing.T) {
	kernel := os.Getenv("FSNSUITE_VM_KERNEL")
	if kernel == "" {
		t.Skip("FSNSUITE_VM_KERNEL not set")
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(bin, RunnerName), "./testdata/payload")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building payload: %v\n%s", err, out)
	}
	var stdout, progress bytes.Buffer
	results := t.TempDir()
	cfg := Config{
		Kernel: kernel, Modules: os.Getenv("FSNSUITE_VM_MODULES"), BinDir: bin,
		Args: []string{"1"}, TCGArgs: []string{}, Stdout: &stdout, Progress: &progress, ResultsDir: results,
		Timeout: 5 * time.Minute,
	}
	code, err := Run(context.Background(), cfg)
	t.Logf("progress:\n%s", progress.String())
	t.Logf("stdout:\n%s", stdout.String())
	if err != nil {
		t.Fatal(err)
	}
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if !strings.Contains(stdout.String(), "ok 2 mkfs_ext4") {
		t.Errorf("mkfs.ext4 did not work in the guest")
	}
	if b, err := os.ReadFile(filepath.Join(results, "sub", "summary.txt")); err != nil || string(b) != "payload ran\n" {
		t.Errorf("results not copied back: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(results, "vm-console.log")); err != nil {
		t.Errorf("no console log: %v", err)
	}

	// A kernel that cannot find its init panics: diagnosed, not a hang.
	cfg.ExtraAppend = "rdinit=/nonexistent"
	cfg.ResultsDir = ""
	_, err = Run(context.Background(), cfg)
	var e *Error
	if !errors.As(err, &e) || e.Kind != "panic" {
		t.Errorf("no init: got %v, want a panic diagnosis", err)
	} else {
		t.Logf("no init: %v", err)
	}
	cfg.ExtraAppend = ""

	// A bogus kernel fails fast with a one-line diagnosis.
	bogus := filepath.Join(t.TempDir(), "bzImage")
	if err := os.WriteFile(bogus, bytes.Repeat([]byte("x"), 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Kernel = bogus
	if _, err := Run(context.Background(), cfg); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("bogus kernel: got %v", err)
	}
}

// fakeRun runs Run with a shell script standing in for qemu: the script
// writes to fd 3 (console), 4 (TAP port) and 5 (stderr port) as the guest
// would.
func fakeRun(t *testing.T, script string, cfg Config) (int, error, string, string) {
	t.Helper()
	if _, err := exec.LookPath("cpio"); err != nil {
		t.Skip("cpio not installed")
	}
	dir := t.TempDir()
	qemu := filepath.Join(dir, "qemu")
	if err := execfile.Write(qemu, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	img := make([]byte, 0x400)
	copy(img[0x202:], "HdrS")
	kernel := filepath.Join(dir, "bzImage")
	if err := os.WriteFile(kernel, img, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{RunnerName, "inotify_basic", "perf_x"} {
		if err := execfile.Write(filepath.Join(bin, n), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bb := filepath.Join(dir, "busybox")
	if err := execfile.Write(bb, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var stdout, progress bytes.Buffer
	cfg.Kernel, cfg.QEMU, cfg.BinDir, cfg.Busybox, cfg.Accel = kernel, qemu, bin, bb, "tcg"
	cfg.Stdout, cfg.Progress, cfg.KernelConfig = &stdout, &progress, ""
	if cfg.Timeout == 0 {
		cfg.Timeout = 20 * time.Second
	}
	code, err := Run(context.Background(), cfg)
	t.Logf("progress:\n%s", progress.String())
	return code, err, stdout.String(), progress.String()
}

func TestFakeGuest(t *testing.T) {
	results := t.TempDir()
	payload := "cd $(mktemp -d) && mkdir sub && echo hi > sub/f && tar -cf - . | gzip -c | base64"
	code, err, out, progress := fakeRun(t, `
echo "[    0.0] Linux version 6.1.0-fake" >&3
echo "FSNSUITE-VM init 6.1.0-fake 2" >&4
echo "FSNSUITE-VM start" >&4
printf 'TAP version 13\r\n1..1\r\n    # Subtest: inotify_basic\r\n    1..1\r\n    ok 1 x\r\nok 1 inotify_basic\r\n' >&4
echo "summary line" >&5
echo "FSNSUITE-VM exit 4" >&4
echo "FSNSUITE-VM results-begin" >&4
(`+payload+`) >&4
echo "FSNSUITE-VM results-end" >&4
echo "FSNSUITE-VM done" >&4
`, Config{ResultsDir: results})
	if err != nil || code != 4 {
		t.Fatalf("got %d, %v; want 4, nil", code, err)
	}
	if want := "TAP version 13\n1..1\n    # Subtest: inotify_basic\n    1..1\n    ok 1 x\nok 1 inotify_basic\n"; out != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
	if b, err := os.ReadFile(filepath.Join(results, "sub", "f")); err != nil || string(b) != "hi\n" {
		t.Errorf("results: %q %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(results, "vm-console.log")); !strings.Contains(string(b), "Linux version") {
		t.Errorf("console log %q", b)
	}
	if !strings.Contains(progress, "perf_x") || !strings.Contains(progress, "running inotify_basic") {
		t.Errorf("progress lacks the perf note or the per-binary line")
	}
}

func TestFakeGuestFailures(t *testing.T) {
	for _, tc := range []struct {
		name, script, kind string
		boot               time.Duration
	}{
		{"panic", `echo "[ 1.0] Kernel panic - not syncing: No working init found." >&3; exit 0`, "panic", 0},
		{"silent", `sleep 30`, "boot", 2 * time.Second},
		{"no_payload", `echo "[ 0.1] booting" >&3; sleep 30`, "boot", 2 * time.Second},
		{"missing", `echo "FSNSUITE-VM init 6.1 1" >&4; echo "FSNSUITE-VM config /proc/config.gz" >&4; echo "FSNSUITE-VM missing FANOTIFY" >&4; sleep 30`, "config", 0},
		{"no_exit", `echo "FSNSUITE-VM init 6.1 1" >&4; echo "FSNSUITE-VM start" >&4; echo "ok 1 a" >&4; exit 0`, "protocol", 0},
		{"qemu_error", `echo "qemu-system-x86_64: cannot load kernel" >&2; exit 1`, "qemu", 0},
		{"timeout", `echo "FSNSUITE-VM init 6.1 1" >&4; echo "FSNSUITE-VM start" >&4; sleep 30`, "timeout", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{BootTimeout: tc.boot}
			if tc.name == "timeout" {
				cfg.Timeout = 2 * time.Second
			}
			start := time.Now()
			code, err, _, _ := fakeRun(t, tc.script, cfg)
			var e *Error
			if code == 0 || !errors.As(err, &e) || e.Kind != tc.kind {
				t.Fatalf("got %d, %v; want a %q diagnosis", code, err, tc.kind)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("diagnosis is not one line: %q", err)
			}
			if d := time.Since(start); d > 15*time.Second {
				t.Errorf("took %s: the run is not bounded", d)
			}
			t.Log(err)
		})
	}
}

// TestFakeGuestGcov checks the gcov block of the guest protocol (make
// coverage): the .gcda files arrive under GcovDir with their guest paths, and
// a cut, mislabelled or missing block is an error, not a silent empty report.
func TestFakeGuestGcov(t *testing.T) {
	// The guest side of init.sh: a tar.gz of the files, its size in the header.
	block := func(files, bytesExpr, end string) string {
		return `
echo "FSNSUITE-VM init 6.1.0-fake 2" >&4
echo "FSNSUITE-VM start" >&4
echo "1..0" >&4
echo "FSNSUITE-VM exit 0" >&4
d=$(mktemp -d) && mkdir -p $d/out/boot/build/fs/notify $d/out/suite/build/fs/notify && printf 'gcda-mark' >$d/out/suite/build/fs/notify/mark.gcda && printf 'gcda-boot' >$d/out/boot/build/fs/notify/mark.gcda
tar -C $d/out -cf - . | gzip -c >$d/g.tgz
echo "FSNSUITE-VM gcov-begin ` + files + ` $((` + bytesExpr + `))" >&4
base64 <$d/g.tgz >&4
` + end + `
echo "FSNSUITE-VM done" >&4
`
	}
	const end = `echo "FSNSUITE-VM gcov-end" >&4`
	size := "$(wc -c <$d/g.tgz)"

	dir := t.TempDir()
	code, err, _, progress := fakeRun(t, block("2", size, end), Config{GcovDir: dir})
	if err != nil || code != 0 {
		t.Fatalf("got %d, %v; want 0, nil", code, err)
	}
	for name, want := range map[string]string{"suite": "gcda-mark", "boot": "gcda-boot"} {
		b, err := os.ReadFile(filepath.Join(dir, name, "build", "fs", "notify", "mark.gcda"))
		if err != nil || string(b) != want {
			t.Errorf("%s: got %q, %v; want %q", name, b, err, want)
		}
	}
	if !strings.Contains(progress, "gcov data (2 files)") {
		t.Errorf("progress does not say the gcov data arrived")
	}

	for _, tc := range []struct{ name, script, want string }{
		{"cut_short", block("2", size, ""), "cut short"},
		{"wrong_size", block("2", size+"+1", end), "header said"},
		{"wrong_count", block("3", size, end), "holds 2 files, its header said 3"},
		{"no_block", `echo "FSNSUITE-VM init 6.1 1" >&4; echo "FSNSUITE-VM start" >&4; echo "FSNSUITE-VM exit 0" >&4; echo "FSNSUITE-VM done" >&4`, "no gcov block"},
		{"no_gcov_kernel", `echo "FSNSUITE-VM init 6.1 1" >&4; echo "FSNSUITE-VM gcov-none no /sys/kernel/debug/gcov/reset: the kernel lacks CONFIG_GCOV_KERNEL" >&4; sleep 30`, "lacks CONFIG_GCOV_KERNEL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err, _, _ := fakeRun(t, tc.script, Config{GcovDir: t.TempDir()})
			var e *Error
			if !errors.As(err, &e) || e.Kind != "gcov" || !strings.Contains(e.Msg, tc.want) {
				t.Fatalf("got %v; want a gcov *Error containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("diagnosis is not one line: %q", err)
			}
			if d := time.Since(start); d > 15*time.Second {
				t.Errorf("took %s: the run is not bounded", d)
			}
			t.Log(err)
		})
	}
}

func TestQEMUArgsICount(t *testing.T) {
	c := &Config{Kernel: "/k", MemMB: 512, CPUs: 1, ExtraAppend: "x=1"}
	args := strings.Join(c.qemuArgs("tcg", "/initrd"), " ")
	if !strings.Contains(args, "-accel tcg -cpu max") || strings.Contains(args, "icount") {
		t.Errorf("plain TCG: %s", args)
	}
	c.ICount = true
	args = strings.Join(c.qemuArgs("tcg", "/initrd"), " ")
	if !strings.Contains(args, "-accel tcg,thread=single -icount shift=0,sleep=off -cpu max") || !strings.Contains(args, "random.trust_cpu=on x=1") {
		t.Errorf("icount: %s", args)
	}
}

// TestICountConfig: -vm-icount refuses KVM, and tells the guest.
func TestICountConfig(t *testing.T) {
	c := Config{Kernel: "/nonexistent", BinDir: t.TempDir(), ICount: true, Accel: "kvm"}
	if _, err := Run(context.Background(), c); err == nil || !strings.Contains(err.Error(), "KVM has no instruction counter") {
		t.Errorf("icount with KVM: %v", err)
	}
	c = Config{ICount: true, ExtraAppend: "quiet"}
	accel, mode, err := c.applyMode()
	if err != nil || accel != "tcg" || mode != "tcg-icount" || c.ExtraAppend != "clocksource=tsc tsc=reliable quiet" ||
		strings.Join(c.Env, " ") != "FSNSUITE_GUEST_ACCEL=tcg-icount FSNSUITE_PERF_CLOCK=icount" {
		t.Errorf("icount: %s %s %v append %q env %q", accel, mode, err, c.ExtraAppend, c.Env)
	}
	c = Config{ICount: true, ExtraAppend: "clocksource=hpet"}
	if _, _, err := c.applyMode(); err != nil || c.ExtraAppend != "clocksource=hpet" {
		t.Errorf("a clocksource given: append %q (%v)", c.ExtraAppend, err)
	}
	c = Config{Accel: "tcg"}
	if _, mode, err := c.applyMode(); err != nil || mode != "tcg" || strings.Join(c.Env, " ") != "FSNSUITE_GUEST_ACCEL=tcg" || c.ExtraAppend != "" {
		t.Errorf("plain TCG: %s %v env %q append %q", mode, err, c.Env, c.ExtraAppend)
	}
}

// TestPanicExcerpt: a panic in interrupt context prints the oops that led
// to it on the progress stream, so a CI log that keeps only stderr shows
// the cause, not only "Fatal exception in interrupt".
func TestPanicExcerpt(t *testing.T) {
	var progress bytes.Buffer
	c := &Config{Progress: &progress}
	m := &monitor{cfg: c, start: time.Now(), console: tail{n: 80}}
	for _, l := range []string{
		"[    1.0] Run /init as init process",
		"[    2.0] BUG: kernel NULL pointer dereference, address: 0000000000000008",
		"[    2.0] RIP: 0010:example_irq_handler+0x12/0x40",
		"[    2.0] Call Trace:",
		"[    2.0]  <IRQ>",
	} {
		if err := m.handle(line{srcConsole, l}); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
	}
	err := m.handle(line{srcConsole, "[    2.1] Kernel panic - not syncing: Fatal exception in interrupt"})
	var e *Error
	if !errors.As(err, &e) || e.Kind != "panic" || !strings.Contains(e.Msg, "Fatal exception in interrupt") {
		t.Fatalf("panic diagnosis: %v", err)
	}
	out := progress.String()
	for _, want := range []string{"BUG: kernel NULL pointer dereference", "RIP: 0010:example_irq_handler", "Kernel panic - not syncing"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Run /init") {
		t.Errorf("excerpt starts before the report:\n%s", out)
	}
}

// TestSharingConfig: -vm-sharing is instruction count mode with the plugin on
// qemu's command line, 2 vCPUs by default, nokaslr, and the guest told where
// to log its chunks; a plugin path qemu cannot parse (a comma) or a missing
// plugin is refused.
func TestSharingConfig(t *testing.T) {
	so := filepath.Join(t.TempDir(), "fsnshare.so")
	if err := os.WriteFile(so, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c := Config{Kernel: "/k", BinDir: "/b", SharingPlugin: so}
	if err := c.setDefaults(); err != nil {
		t.Fatal(err)
	}
	if !c.ICount || c.CPUs != SharingCPUs {
		t.Errorf("icount %v, CPUs %d, want true and %d", c.ICount, c.CPUs, SharingCPUs)
	}
	accel, mode, err := c.applyMode()
	if err != nil || accel != "tcg" || mode != "tcg-icount" || !strings.Contains(c.ExtraAppend, "nokaslr") ||
		!strings.Contains(strings.Join(c.Env, " "), "FSNSUITE_PERF_SHARING=/results/sharing-chunks.txt") {
		t.Errorf("sharing: %s %s %v append %q env %q", accel, mode, err, c.ExtraAppend, c.Env)
	}
	c.sharingOut = "/w/sharing-plugin.txt"
	args := strings.Join(c.qemuArgs(accel, "/initrd"), " ")
	if !strings.Contains(args, "-accel tcg,thread=single -icount shift=0,sleep=off -plugin file="+so+",out=/w/sharing-plugin.txt -cpu max") {
		t.Errorf("sharing qemu args: %s", args)
	}
	// The isolation: vCPU 0 added for the rest of the guest, the measured
	// vCPUs 1..N tickless and free of device interrupts, the engine told
	// which they are, GOMAXPROCS above the one P a single-CPU process gets.
	if !strings.Contains(args, "-smp 3,sockets=3,cores=1,threads=1") {
		t.Errorf("sharing qemu args: %s, want -smp 3 (2 measured vCPUs and vCPU 0)", args)
	}
	if !strings.Contains(c.ExtraAppend, "nohz_full=1-2 irqaffinity=0 randomize_kstack_offset=off") {
		t.Errorf("sharing kernel command line %q", c.ExtraAppend)
	}
	env := strings.Join(c.Env, " ")
	for _, want := range []string{PerfCPUsEnv + "=1-2", "GOMAXPROCS=6", "GODEBUG=asyncpreemptoff=1"} {
		if !strings.Contains(env, want) {
			t.Errorf("sharing guest env %q, want %s", env, want)
		}
	}
	c = Config{Kernel: "/k", BinDir: "/b", SharingPlugin: so, CPUs: 16}
	if err := c.setDefaults(); err == nil || !strings.Contains(err.Error(), "more than the plugin's 16") {
		t.Errorf("16 measured vCPUs: %v, want a refusal naming the plugin's limit", err)
	}
	c = Config{Kernel: "/k", BinDir: "/b", SharingPlugin: "/a,b/fsnshare.so"}
	if err := c.setDefaults(); err == nil || !strings.Contains(err.Error(), "comma") {
		t.Errorf("comma: %v", err)
	}
	c = Config{Kernel: "/k", BinDir: "/b", SharingPlugin: so + ".missing", CPUs: 4}
	if err := c.setDefaults(); err == nil || !strings.Contains(err.Error(), "make sharing-plugin") {
		t.Errorf("missing plugin: %v", err)
	}
}

// A GODEBUG of the caller's is kept beside the sharing profile's.
func TestSharingGODEBUG(t *testing.T) {
	if got := sharingGODEBUG([]string{"A=1"}); got != SharingGODEBUG {
		t.Errorf("no GODEBUG: %q", got)
	}
	if got := sharingGODEBUG([]string{"GODEBUG=gctrace=1", "B=2"}); got != SharingGODEBUG+",gctrace=1" {
		t.Errorf("with GODEBUG=gctrace=1: %q", got)
	}
}
