package oom

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Raise raises a process's oom_score_adj and never lowers it; SetAdj clamps.
func TestRaise(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pid := cmd.Process.Pid
	base, err := Adj(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := Raise(pid, base+BinaryStep); err != nil {
		t.Fatal(err)
	}
	if got, _ := Adj(pid); got != min(base+BinaryStep, 1000) {
		t.Errorf("after Raise(%d): %d", base+BinaryStep, got)
	}
	if err := Raise(pid, base); err != nil {
		t.Fatal(err)
	}
	if got, _ := Adj(pid); got != min(base+BinaryStep, 1000) {
		t.Errorf("Raise lowered it to %d", got)
	}
	if err := SetAdj(pid, 5000); err != nil {
		t.Fatal(err)
	}
	if got, _ := Adj(pid); got != 1000 {
		t.Errorf("SetAdj(5000): %d, want 1000", got)
	}
}

// The OOM kill counter is read where a memory cgroup has one; a watch over
// a counter file says "killed by the OOM killer" only when it rose.
func TestKillsAndWatch(t *testing.T) {
	if n, file, ok := Kills(0); ok {
		t.Logf("oom_kill %d in %s", n, file)
		if _, err := os.Stat(file); err != nil || n < 0 {
			t.Errorf("Kills: %d from %s: %v", n, file, err)
		}
	} else {
		t.Log("no memory cgroup counter here")
	}
	f := filepath.Join(t.TempDir(), "memory.events")
	os.WriteFile(f, []byte("oom 0\noom_kill 3\n"), 0o644)
	w := WatchFile(f)
	if got := w.Killed(); got != "" {
		t.Errorf("unchanged count: %q", got)
	}
	os.WriteFile(f, []byte("oom 1\noom_kill 4\n"), 0o644)
	if got, want := w.Killed(), "killed by the OOM killer (oom_kill 3 -> 4 in "+f+")"; got != want {
		t.Errorf("Killed() = %q, want %q", got, want)
	}
	if got := WatchFile(filepath.Join(t.TempDir(), "none")).Killed(); got != "" {
		t.Errorf("no counter: %q", got)
	}
}
