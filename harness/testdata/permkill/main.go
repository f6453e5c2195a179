// Command permkill is a test binary for harness/perm_kill_test.go. Its one
// case starts cat(1) on a file that carries a FAN_OPEN_PERM mark, reads the
// permission event so that cat is blocked in open(2), prints "BLOCKED" and
// never answers. The harness tests then kill this binary with SIGKILL, or let
// its watchdog fire (-timeout), and check that cat is released: it prints the
// file's content ("RELEASED") and exits by itself; the case then blames the
// kernel, as a real case would, in a log the watchdog has closed by then.
// cat is started without a parent-death signal, so it outlives this binary
// and only the release of its permission event can let it finish. It prints
// to stderr, which reaches the binary's stderr directly: the case process's
// stdout is a pipe to its supervisor, which a SIGKILL to the binary closes.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
)

func main() {
	harness.Main(harness.Suite{
		Name: "permkill",
		Doc:  "blocks a process on a permission event and never answers",
		Cases: []harness.Case{{
			Name: "blocked",
			Doc:  "cat(1) blocked on FAN_OPEN_PERM, never answered",
			Run:  blocked,
		}},
	})
}

func blocked(t *harness.T) {
	p := t.Path("f")
	if err := os.WriteFile(p, []byte("RELEASED\n"), 0o644); err != nil {
		t.Fatalf("setup: %v", err)
	}
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Fatalf("need cat(1): %v", err)
	}
	g := t.Fanotify(unix.FAN_CLASS_CONTENT, unix.O_RDONLY|unix.O_CLOEXEC)
	if err := g.Add(0, unix.FAN_OPEN_PERM, p); err != nil {
		t.Fatalf("%v", err)
	}
	cmd := exec.Command(cat, p)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start cat: %v", err)
	}
	// Reap cat should it finish while this process lives: only the release
	// of its event lets it, so a return is reported as the kernel's doing,
	// the way fanotify_perm's cases do; after a watchdog's release that
	// report must not reach the case's log (caseProcess.runOne freezes it).
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	evs, err := g.ReadN(1, time.Now().Add(10*time.Second))
	if err != nil {
		t.Fatalf("no permission event from cat: %v", err)
	}
	if evs[0].Pid != int32(cmd.Process.Pid) {
		t.Fatalf("event pid %d, want cat's %d", evs[0].Pid, cmd.Process.Pid)
	}
	fmt.Printf("BLOCKED pid=%d\n", cmd.Process.Pid)
	<-exited
	t.Fatalf("cat (pid %d) returned although its permission event is not answered", cmd.Process.Pid)
}
