//go:build hostile

package hostile

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fsnsuite/fsnsuite/harness/internal/cgroupfs"
	"github.com/fsnsuite/fsnsuite/tap"
)

// The state-directory conditions (issue 33 items 1, 2 and 5) attack the
// files root keeps to coordinate sysctl changes between fsnsuite processes.
// Each attack by a user runs inside private mount, UTS and network
// namespaces (unshare) with fresh tmpfs mounts on /run, /run/lock, /dev/shm
// and /var/tmp made like Debian's (/run 0755, the others sticky 1777), so
// the host's directories, hostname and network sysctls are never touched:
// the user (uid 65534, setpriv) plants files in the namespace's tmpfs, and
// root runs the binary there.

// nsSetup is the shell prelude of a namespaced condition.
const nsSetup = `set -e
mount -t tmpfs -o mode=0755 hostile-run /run
mkdir /run/lock
mount -t tmpfs -o mode=1777 hostile-lock /run/lock
mount -t tmpfs -o mode=1777 hostile-shm /dev/shm
mount -t tmpfs -o mode=1777 hostile-vartmp /var/tmp
asuser() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
hostname hostile-ns
echo 0 > /proc/sys/net/ipv4/ip_forward
`

// inNamespace runs script (after nsSetup) with sh in private mount, UTS and
// network namespaces; positional parameters: $1 the binaries' directory, $2
// the condition's scratch directory. Everything it leaves running is in its
// process group, killed at its end.
func (h *h) inNamespace(limit time.Duration, script string) result {
	script = nsSetup + script + "\ntrap '' TERM; kill -TERM 0 2>/dev/null || true\nexit $rc\n"
	return h.run(limit, nil, "unshare", "-m", "-u", "-n", "--propagation", "private",
		"sh", "-c", script, "sh", h.bin, h.tmp)
}

// ranCase says what is wrong when r's stream has no passed create_in_dir.tmpfs
// (the case every namespaced condition runs).
func ranCase(r result) []string {
	return want(strings.Contains(r.stdout, "\nok 1 create_in_dir.tmpfs\n"), "exit: create_in_dir.tmpfs did not pass (exit %d): %q %q", r.code, r.stdout, r.stderr)
}

// marks returns the values of the "MARK key value" lines a script printed
// on stderr.
func marks(r result) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(r.stderr, "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "MARK" {
			m[f[1]] = strings.Join(f[2:], " ")
		}
	}
	return m
}

