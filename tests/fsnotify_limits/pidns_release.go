package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/fanotify"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/reexec"
	"github.com/fsnsuite/fsnsuite/harness/setup"
)

// Reexec roles of event_pid_released: the holder runs in a new user
// namespace whose max_pid_namespaces it lowers to 1 and starts openers, each
// the first process of a new pid namespace.
const (
	rolePidnsHolder = "limits_pidns_holder"
	rolePidnsOpener = "limits_pidns_opener"
)

// pidnsReleaseWait bounds the wait for an unreferenced pid namespace to stop
// counting: the count drops in an RCU callback (kernel/pid_namespace.c
// destroy_pid_namespace: call_rcu(delayed_free_pidns), which calls
// dec_pid_namespaces), after the struct pid's own (delayed_put_pid). With
// lazy RCU (CONFIG_RCU_LAZY, Debian's 7.3) on offloaded CPUs a callback can
// wait about 10 s.
const pidnsReleaseWait = 15 * time.Second

var pidReleaseCase = harness.Case{
	Name: "event_pid_released",
	Doc: "a fanotify event's reference to its process is put when the event is read: the pid namespace of an exited " +
		"process whose event was queued stops counting against max_pid_namespaces once the event is read, and not before",
	Needs: []*feature.Feature{feature.Fanotify},
	Run:   eventPidReleased,
}

