package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// errNoUnprivUserns: the idle uid cannot do its part here: no unused uid is
// mapped, the uid cannot be set or may not execute this binary (built with a
// umask that leaves others no x bit), an unprivileged user may not create a
// user namespace, or may not use its capabilities in it (Ubuntu's AppArmor
// unprivileged_userns profile: the child cannot set the limit).
var errNoUnprivUserns = errors.New("the idle uid cannot do its part")

// idleBase is where idleUID starts looking: far above the uids and the
// subordinate ranges (/etc/subuid) that distributions hand out.
const idleBase = 0x7e000000

// idleUID returns a uid that no process on the machine runs as (no real,
// effective, saved or filesystem uid in /proc/*/status) and that this
// process's user namespace maps as a uid and as a gid (user_namespaces(7): a
// uid outside uid_map cannot be set; a container often maps 0-65535 only).
// It is picked from a range that depends on this process's pid, far above the
// uids and subordinate ranges that distributions hand out, where that range is
// mapped; else from the top of the mapped ids down.
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
	uids, err := idMap("/proc/self/uid_map")
	if err != nil {
		return 0, err
	}
	gids, err := idMap("/proc/self/gid_map")
	if err != nil {
		return 0, err
	}
	ok := func(u uint64) bool {
		// 65534 and 65535: the overflow uid shown for unmapped ids, and
		// (uid_t)-1 in 16-bit days; (uid_t)-1 itself is never a uid.
		return u > 0 && u < 1<<32-1 && u != 65534 && u != 65535 &&
			!used[uint32(u)] && inMap(uids, u) && inMap(gids, u)
	}
	start := uint64(idleBase) + uint64(os.Getpid()%65536)*16
	for u := start; u < start+1024; u++ {
		if ok(u) {
			return uint32(u), nil
		}
	}
	tried := 0
	for i := len(uids) - 1; i >= 0 && tried < 1<<16; i-- {
		for u := uids[i][1] - 1; u >= uids[i][0] && u > 0 && tried < 1<<16; u-- {
			tried++
			if ok(u) {
				return uint32(u), nil
			}
		}
	}
	return 0, fmt.Errorf("idle uid: none unused and mapped (uid_map %v, gid_map %v)", uids, gids)
}

// idMap reads a uid_map or gid_map: the ranges [first, end) of ids that this
// namespace maps, in ascending order.
func idMap(path string) ([][2]uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("idle uid: %w", err)
	}
	var r [][2]uint64
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		first, err1 := strconv.ParseUint(f[0], 10, 32)
		n, err2 := strconv.ParseUint(f[2], 10, 32)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("idle uid: %s: line %q", path, line)
		}
		r = append(r, [2]uint64{first, first + n})
	}
	slices.SortFunc(r, func(a, b [2]uint64) int { return cmp.Compare(a[0], b[0]) })
	return r, nil
}

func inMap(m [][2]uint64, id uint64) bool {
	for _, e := range m {
		if id >= e[0] && id < e[1] {
			return true
		}
	}
	return false
}

// runUnderIdleUID runs the child with args through a creator running as an
// idle uid, with dir as descriptor 3 of both; it returns the child's stdout and
// stderr. errNoUnprivUserns (wrapped) says the creator could not start (the
// uid could not be set, or the binary not executed as it) or could not make
// the user namespace (any errno of clone(CLONE_NEWUSER): root's own attempt
// then says whether user namespaces are available at all).
func runUnderIdleUID(dir *os.File, args []string) (out, errOut []byte, err error) {
	uid, err := idleUID()
	if err != nil {
		return nil, nil, fmt.Errorf("%v: %w", err, errNoUnprivUserns)
	}
	// The creator execs /proc/self/exe: the magic link jumps to the binary
	// without searching its directories, so only the binary's own x bit
	// counts (go build makes it 0755; under umask 077 the exec is EACCES).
	cmd := reexec.Command(roleCreator, "", args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: &syscall.Credential{Uid: uid, Gid: uid, Groups: []uint32{}},
		Pdeathsig:  syscall.SIGKILL,
	}
	cmd.ExtraFiles = []*os.File{dir}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("uid %d: start %s as that uid: %v: %w", uid, os.Args[0], err, errNoUnprivUserns)
	}
	err = cmd.Wait()
	var xe *exec.ExitError
	if errors.As(err, &xe) && xe.ExitCode() == exitNoUserns {
		return nil, e.Bytes(), fmt.Errorf("uid %d: %s: %w", uid, strings.TrimSpace(e.String()), errNoUnprivUserns)
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
		// Any errno: EPERM/EACCES (unprivileged user namespaces refused),
		// but also EINVAL (no CONFIG_USER_NS), ENOSPC (user.max_user_namespaces),
		// EUSERS (nesting): root's attempt then tells which.
		var en unix.Errno
		if errors.As(err, &en) {
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