func stateDirConditions() []condition {
	return []condition{
		// (a) A user makes fsnsuite/sysctl.json first in every world-writable
		// directory, naming sysctls the suite never changes as holder-less
		// entries to restore: root must not apply them.
		{name: "statedir_planted_sysctls", run: func(h *h) []string {
			r := h.inNamespace(60*time.Second, `
json='{"kernel.hostname":{"Orig":"planted"},"net.ipv4.ip_forward":{"Orig":"1"}}'
for d in /run/lock /dev/shm /var/tmp; do
	asuser sh -c 'mkdir "$1/fsnsuite" && printf %s "$2" > "$1/fsnsuite/sysctl.json"' - "$d" "$json"
done
set +e
"$1/inotify_basic" -run '^create_in_dir'
rc=$?
echo "MARK hostname $(cat /proc/sys/kernel/hostname)" >&2
echo "MARK ip_forward $(cat /proc/sys/net/ipv4/ip_forward)" >&2
`)
			m := marks(r)
			p := append(audit(r), ranCase(r)...)
			p = append(p, want(r.code == 0, "exit: status %d, want 0 (stderr %q)", r.code, r.stderr)...)
			p = append(p, want(m["hostname"] == "hostile-ns", "false pass: root applied a planted sysctl.json: the namespace's hostname is %q (was hostile-ns)", m["hostname"])...)
			return append(p, want(m["ip_forward"] == "0", "false pass: root applied a planted sysctl.json: net.ipv4.ip_forward is %q (was 0)", m["ip_forward"])...)
		}},
		// (b) Symlinks planted where root opens its lock files and writes
		// its temp file: root neither creates nor overwrites their targets.
		{name: "statedir_planted_symlinks", run: func(h *h) []string {
			victim := filepath.Join(h.tmp, "victim")
			if err := os.WriteFile(victim, []byte("victim\n"), 0o644); err != nil {
				return []string{"setup: " + err.Error()}
			}
			created := filepath.Join(h.tmp, "created")
			cur, err := os.ReadFile("/proc/sys/fs/inotify/max_user_instances")
			if err != nil {
				return []string{"setup: " + err.Error()}
			}
			// A holder-less entry the suite could have written (the current
			// value: applying it changes nothing) makes root rewrite the state.
			json := fmt.Sprintf(`{"fs.inotify.max_user_instances":{"Orig":"%s"}}`, strings.TrimSpace(string(cur)))
			r := h.inNamespace(90*time.Second, `
victim="$2/victim"; created="$2/created"
last=$(cat /proc/sys/kernel/ns_last_pid)
for d in /run/lock /dev/shm /var/tmp; do
	asuser sh -c 'mkdir "$1/fsnsuite" && printf %s "$2" > "$1/fsnsuite/sysctl.json"' - "$d" '`+json+`'
	asuser ln -s "$victim" "$d/fsnsuite/sysctl.lock"
	asuser ln -s "$created" "$d/fsnsuite/lower.lock"
	asuser perl -e 'for ($ARGV[2]..$ARGV[2]+5000) { symlink($ARGV[0], "$ARGV[1]/sysctl.json.tmp.$_") or die "$!" }' "$victim" "$d/fsnsuite" "$last"
done
set +e
"$1/inotify_basic" -run '^create_in_dir'
rc=$?
`)
			p := append(audit(r), ranCase(r)...)
			p = append(p, want(r.code == 0, "exit: status %d, want 0 (stderr %q)", r.code, r.stderr)...)
			if b, err := os.ReadFile(victim); err != nil || string(b) != "victim\n" {
				p = append(p, fmt.Sprintf("false pass: root wrote through a planted symlink: the victim file holds %q (%v)", b, err))
			}
			if _, err := os.Lstat(created); err == nil {
				p = append(p, "false pass: root created a file through a planted lower.lock symlink: "+created)
			}
			return p
		}},
		// (c) A user takes an exclusive flock on every file under the
		// world-writable directories that it can read, after root made its
		// state files there: no case waits for it.
		{name: "statedir_user_holds_locks", run: func(h *h) []string {
			r := h.inNamespace(90*time.Second, `
"$1/inotify_basic" -run '^create_in_dir.tmpfs$' >/dev/null 2>&1 || true
n=0
for f in $(asuser find /run /dev/shm /var/tmp -type f -readable 2>/dev/null || true); do
	asuser flock -o -x "$f" sleep 60 </dev/null >/dev/null 2>&1 &
	n=$((n+1))
done
sleep 1
echo "MARK held $n" >&2
set +e
"$1/inotify_basic" -run '^create_in_dir' -timeout 10s
rc=$?
`)
			p := append(audit(r), ranCase(r)...)
			p = append(p, want(r.code == 0, "exit: status %d, want 0 with files locked by uid 65534 (stderr %q)", r.code, r.stderr)...)
			return append(p, want(!strings.Contains(r.stdout, "TIMEOUT"), "exit: a case ran out of time while uid 65534 held every file it could read (%s files)", marks(r)["held"])...)
		}},
		// (d) Another root process holds lower.lock past the bound: the case
		// is a skip naming the lock and its holder, not a kernel TIMEOUT.
		// Held in the namespace's own /run (both the state directory and
		// the one fb7ddc5 used), never the host's.
		{name: "statedir_root_holds_lower_lock", run: func(h *h) []string {
			r := h.inNamespace(90*time.Second, `
umask 077
mkdir /run/fsnsuite /run/lock/fsnsuite
: > /run/fsnsuite/lower.lock
: > /run/lock/fsnsuite/lower.lock
flock -x /run/fsnsuite/lower.lock flock -x /run/lock/fsnsuite/lower.lock sleep 40 </dev/null >/dev/null 2>&1 &
echo "MARK holder $!" >&2
sleep 1
set +e
"$1/inotify_basic" -run '^create_in_dir' -timeout 10s
rc=$?
`)
			holder := marks(r)["holder"]
			p := audit(r)
			p = append(p, want(r.code == 0 || r.code == 4, "exit: status %d, want 0 or 4 (a held lock is not a failure)", r.code)...)
			p = append(p, want(!strings.Contains(r.stdout, "TIMEOUT") && !strings.Contains(r.stdout, "not ok"), "exit: a held lock gave TIMEOUT or not ok: %q", r.stdout)...)
			var named []string
			for _, c := range cases(r) {
				if c.Status == tap.StatusSkip && strings.Contains(c.Reason, "lower.lock") && strings.Contains(c.Reason, "pid "+holder) {
					named = append(named, c.Name)
				}
			}
			return append(p, want(holder != "" && len(named) > 0,
				"unclear: no skip names lower.lock and its holder pid %s: %q", holder, r.stdout)...)
		}},
		// (e) A binary SIGKILLed mid-case under the runner: once the runner
		// has exited, the sysctl it raised is back and its memory cgroup is
		// gone (before: left until some later fsnsuite binary ran a case).
		{name: "statedir_killed_binary_restored", run: func(h *h) []string {
			before := sysctlNow()
			p := killMidCase(h, "perf_watch_churn", []string{"-perf"}, func() bool { return sysctlNow() != before }, "fs.inotify.max_user_instances raised")
			after := sysctlNow()
			p = append(p, want(after == before, "leftover: fs.inotify.max_user_instances is %s after the runner exited, was %s", after, before)...)
			if after != before {
				// Put the host back: the binary under test did not.
				os.WriteFile("/proc/sys/fs/inotify/max_user_instances", []byte(before), 0)
			}
			var killed int
			p = append(p, killMidCase(h, "fsnotify_limits", []string{"-case", "^kernel_memory_released_inotify_instance_watch_event$"}, func() bool {
				killed = 0
				for _, g := range memcgs() {
					if pid, ok := memcgPid(g); ok {
						killed = pid
						return true
					}
				}
				return false
			}, "a memory cgroup made")...)
			var left []string
			for _, g := range memcgs() {
				if pid, ok := memcgPid(g); ok && pid == killed {
					left = append(left, g)
					syscall.Rmdir(g) // the killed case's own group, emptied when it died
				}
			}
			return append(p, want(len(left) == 0, "leftover: memory cgroups of the killed fsnotify_limits after the runner exited: %v", left)...)
		}},
	}
}