// eventPidReleased: fanotify_alloc_event (fs/notify/fanotify/fanotify.c)
// keeps a reference to the struct pid of the process that caused the event
// (event->pid = get_pid(...): fanotify(7)'s pid field and FAN_REPORT_PIDFD's
// pidfd are made from it when the event is read, after the process may have
// exited), and fanotify_free_event puts it (put_pid) when the event is freed:
// by fanotify_read once it is copied to the reader. A struct pid holds its pid
// namespace (alloc_pid: get_pid_ns; put_pid: put_pid_ns), and a pid namespace
// counts against its creator's max_pid_namespaces (user_namespaces(7)'s
// /proc/sys/user limits, since 4.9: inc_pid_namespaces in
// create_pid_namespace, ENOSPC past it) until it is freed. So in a user
// namespace whose max_pid_namespaces is 1, a process that was the first of
// its own pid namespace, opened a marked file and exited leaves that
// namespace counted while its event is queued (a second one is ENOSPC), and
// no longer once the event has been read. A reference never put keeps it
// counted for good. The control: a process in such a namespace that caused
// no event must leave it uncounted once it exits (else the case is
// undecided).
func eventPidReleased(t *harness.T) {
	marked := t.Path("marked")
	unmarked := t.Path("unmarked")
	setup.Touch(t, marked)
	setup.Touch(t, unmarked)
	g := t.Fanotify(unix.FAN_CLASS_NOTIF|unix.FAN_NONBLOCK, unix.O_RDONLY)
	if err := g.Add(0, unix.FAN_OPEN, marked); err != nil {
		t.Fatalf("%v", err)
	}
	h := startPidnsHolder(t)
	if r := h.ask("limit"); r != "ok" {
		t.Skipf("cannot lower max_pid_namespaces in a new user namespace (user_namespaces(7), 4.9): %s", r)
	}
	// Until a second pid namespace can be made, or pidnsReleaseWait passes.
	freed := func() (bool, time.Duration) {
		start := time.Now()
		for {
			r := h.ask("try")
			switch {
			case r == "ok":
				return true, time.Since(start)
			case r != "enospc":
				t.Fatalf("holder: %s", r)
			case time.Since(start) > pidnsReleaseWait:
				return false, time.Since(start)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	run := func(path string) string {
		t.Helper()
		r := h.ask("run " + path)
		pid, ok := strings.CutPrefix(r, "ok ")
		if r == "enospc" {
			t.Skipf("undecided: no new pid namespace could be made for %v at max_pid_namespaces 1: the last one made (released without any event) still counts", pidnsReleaseWait)
		}
		if !ok {
			t.Fatalf("holder: opening %s in a new pid namespace: %s", path, r)
		}
		return pid
	}
	run(unmarked)
	if ok, w := freed(); !ok {
		t.Skipf("undecided: the pid namespace of an exited process that caused no event still counts %v after it exited (a second one is ENOSPC at max_pid_namespaces 1): something else holds it here", w.Round(time.Millisecond))
	}
	pid := run(marked)
	if r := h.ask("try"); r != "enospc" {
		t.Skipf("undecided: with the event of an exited process queued, a second pid namespace is %q at max_pid_namespaces 1, not ENOSPC: the queued event does not keep that process's pid namespace here, so its release cannot be seen", r)
	}
	evs, err := g.Drain()
	defer fanotify.CloseEventFds(evs)
	if err != nil {
		t.Fatalf("%v", err)
	}
	var p int
	fmt.Sscan(pid, &p)
	did := fmt.Sprintf("FAN_OPEN on marked; process %d, first of a new pid namespace, opens marked and exits", p)
	if !expect.Fanotify(t, did, evs, []fanotify.Event{{Mask: unix.FAN_OPEN, Pid: int32(p), Path: marked}}) {
		return
	}
	if ok, w := freed(); !ok {
		t.Errorf("%s; the event read: its pid namespace still counts %v later (a second one is ENOSPC at max_pid_namespaces 1), while the control's was released: the event's reference to the process's struct pid was not put (fanotify_free_event: put_pid), and a struct pid holds its pid namespace", did, w.Round(time.Millisecond))
	} else {
		t.Logf("%s: its pid namespace counted while the event was queued, and was released %v after the event was read", did, w.Round(time.Millisecond))
	}
}

// pidnsHolder is the holder process and its command pipe.
type pidnsHolder struct {
	t   *harness.T
	in  io.WriteCloser
	out *bufio.Scanner
}

// startPidnsHolder starts the holder in a new user namespace mapping root to
// root (so it keeps this process's access to the files); it skips the case
// where user namespaces cannot be made.
func startPidnsHolder(t *harness.T) *pidnsHolder {
	t.Helper()
	cmd := reexec.Command(rolePidnsHolder, "")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}},
		Pdeathsig:   syscall.SIGKILL,
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatalf("holder: %v", err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("holder: %v", err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EUSERS) {
			t.Skipf("cannot create a user namespace (CONFIG_USER_NS, user.max_user_namespaces): %v", err)
		}
		t.Fatalf("holder: %v", err)
	}
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return &pidnsHolder{t: t, in: in, out: bufio.NewScanner(outPipe)}
}

// ask sends one command and returns the holder's one-line reply.
func (h *pidnsHolder) ask(cmd string) string {
	h.t.Helper()
	if _, err := fmt.Fprintln(h.in, cmd); err != nil {
		h.t.Fatalf("holder: %s: %v", cmd, err)
	}
	if !h.out.Scan() {
		h.t.Fatalf("holder: %s: no reply (%v)", cmd, h.out.Err())
	}
	return h.out.Text()
}

// runPidnsHolder serves the holder's commands, one reply line each:
//   - limit: write 1 to this user namespace's max_pid_namespaces;
//   - run PATH: start an opener of PATH in a new pid namespace (retrying
//     while a namespace made before still counts) and wait for it: "ok PID";
//   - try: start an opener of nothing in a new pid namespace once: "ok", or
//     "enospc" when the limit refuses it.
func runPidnsHolder([]string) int {
	in := bufio.NewScanner(os.Stdin)
	opener := func(path string) (int, error) {
		cmd := reexec.Command(rolePidnsOpener, "", path)
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID, Pdeathsig: syscall.SIGKILL}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		return cmd.Process.Pid, cmd.Wait()
	}
	for in.Scan() {
		cmd, arg, _ := strings.Cut(in.Text(), " ")
		var reply string
		switch cmd {
		case "limit":
			reply = "ok"
			if err := os.WriteFile("/proc/sys/user/max_pid_namespaces", []byte("1"), 0); err != nil {
				reply = err.Error()
			}
		case "run":
			start := time.Now()
			for {
				pid, err := opener(arg)
				if errors.Is(err, unix.ENOSPC) && time.Since(start) < pidnsReleaseWait {
					time.Sleep(20 * time.Millisecond)
					continue
				}
				switch {
				case err == nil:
					reply = fmt.Sprintf("ok %d", pid)
				case errors.Is(err, unix.ENOSPC):
					reply = "enospc"
				default:
					reply = err.Error()
				}
				break
			}
		case "try":
			_, err := opener("")
			switch {
			case err == nil:
				reply = "ok"
			case errors.Is(err, unix.ENOSPC):
				reply = "enospc"
			default:
				reply = err.Error()
			}
		default:
			reply = "unknown command " + cmd
		}
		fmt.Println(reply)
	}
	return 0
}

// runPidnsOpener opens and closes its argument (if any) read-only.
func runPidnsOpener(args []string) int {
	if len(args) == 1 && args[0] != "" {
		fd, err := unix.Open(args[0], unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			fmt.Fprintln(os.Stderr, "open:", err)
			return 1
		}
		unix.Close(fd)
	}
	return 0
}
