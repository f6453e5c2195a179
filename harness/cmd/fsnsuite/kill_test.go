package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

// TestMain lets a test start this test binary as the runner itself
// (FSNSUITE_TEST_AS_RUNNER=1), to signal it from outside.
func TestMain(m *testing.M) {
	if os.Getenv("FSNSUITE_TEST_AS_RUNNER") == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// A SIGKILLed runner takes its binaries with it (issue 14: they outlived
// it): each gets a parent-death signal.
func TestRunnerKilledTakesBinaries(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	dir := binDir(t, map[string]string{"sleeper": fmt.Sprintf("echo 1..1\necho $$ > %s\nexec sleep 60\n", pidFile)})
	cmd := exec.Command(os.Args[0], "-dir", dir, "-results", t.TempDir())
	cmd.Env = append(os.Environ(), "FSNSUITE_TEST_AS_RUNNER=1")
	assert.NilError(t, cmd.Start())
	var pid int
	for range 100 {
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	assert.Assert(t, pid > 0, "the binary never started")
	assert.NilError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	for range 50 {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && strings.Contains(string(stat), ") Z ") {
			return // dead, waiting for its reaper
		}
		time.Sleep(20 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	t.Fatalf("binary %d outlived the SIGKILLed runner by a second", pid)
}
