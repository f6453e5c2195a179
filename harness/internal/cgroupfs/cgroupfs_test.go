package cgroupfs

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// This process's cgroup v2 directory lists this process in cgroup.procs.
func TestDirHoldsThisProcess(t *testing.T) {
	dir, mnt, ok := Dir(0, V2)
	if !ok {
		t.Skip("no cgroup v2 hierarchy mounted here that shows this process's cgroup")
	}
	if !strings.HasPrefix(dir, mnt) {
		t.Fatalf("Dir = %s, not below its mount %s", dir, mnt)
	}
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		t.Fatalf("%v", err)
	}
	if !strings.Contains("\n"+string(b), "\n"+strconv.Itoa(os.Getpid())+"\n") {
		t.Errorf("%s/cgroup.procs does not list pid %d", dir, os.Getpid())
	}
	if d, _, ok := Dir(1<<30, V2); ok {
		t.Errorf("Dir of a pid that does not exist = %s", d)
	}
}

func TestHasWord(t *testing.T) {
	for list, want := range map[string]bool{"rw,memory": true, "rw,memory_x": false, "pids": false, "memory": true} {
		if hasWord(list, "memory") != want {
			t.Errorf("hasWord(%q, memory) != %v", list, want)
		}
	}
}
