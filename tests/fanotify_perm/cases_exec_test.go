package main

import (
	"bytes"
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// tinyProgram's image is a well-formed ELF executable for each architecture
// it knows: one PT_LOAD segment covering the file, the entry inside it.
func TestTinyProgramIsELF(t *testing.T) {
	for arch, machine := range map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64} {
		img, err := tinyProgram(arch, scriptStatus)
		if err != nil {
			t.Fatalf("%s: %v", arch, err)
		}
		f, err := elf.NewFile(bytes.NewReader(img))
		if err != nil {
			t.Fatalf("%s: not an ELF file: %v", arch, err)
		}
		if f.Type != elf.ET_EXEC || f.Machine != machine || f.Class != elf.ELFCLASS64 {
			t.Errorf("%s: type %v machine %v class %v", arch, f.Type, f.Machine, f.Class)
		}
		if len(f.Progs) != 1 || f.Progs[0].Type != elf.PT_LOAD || f.Progs[0].Filesz != uint64(len(img)) {
			t.Fatalf("%s: program headers %+v, want one PT_LOAD of the whole file (%d bytes)", arch, f.Progs, len(img))
		}
		p := f.Progs[0]
		if f.Entry < p.Vaddr || f.Entry >= p.Vaddr+p.Memsz {
			t.Errorf("%s: entry %#x outside the segment [%#x,%#x)", arch, f.Entry, p.Vaddr, p.Vaddr+p.Memsz)
		}
	}
	if _, err := tinyProgram("mips", scriptStatus); err == nil {
		t.Error("tinyProgram(mips): no error, want one (no such program is known)")
	}
}

// On this machine's architecture the program runs and exits with the status
// the cases check.
func TestTinyProgramRuns(t *testing.T) {
	img, err := tinyProgram(runtime.GOARCH, scriptStatus)
	if err != nil {
		t.Skipf("GOARCH %s: %v", runtime.GOARCH, err)
	}
	p := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(p, img, 0o755); err != nil {
		t.Fatal(err)
	}
	err = exec.Command(p).Run()
	if errors.Is(err, os.ErrPermission) {
		t.Skipf("cannot execute in the temporary directory (mounted noexec?): %v", err)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != scriptStatus {
		t.Fatalf("running the tiny program: %v, want exit status %d", err, scriptStatus)
	}
}
