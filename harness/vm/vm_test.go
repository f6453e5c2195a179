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
