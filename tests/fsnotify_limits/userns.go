package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/reexec"
)

// roleCreator is the reexec role of the process that creates the child's user
// namespace: it runs as an idle uid (idleUID) and starts the child (roleChild,
// with its own arguments) in a new user namespace that maps root to itself.
const roleCreator = "limits_creator"

// exitNoUserns is the creator's exit status when it may not create a user
// namespace; its stderr then names the errno.
const exitNoUserns = 86

// errNoUnprivUserns: the idle uid cannot do its part here: an unprivileged user
// may not create a user namespace, or may not execute this binary (built with
// a umask that leaves others no x bit).
var errNoUnprivUserns = errors.New("the idle uid cannot create the namespace")

// idleBase is where idleUID starts looking: far above the uids and the
// subordinate ranges (/etc/subuid) that distributions hand out.
const idleBase = 0x7e000000

// idleUID returns a uid that no process on the machine runs as (no real,
// effective, saved or filesystem uid in /proc/*/status), picked from a range
// that depends on this process's pid so that two suites running at once do not
// share one.
func idleUID() (uint32, error) {
	used := map[uint32]bool{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, fmt.Errorf("idle uid: %w", err)
	}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue // the process has gone
		}
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
				for _, f := range strings.Fields(rest) {
					if u, err := strconv.ParseUint(f, 10, 32); err == nil {
						used[uint32(u)] = true
					}
				}
			}
		}
	}
	start := uint32(idleBase) + uint32(os.Getpid()%65536)*16
	for u := start; u < start+1024; u++ {
		if !used[u] {
			return u, nil
		}
	}
	return 0, fmt.Errorf("idle uid: every uid in [%d, %d) is in use", start, start+1024)
}

// runUnderIdleUID runs the child with args through a creator running as an
// idle uid, with dir as descriptor 3 of both; it returns the child's stdout and
// stderr. errNoUnprivUserns (wrapped) says the creator could not make the user
// namespace.
func runUnderIdleUID(dir *os.File, args []string) (out, errOut []byte, err error) {
	uid, err := idleUID()
	if err != nil {
		return nil, nil, err
	}
	// The creator execs /proc/self/exe: the magic link jumps to the binary
	// without searching its directories, so only the binary's own x bit
	// counts (go build makes it 0755).
	cmd := reexec.Command(roleCreator, "", args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: &syscall.Credential{Uid: uid, Gid: uid, Groups: []uint32{}},
		Pdeathsig:  syscall.SIGKILL,
	}
	cmd.ExtraFiles = []*os.File{dir}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	var xe *exec.ExitError
	if errors.As(err, &xe) && xe.ExitCode() == exitNoUserns {
		return nil, e.Bytes(), fmt.Errorf("uid %d: %s: %w", uid, strings.TrimSpace(e.String()), errNoUnprivUserns)
	}
	if errors.Is(err, unix.EACCES) {
		return nil, e.Bytes(), fmt.Errorf("uid %d: exec %s: %v: %w", uid, os.Args[0], err, errNoUnprivUserns)
	}
	if err != nil {
		return o.Bytes(), e.Bytes(), fmt.Errorf("creator as uid %d: %w", uid, err)
	}
	return o.Bytes(), e.Bytes(), nil
}

// runUnderRoot runs the child with args in a user namespace that root creates
// (root mapped to root), with dir as descriptor 3.
func runUnderRoot(dir *os.File, args []string) (out, errOut []byte, err error) {
	cmd := reexec.Command(roleChild, "", args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  unix.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}},
		Pdeathsig:   syscall.SIGKILL,
	}
	cmd.ExtraFiles = []*os.File{dir}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.Bytes(), e.Bytes(), err
}

// runCreator is the creator's main: as the idle uid, start the child in a new
// user namespace mapping root to this uid (and gid; setgroups denied, as
// user_namespaces(7) requires of an unprivileged gid_map writer), pass on its
// output and exit with its status.
func runCreator(args []string) int {
	uid, gid := os.Getuid(), os.Getgid()
	cmd := reexec.Command(roleChild, "", args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:                 unix.CLONE_NEWUSER,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}},
		GidMappingsEnableSetgroups: false,
		Pdeathsig:                  syscall.SIGKILL,
	}
	cmd.ExtraFiles = []*os.File{os.NewFile(3, "dir")}
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		var en unix.Errno
		if errors.As(err, &en) && (en == unix.EPERM || en == unix.EACCES) {
			fmt.Fprintf(os.Stderr, "clone(CLONE_NEWUSER) as uid %d: %s\n", uid, unix.ErrnoName(en))
			return exitNoUserns
		}
		fmt.Fprintf(os.Stderr, "start the child: %v\n", err)
		return 1
	}
	if err := cmd.Wait(); err != nil {
		var xe *exec.ExitError
		if errors.As(err, &xe) {
			return xe.ExitCode()
		}
		fmt.Fprintf(os.Stderr, "wait for the child: %v\n", err)
		return 1
	}
	return 0
}