func sysctlNow() string {
	b, _ := os.ReadFile("/proc/sys/fs/inotify/max_user_instances")
	return strings.TrimSpace(string(b))
}

// memcgs lists the memory cgroups named by the suite (memcg.StalePrefix)
// where memcg.Open makes them: in this process's own v1 memory cgroup (the
// runner's and its binaries'), or at the cgroup2 root.
func memcgs() []string {
	var globs []string
	if own, _, ok := cgroupfs.Dir(0, "memory"); ok {
		globs = append(globs, filepath.Join(own, "fsnsuite-memcg-*"))
	}
	if root := cgroupfs.RootMount(cgroupfs.V2); root != "" {
		globs = append(globs, filepath.Join(root, "fsnsuite-memcg-*"))
	}
	var all []string
	for _, g := range globs {
		m, _ := filepath.Glob(g)
		all = append(all, m...)
	}
	return all
}

// memcgPid is the pid in a group's name (fsnsuite-memcg-PID-name).
func memcgPid(dir string) (int, bool) {
	rest := strings.TrimPrefix(filepath.Base(dir), "fsnsuite-memcg-")
	n, err := strconv.Atoi(strings.SplitN(rest, "-", 2)[0])
	return n, err == nil
}

// killMidCase runs binary alone under the runner, SIGKILLs the binary's
// process as soon as started() says its case changed the machine, and
// waits for the runner to exit.
func killMidCase(h *h, binary string, args []string, started func() bool, what string) []string {
	args = append([]string{"-run", "^" + binary + "$", "-results", filepath.Join(h.tmp, "results-"+binary)}, args...)
	var seen bool
	r, p := h.runDuring(180*time.Second, nil, func(runner int) []string {
		deadline := time.Now().Add(120 * time.Second)
		for time.Now().Before(deadline) && syscall.Kill(runner, 0) == nil {
			if started() {
				pids := childrenNamed(runner, binary)
				for _, pid := range pids {
					syscall.Kill(pid, syscall.SIGKILL)
				}
				seen = len(pids) > 0
				return nil
			}
			time.Sleep(5 * time.Millisecond)
		}
		return []string{"setup: " + binary + ": never saw " + what}
	}, h.binary("fsnsuite"), args...)
	p = append(p, want(!r.hung, "hang: the runner still ran after %.0fs", r.elapsed.Seconds())...)
	return append(p, want(seen, "setup: %s: never saw %s, or its process (exit %d)", binary, what, r.code)...)
}

// childrenNamed lists the children of parent whose comm is name (cut to
// the kernel's 15 bytes, TASK_COMM_LEN).
func childrenNamed(parent int, name string) []int {
	if len(name) > 15 {
		name = name[:15]
	}
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < open {
			continue
		}
		f := strings.Fields(s[close+1:])
		if len(f) > 1 && s[open+1:close] == name && f[1] == strconv.Itoa(parent) {
			pids = append(pids, pid)
		}
	}
	return pids
}
