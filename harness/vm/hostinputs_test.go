package vm

import (
	"os"
	"path/filepath"
	"testing"
)

// HostInputs names the qemu Run would start (symlinks resolved) and the
// host files it would put in the guest besides the suite, and writes
// nothing (harness/patchcheck keys its cache of runs on them).
func TestHostInputs(t *testing.T) {
	dir := t.TempDir()
	qemu := filepath.Join(dir, "qemu-real")
	if err := os.WriteFile(qemu, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(qemu, filepath.Join(dir, "qemu-link")); err != nil {
		t.Fatal(err)
	}
	busybox := filepath.Join(dir, "busybox")
	if err := os.WriteFile(busybox, []byte("not really busybox"), 0o755); err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadDir(wd)
	if err != nil {
		t.Fatal(err)
	}
	got, files, err := Config{QEMU: filepath.Join(dir, "qemu-link"), Busybox: busybox}.HostInputs()
	if err != nil {
		t.Fatal(err)
	}
	if got != qemu {
		t.Errorf("qemu = %s, want %s (the link resolved)", got, qemu)
	}
	seen := map[string]string{}
	for _, f := range files {
		seen[f.Guest] = f.Host
	}
	if seen["/bin/busybox"] != busybox {
		t.Errorf("/bin/busybox from %q, want %s; all: %v", seen["/bin/busybox"], busybox, files)
	}
	if p, err := lookPath("mke2fs"); err == nil {
		real, _ := filepath.EvalSymlinks(p)
		if seen["/usr/sbin/mke2fs"] != real {
			t.Errorf("/usr/sbin/mke2fs from %q, want %s", seen["/usr/sbin/mke2fs"], real)
		}
	}
	after, err := os.ReadDir(wd)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Errorf("HostInputs wrote into %s: %d entries before, %d after", wd, len(before), len(after))
	}
	if _, _, err := (Config{QEMU: filepath.Join(dir, "no-qemu")}).HostInputs(); err == nil {
		t.Error("a missing qemu gave no error")
	}
}
