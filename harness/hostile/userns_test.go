//go:build hostile

package hostile

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/fsnsuite/fsnsuite/tap"
)

// The every-binary user-namespace condition (issue 22 item 4): in a user
// namespace (root mapped to root, as unshare -Ur) every binary ends in pass
// or skip, and every skip is true: a setup step or call refused for lack of
// privilege (mknod of a device, mounting a block filesystem, a privileged
// fanotify group) is a skip naming the capability, never a failure with a
// kernel HINT, and nothing claims the kernel lacks a feature.

// untrueInUserns are reasons that would blame the kernel for what the
// namespace refused.
var untrueInUserns = regexp.MustCompile(`not supported|not in this kernel|is not set|inconclusive|rejected`)

// refusedText is a permission refusal in a reason.
var refusedText = regexp.MustCompile(`EPERM|EACCES|operation not permitted|permission denied`)

// usernsLeaves checks every leaf of a stream run in a user namespace
// (failures first, then skip reasons).
func usernsLeaves(what string, st *tap.Node) []string {
	var fails, p []string
	st.Walk(func(path []string, l *tap.Node) {
		name := strings.Join(path, "/")
		switch {
		case l.Status.Failed():
			diag := strings.Join(l.Diagnostics, " | ")
			if len(diag) > 300 {
				diag = diag[:300] + "..."
			}
			fails = append(fails, fmt.Sprintf("exit: %s: %s %s in a user namespace: %s", what, name, l.Status, diag))
		case l.Status == tap.StatusSkip:
			switch {
			case strings.TrimSpace(l.Reason) == "":
				p = append(p, fmt.Sprintf("skip reason: %s: %s skipped without a reason", what, name))
			case untrueInUserns.MatchString(l.Reason):
				p = append(p, fmt.Sprintf("skip reason: %s: %s: %q blames the kernel for the user namespace's refusal", what, name, l.Reason))
			case refusedText.MatchString(l.Reason) && !strings.Contains(l.Reason, "CAP_"):
				p = append(p, fmt.Sprintf("skip reason: %s: %s: %q does not name the privilege it lacks", what, name, l.Reason))
			}
		}
	})
	return append(fails, p...)
}

// hintLines are kernel HINTs in a stream: none may appear where a user
// namespace refused a step.
func hintLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "# HINT: kernel may lack") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

// firstFew keeps a problem list readable.
func firstFew(p []string, n int) []string {
	if len(p) > n {
		return append(p[:n:n], fmt.Sprintf("... %d more", len(p)-n))
	}
	return p
}

func usernsConditions() []condition {
	return []condition{{name: "user_namespace_every_binary", run: func(h *h) []string {
		var p []string
		// Every correctness binary, through the runner.
		res := filepath.Join(h.tmp, "results")
		r := h.run(120*time.Second, userns(), h.binary("fsnsuite"), "-no-perf", "-results", res)
		st := tap.ParseString(r.stdout)
		p = append(p, want(!r.hung, "hang: fsnsuite -no-perf in a user namespace still running after %.0fs", r.elapsed.Seconds())...)
		p = append(p, want(r.code == 0 || r.code == 4, "exit: fsnsuite -no-perf in a user namespace: status %d, want 0 or 4%s", r.code, failedNames(r))...)
		for _, pr := range st.Problems {
			p = append(p, "exit/stream: "+pr)
		}
		var leaves []string
		for _, hl := range hintLines(r.stdout) {
			leaves = append(leaves, "unclear: a kernel HINT for a user namespace's refusal: "+hl)
		}
		leaves = append(leaves, usernsLeaves("fsnsuite -no-perf", st)...)
		// Every binary of bin/ ran: the runner's plan names them all.
		ents, _ := os.ReadDir(h.bin)
		var bins []string
		for _, e := range ents {
			if n := e.Name(); n != "fsnsuite" && !strings.HasPrefix(n, "perf_") {
				bins = append(bins, n)
			}
		}
		var ran []string
		for _, c := range st.Children {
			ran = append(ran, c.Name)
		}
		sort.Strings(ran)
		p = append(p, wantEq(strings.Join(ran, " "), strings.Join(bins, " "), "exit: the runner ran %v in the user namespace, want every correctness binary %v", ran, bins)...)

		// Perf binaries: the first case of each (a whole perf binary
		// measures for up to half a minute; its setup and skips are what
		// a user namespace can break).
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), "perf_") {
				continue
			}
			l := h.run(10*time.Second, nil, h.binary(e.Name()), "-list")
			first, _, _ := strings.Cut(strings.TrimSpace(l.stdout), "\n")
			if l.code != 0 || first == "" {
				p = append(p, fmt.Sprintf("setup: %s -list: status %d, %q", e.Name(), l.code, l.stdout))
				continue
			}
			pr := h.run(60*time.Second, userns(), h.binary(e.Name()), "-run", "^"+regexp.QuoteMeta(first)+"$")
			p = append(p, audit(pr)...)
			leaves = append(leaves, usernsLeaves(e.Name()+" -run "+first, tap.ParseString(pr.stdout))...)
			for _, hl := range hintLines(pr.stdout) {
				leaves = append(leaves, "unclear: a kernel HINT for a user namespace's refusal: "+hl)
			}
		}
		return append(p, firstFew(leaves, 6)...)
	}}}
}

func wantEq(got, want, format string, args ...any) []string {
	if got == want {
		return nil
	}
	return []string{fmt.Sprintf(format, args...)}
}
