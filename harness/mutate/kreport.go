package mutate

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// reportMarkers start a kernel bug report on the console: a WARN_ON or a
// lockdep splat (WARNING:), a BUG_ON or a sanitizer (BUG:, kernel BUG at,
// KASAN:, UBSAN:), an oops. Reports of the timing watchdogs (soft and hard
// lockups, hung tasks, RCU stalls) are left out (timingReports): an
// emulated CPU on a loaded host trips them with no bug at all, and a
// mutant that really loops hangs the run instead.
var reportMarkers = []string{"WARNING:", "BUG:", "kernel BUG at", "Oops:", "general protection fault", "UBSAN:", "KASAN:"}

var timingReports = []string{"soft lockup", "hard LOCKUP", "blocked for more than", "rcu_sched", "rcu_preempt", "stall", "workqueue lockup"}

var (
	consoleStamp = regexp.MustCompile(`^\[\s*[0-9.]+\]\s*`)
	cpuPid       = regexp.MustCompile(`\s*CPU: \d+ (UID: \d+ )?PID: \d+|,? CPU#\d+: \S+/\d+`)
	hexAddr      = regexp.MustCompile(`\s*(0x)?[0-9a-f]{8,}\b|\+0x[0-9a-f]+/0x[0-9a-f]+`)
)

// KernelReports returns the first line of each kernel bug report in a
// console log (reportMarkers), with what differs between two runs of the
// same report taken out: the timestamp, CPU and PID numbers, addresses. A
// WARN_ON_ONCE the kernel's code asserts (fsnotify_group_assert_locked's
// "the group's mark_mutex is held") reads "WARNING: at
// include/linux/fsnotify_backend.h:280" in every run that hits it.
func KernelReports(console string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(console))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l := consoleStamp.ReplaceAllString(sc.Text(), "")
		i := -1
		for _, k := range reportMarkers {
			if j := strings.Index(l, k); j >= 0 && (i < 0 || j < i) {
				i = j
			}
		}
		if i < 0 || containsAny(l, timingReports) {
			continue
		}
		l = cpuPid.ReplaceAllString(l[i:], "")
		l = hexAddr.ReplaceAllString(l, "")
		out = append(out, strings.TrimSpace(l))
	}
	return out
}

// consoleReports reads KernelReports from a run directory's vm-console.log;
// none when there is no such file.
func consoleReports(runDir string) []string {
	b, err := os.ReadFile(filepath.Join(runDir, "vm-console.log"))
	if err != nil {
		return nil
	}
	return KernelReports(string(b))
}

// newReport returns the first kernel bug report of a mutant's run that the
// unmutated kernel's run did not show, "" when there is none.
func (c *Config) newReport(runDir string) string {
	for _, r := range consoleReports(runDir) {
		if !c.baseReports[r] {
			return r
		}
	}
	return ""
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
