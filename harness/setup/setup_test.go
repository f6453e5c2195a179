package setup

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestFindProgram(t *testing.T) {
	usr, bin := t.TempDir(), t.TempDir()
	write := func(dir, name string, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(usr, "both", 0o755)
	write(bin, "both", 0o755)
	write(bin, "binonly", 0o755)
	write(usr, "noexec", 0o644)
	write(bin, "noexec", 0o755)
	if err := os.Mkdir(filepath.Join(usr, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(bin, "binonly"), filepath.Join(usr, "link")); err != nil {
		t.Fatal(err)
	}
	dirs := []string{usr, bin}
	for _, c := range []struct {
		name string
		want string // "" for none
	}{
		{"both", filepath.Join(usr, "both")},       // the first directory wins
		{"binonly", filepath.Join(bin, "binonly")}, // the second when the first lacks it
		{"noexec", filepath.Join(bin, "noexec")},   // a file without an execute bit is passed over
		{"dir", ""},                                // a directory is no program
		{"link", filepath.Join(usr, "link")},       // a symlink to a program counts (busybox applets)
		{"missing", ""},                            // nowhere
	} {
		got, tried := findProgram(c.name, dirs)
		if got != c.want {
			t.Errorf("findProgram(%q) = %q, want %q", c.name, got, c.want)
		}
		if c.want == "" && !slices.Equal(tried, []string{filepath.Join(usr, c.name), filepath.Join(bin, c.name)}) {
			t.Errorf("findProgram(%q) tried %q, want both directories in order", c.name, tried)
		}
	}
}

// fakeTB records a skip; Program's other calls need nothing.
type fakeTB struct {
	TB
	skipped string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Skipf(format string, args ...any) {
	f.skipped = format
	if len(args) > 0 {
		f.skipped = fmt.Sprintf(format, args...)
	}
	panic(skipped{})
}

type skipped struct{}

func TestProgramSkipNamesPaths(t *testing.T) {
	old := programDirs
	defer func() { programDirs = old }()
	programDirs = []string{"/nonexistent-usr-bin", "/nonexistent-bin"}
	f := &fakeTB{}
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(skipped); !ok {
					panic(r)
				}
			}
		}()
		Program(f, "sleep")
		t.Errorf("Program returned without skipping")
	}()
	want := "no sleep(1) to execute (/nonexistent-usr-bin/sleep, /nonexistent-bin/sleep)"
	if f.skipped != want {
		t.Errorf("skip reason %q, want %q", f.skipped, want)
	}
}
