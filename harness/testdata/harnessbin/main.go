// Command harnessbin is a test binary for the harness's own tests: each case
// exercises one harness behaviour (pass, skip, failure, hang, a fixture held
// while the process is killed). The harness tests build and run it.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/envfault"
	"github.com/fsnsuite/fsnsuite/harness/fixture"
	"github.com/fsnsuite/fsnsuite/harness/limits"
)

func main() {
	harness.Main(harness.Suite{
		Name: "harnessbin",
		Doc:  "exercises the harness itself",
		// CaseFunc sees parsed flags: -v adds a case.
		CaseFunc: func() []harness.Case {
			if !harness.Opts.Verbose {
				return nil
			}
			return []harness.Case{{Name: "verbose_only", Doc: "exists with -v", Run: func(t *harness.T) {}}}
		},
		Cases: []harness.Case{
			{Name: "pass", Doc: "passes", Run: func(t *harness.T) {}},
			{Name: "skip", Doc: "skips with a reason", Run: func(t *harness.T) { t.Skipf("FAN_TEST not supported (EINVAL)") }},
			{Name: "fail", Doc: "fails with a hint", Fix: &harness.Fix{Commit: "0123456789abcdef", Subject: "fsnotify: a fix"},
				Run: func(t *harness.T) { t.Errorf("want 1, got 2"); t.KernelLacks(t.CaseFix()) }},
			{Name: "fail_not_prefix", Doc: "fails, but not the way a kernel without its fix would", Fix: &harness.Fix{Commit: "0123456789abcdef", Subject: "fsnotify: a fix"},
				Run: func(t *harness.T) { t.Errorf("want 1, got 3") }},
			{Name: "subtests_skipped_early", Doc: "skips before its declared subtests run", Subtests: []string{"one", "two"},
				Run: func(t *harness.T) { t.Skipf("FAN_TEST not supported (EINVAL)") }},
			{Name: "subtests", Doc: "nests", Subtests: []string{"one", "two"}, Run: func(t *harness.T) {
				t.Run("one", func(t *harness.T) {})
				t.Run("two", func(t *harness.T) { t.Skipf("reason two") })
			}},
			{Name: "sysctl", Doc: "raises fs.inotify.max_user_watches by one, for the case only", Run: func(t *harness.T) {
				old, err := fixture.SysctlInt("fs.inotify.max_user_watches")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := t.SetSysctl("fs.inotify.max_user_watches", strconv.Itoa(old+1)); err != nil {
					t.Fatal(err)
				}
				if now, _ := fixture.SysctlInt("fs.inotify.max_user_watches"); now != old+1 {
					t.Errorf("sysctl is %d after SetSysctl, want %d", now, old+1)
				}
			}},
			{Name: "hang", Doc: "blocks until the watchdog fires", Run: func(t *harness.T) { select {} }},
			{Name: "hold", Doc: "holds ext4, tmpfs, a temp dir and an actor, then waits to be killed",
				Filesystems: []string{"ext4"},
				Run: func(t *harness.T) {
					tmp := t.FS()
					dir := t.TempDir()
					a := t.Actor()
					fmt.Fprintf(os.Stderr, "READY dev=%s root=%s tmp=%s actor=%d pid=%d\n", tmp.Device, tmp.Root, dir, a.Pid(), os.Getpid())
					time.Sleep(time.Minute)
				}},
			{Name: "crash", Doc: "crashes the process from a goroutine of its own", Run: func(t *harness.T) {
				go func() { panic("harnessbin: deliberate crash") }()
				select {}
			}},
			{Name: "crash_in_subtest", Doc: "crashes the process in its third declared subtest", Subtests: []string{"one", "two", "three", "four"},
				Run: func(t *harness.T) {
					t.Run("one", func(t *harness.T) {})
					t.Run("two", func(t *harness.T) { t.Skipf("reason two") })
					t.Run("three", func(t *harness.T) {
						go func() { panic("harnessbin: deliberate crash in a subtest") }()
						select {}
					})
					t.Run("four", func(t *harness.T) {})
				}},
			{Name: "ignore_sigterm", Doc: "ignores SIGTERM and hangs", Run: func(t *harness.T) {
				signal.Ignore(syscall.SIGTERM)
				fmt.Fprintf(os.Stderr, "IGNORING pid=%d\n", os.Getpid())
				select {}
			}},
			{Name: "stop_self", Doc: "SIGSTOPs its own case process: only the supervisor can end it", Run: func(t *harness.T) {
				syscall.Kill(os.Getpid(), syscall.SIGSTOP)
				select {}
			}},
			{Name: "stop_in_subtest", Doc: "SIGSTOPs its own case process in its second declared subtest", Subtests: []string{"one", "two", "three"},
				Run: func(t *harness.T) {
					t.Run("one", func(t *harness.T) {})
					t.Run("two", func(t *harness.T) {
						syscall.Kill(os.Getpid(), syscall.SIGSTOP)
						select {}
					})
					t.Run("three", func(t *harness.T) {})
				}},
			{Name: "hang_in_subtest", Doc: "blocks in its second declared subtest until the watchdog fires", Subtests: []string{"one", "two", "three"},
				Run: func(t *harness.T) {
					t.Run("one", func(t *harness.T) {})
					t.Run("two", func(t *harness.T) { select {} })
					t.Run("three", func(t *harness.T) {})
				}},
			{Name: "chatty", Doc: "logs 256 KiB (with -v), more than a pipe holds", Run: func(t *harness.T) {
				for i := range 1024 {
					t.Logf("line %04d %s", i, strings.Repeat("x", 240))
				}
			}},
			{Name: "after", Doc: "passes after the cases that hang or crash", Run: func(t *harness.T) {}},
			{Name: "undeclared_subtest", Doc: "runs a subtest without declaring it", Run: func(t *harness.T) {
				t.Run("one", func(t *harness.T) {})
			}},
			{Name: "all_subtests_skip", Doc: "every subtest skips", Subtests: []string{"one", "two"}, Run: func(t *harness.T) {
				t.Run("one", func(t *harness.T) { t.Skipf("reason one") })
				t.Run("two", func(t *harness.T) { t.Skipf("reason one") })
			}},
			// Environment faults (harness/envfault): the machine, not the
			// kernel, stopped the case.
			{Name: "env_setup_enospc", Doc: "a setup step meets ENOSPC", Run: func(t *harness.T) {
				t.Fatalf("setup: %v", &os.PathError{Op: "mkdir", Path: "/w/d", Err: syscall.ENOSPC})
			}},
			{Name: "env_loop", Doc: "no free loop device", Run: func(t *harness.T) {
				t.Fatalf("filesystem ext4: %v", envfault.New("ext4: no free loop device", "LOOP_CTL_GET_FREE", syscall.ENOSPC))
			}},
			{Name: "env_limit_errorf", Doc: "an Errorf with a reached limit, then nothing else fails", Run: func(t *harness.T) {
				t.Errorf("inotify_add_watch: %v", &limits.Error{Call: "inotify_add_watch(f)", Sysctl: "fs.inotify.max_user_watches", Value: "1", Need: "one more watch", Err: syscall.ENOSPC})
				t.Logf("the case went on")
			}},
			{Name: "env_limit_errorf_then_fail", Doc: "an Errorf with a reached limit, then a real failure", Run: func(t *harness.T) {
				t.Errorf("inotify_add_watch: %v", &limits.Error{Call: "inotify_add_watch(f)", Sysctl: "fs.inotify.max_user_watches", Value: "1", Need: "one more watch", Err: syscall.ENOSPC})
				t.Errorf("want 1, got 2")
			}},
			{Name: "env_subtests", Doc: "one subtest passes, one meets an environment fault", Subtests: []string{"one", "two"}, Run: func(t *harness.T) {
				t.Run("one", func(t *harness.T) {})
				t.Run("two", func(t *harness.T) { t.Fatalf("setup: %v", &os.PathError{Op: "open", Path: "/w/f", Err: syscall.EROFS}) })
			}},
			{Name: "env_subtests_early", Doc: "an environment fault before its subtests", Subtests: []string{"one", "two"}, Run: func(t *harness.T) {
				t.Fatalf("%v", envfault.New("ext4: no free loop device", "LOOP_CTL_GET_FREE", syscall.ENOSPC))
			}},
			// Not environment faults: the errno is the behaviour under test,
			// or not the machine's.
			{Name: "env_not_setup", Doc: "ENOSPC from the call under test", Run: func(t *harness.T) {
				t.Fatalf("fanotify_mark: %v", syscall.ENOSPC)
			}},
			{Name: "env_setup_eexist", Doc: "a setup step meets EEXIST", Run: func(t *harness.T) {
				t.Fatalf("setup: %v", &os.PathError{Op: "mkdir", Path: "/w/d", Err: syscall.EEXIST})
			}},
		},
	})
}
