//go:build hostile

package hostile

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/fsnsuite/fsnsuite/harness/internal/execfile"
	"github.com/fsnsuite/fsnsuite/tap"
)

// The results conditions (issue 33 items 3, 4, 6 and 9's cut results.tap):
// a results directory is the caller's, nothing in it is followed through a
// symlink, what reaches a terminal, junit.xml, KCIDB or HTML holds no
// control character, a non-finite figure costs that figure only, a results
// file cut short is never read as complete, and LAVA hears of a run whose
// results filesystem filled. The runner drives fake binaries (shell scripts
// in a -dir of their own): the conditions are about what it does with their
// output, not about the kernel.
func resultsConditions() []condition {
	return []condition{
		{name: "results_dir_planted", run: plantedResultsDir},
		{name: "results_dir_symlinks", run: symlinksInResultsDir},
		{name: "diagnostic_control_bytes", run: controlBytes},
		{name: "kcidb_non_finite", run: nonFiniteFigure},
		{name: "results_tap_cut", run: cutResultsTAP},
		{name: "lava_results_fs_full", run: lavaFullDisk},
	}
}

// resultsFakes writes a directory of fake test binaries (name -> sh body)
// for the runner's -dir.
func (h *h) resultsFakes(dir string, bins map[string]string) (string, error) {
	d := filepath.Join(h.tmp, dir)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", err
	}
	for name, body := range bins {
		if err := execfile.Write(filepath.Join(d, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			return "", err
		}
	}
	return d, nil
}

const resultsFakePass = "echo 'TAP version 13'; echo 1..1; echo 'ok 1 a.tmpfs'\n"

// resultsNobody is uid 65534 with no supplementary group, as setpriv
// --reuid=65534 --regid=65534 --clear-groups.
func resultsNobody() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
}

// resultsListing names what is under dir (relative paths, with each
// regular file's content), to compare before and after.
func resultsListing(dir string) string {
	var out []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || p == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		e := fmt.Sprintf("%s %v", rel, fi.Mode())
		if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			e += fmt.Sprintf(" %q", b)
		}
		out = append(out, e)
		return nil
	})
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// plantedResultsDir: a results path in a world-writable directory that a
// user made first (a directory of theirs, or a symlink of theirs to a
// directory of root's), or a directory root made that others may write: the
// runner refuses it (exit 2, one line saying why) and writes nothing there.
func plantedResultsDir(h *h) []string {
	fake, err := h.resultsFakes("fake", map[string]string{"a": resultsFakePass})
	if err != nil {
		return []string{"setup: " + err.Error()}
	}
	shared := filepath.Join(h.tmp, "shared") // a /tmp of its own
	victim := filepath.Join(h.tmp, "victimdir")
	for _, d := range []string{shared, victim} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return []string{"setup: " + err.Error()}
		}
	}
	os.Chmod(shared, os.ModeSticky|0o777)
	if err := os.WriteFile(filepath.Join(victim, "summary.txt"), []byte("root's own\n"), 0o644); err != nil {
		return []string{"setup: " + err.Error()}
	}
	os.Mkdir(filepath.Join(victim, "logs"), 0o755)
	os.WriteFile(filepath.Join(victim, "logs", "a.stdout"), []byte("root's log\n"), 0o644)
	ww := filepath.Join(shared, "writable")
	os.Mkdir(ww, 0o777)
	os.Chmod(ww, 0o777)
	for _, plant := range [][]string{
		{"/bin/mkdir", "-m", "0755", filepath.Join(shared, "results")},
		{"/bin/ln", "-s", victim, filepath.Join(shared, "link")},
	} {
		if r := h.run(10*time.Second, resultsNobody(), plant[0], plant[1:]...); r.code != 0 {
			return []string{fmt.Sprintf("setup: uid 65534: %v: exit %d: %s", plant, r.code, r.stderr)}
		}
	}
	var p []string
	before := resultsListing(victim)
	for _, tc := range []struct{ dir, why string }{
		{filepath.Join(shared, "results"), "owned by uid 65534"},
		{filepath.Join(shared, "link"), "symbolic link"},
		{ww, "writable by group or others"},
	} {
		r := h.run(30*time.Second, nil, h.binary("fsnsuite"), "-dir", fake, "-results", tc.dir)
		p = append(p, want(r.code == 2, "exit: fsnsuite -results %s (%s): status %d, want 2", tc.dir, tc.why, r.code)...)
		p = append(p, want(strings.Count(r.stderr, "\n") == 1 && strings.Contains(r.stderr, "refused") && strings.Contains(r.stderr, tc.why),
			"unclear: fsnsuite -results %s: stderr %q, want one line saying it is refused, %s", tc.dir, lastLines(r.stderr, 3), tc.why)...)
		if tc.why != "symbolic link" {
			ents, _ := os.ReadDir(tc.dir)
			p = append(p, want(len(ents) == 0, "false pass: fsnsuite wrote %d entries into %s (%s)", len(ents), tc.dir, tc.why)...)
		}
	}
	return append(p, want(resultsListing(victim) == before, "leftover: root's directory behind uid 65534's symlink changed:\n%s", resultsListing(victim))...)
}

// symlinksInResultsDir: a root-owned results directory that holds symlinks
// (from the time it was not root's alone, or a tool's): summary.txt and the
// other files to a victim file, logs/ to a victim directory with an old log
// of the same name. The run replaces the links; no victim changes.
func symlinksInResultsDir(h *h) []string {
	fake, err := h.resultsFakes("fake", map[string]string{"a": resultsFakePass})
	if err != nil {
		return []string{"setup: " + err.Error()}
	}
	res := filepath.Join(h.tmp, "results")
	victims := filepath.Join(h.tmp, "victims")
	victimDir := filepath.Join(victims, "dir")
	for _, d := range []string{res, victims, victimDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return []string{"setup: " + err.Error()}
		}
	}
	victim := filepath.Join(victims, "file")
	os.WriteFile(victim, []byte("victim\n"), 0o644)
	os.WriteFile(filepath.Join(victimDir, "a.stdout"), []byte("keep me\n"), 0o644)
	os.WriteFile(filepath.Join(victimDir, "b.stderr"), []byte("keep me too\n"), 0o644)
	files := []string{"summary.txt", "results.tap", "results.json", "junit.xml", "lava.txt", "run.json"}
	for _, f := range files {
		if err := os.Symlink(victim, filepath.Join(res, f)); err != nil {
			return []string{"setup: " + err.Error()}
		}
	}
	if err := os.Symlink(victimDir, filepath.Join(res, "logs")); err != nil {
		return []string{"setup: " + err.Error()}
	}
	before := resultsListing(victims)
	r := h.run(30*time.Second, nil, h.binary("fsnsuite"), "-dir", fake, "-results", res)
	p := want(r.code == 0, "exit: status %d, want 0: %s", r.code, lastLines(r.stderr, 2))
	p = append(p, want(resultsListing(victims) == before, "false pass: a file behind a symlink in the results directory changed:\n%s", resultsListing(victims))...)
	for _, f := range append(files, "logs") {
		fi, err := os.Lstat(filepath.Join(res, f))
		p = append(p, want(err == nil && fi.Mode()&os.ModeSymlink == 0, "exit: %s is still a symlink (or gone: %v) after the run", f, err)...)
	}
	b, err := os.ReadFile(filepath.Join(res, "logs", "a.stdout"))
	return append(p, want(err == nil && strings.Contains(string(b), "ok 1 a.tmpfs"), "exit: logs/a.stdout: %q, %v", b, err)...)
}

// rawControl describes the first character of s that a terminal would obey
// or an XML 1.0 document cannot hold (a C0 control but newline and tab, DEL,
// a C1 control, invalid UTF-8), or "" when there is none.
func rawControl(s string) string {
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			return fmt.Sprintf("invalid UTF-8 byte %#x at %d", s[i], i)
		case (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f):
			return fmt.Sprintf("control character %U at %d (%q)", r, i, s[max(0, i-20):min(len(s), i+20)])
		}
	}
	return ""
}

// controlBytes: a binary's diagnostics quote a guest console line and a
// process name full of control bytes (ESC sequences, BEL, NUL, a C1 CSI,
// invalid UTF-8), and its stderr too. Nothing of it reaches the terminal raw
// (the runner's stdout and stderr), junit.xml is well-formed XML that the
// schema check accepts, and the summary, KCIDB export and HTML report hold
// the escaped text.
func controlBytes(h *h) []string {
	fake, err := h.resultsFakes("fake", map[string]string{"ctl": `printf 'TAP version 13\n1..2\n'
printf '# guest console: \033[2J\033]0;owned\007 done\n'
printf '# process name: evil\033[31m\000\302\233x\377y\n'
printf 'not ok 1 console_case\n'
printf 'ok 2 other # SKIP reason with \033[1mbold\n'
printf 'stderr says \033[5m blink\007\n' >&2
exit 1
`})
	if err != nil {
		return []string{"setup: " + err.Error()}
	}
	res := filepath.Join(h.tmp, "results")
	r := h.run(30*time.Second, nil, h.binary("fsnsuite"), "-dir", fake, "-results", res)
	p := want(r.code == 1, "exit: status %d, want 1 (a case failed)", r.code)
	for what, s := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
		if c := rawControl(s); c != "" {
			p = append(p, fmt.Sprintf("false pass: the runner's %s (the terminal) got a raw %s", what, c))
		}
	}
	p = append(p, want(strings.Contains(r.stdout, `# guest console: \x1b[2J\x1b]0;owned\x07 done`), "unclear: the escaped console line is not in the stream: %q", r.stdout)...)
	for _, f := range []string{"results.tap", "summary.txt", "junit.xml", "lava.txt"} {
		b, err := os.ReadFile(filepath.Join(res, f))
		if err != nil {
			p = append(p, "exit: "+err.Error())
			continue
		}
		if c := rawControl(string(b)); c != "" {
			p = append(p, fmt.Sprintf("false pass: %s holds a raw %s", f, c))
		}
	}
	junit, err := os.ReadFile(filepath.Join(res, "junit.xml"))
	if err == nil {
		dec := xml.NewDecoder(bytes.NewReader(junit))
		for {
			_, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				p = append(p, "false pass: junit.xml is not well-formed XML: "+err.Error())
				break
			}
		}
		for _, e := range tap.CheckJUnit(bytes.NewReader(junit)) {
			p = append(p, "false pass: junit.xml: "+e)
		}
		p = append(p, want(bytes.Contains(junit, []byte(`evil\x1b[31m\x00\u009bx\xffy`)), "unclear: junit.xml lacks the escaped process name")...)
	}
	k := h.run(30*time.Second, nil, h.binary("fsnsuite"), "export", "-kcidb", res)
	p = append(p, want(k.code == 0, "exit: export -kcidb: status %d: %s", k.code, k.stderr)...)
	var doc any
	if err := json.Unmarshal([]byte(k.stdout), &doc); err != nil {
		p = append(p, "false pass: export -kcidb: not JSON: "+err.Error())
	} else if c := jsonControl(doc); c != "" {
		p = append(p, "false pass: export -kcidb: a string holds a raw "+c)
	}
	html := filepath.Join(h.tmp, "report.html")
	rep := h.run(60*time.Second, nil, h.binary("fsnsuite"), "report", res, "-o", html)
	p = append(p, want(rep.code == 0, "exit: report: status %d: %s", rep.code, rep.stderr)...)
	if b, err := os.ReadFile(html); err == nil {
		if c := rawControl(string(b)); c != "" {
			p = append(p, "false pass: report.html holds a raw "+c)
		}
		p = append(p, want(bytes.Contains(b, []byte(`\x1b[2J`)), "unclear: report.html lacks the escaped console line")...)
	}
	return p
}

// jsonControl is rawControl for every string of a decoded JSON document.
func jsonControl(v any) string {
	switch x := v.(type) {
	case string:
		return rawControl(x)
	case map[string]any:
		for k, e := range x {
			if c := jsonControl(k); c != "" {
				return c
			}
			if c := jsonControl(e); c != "" {
				return c
			}
		}
	case []any:
		for _, e := range x {
			if c := jsonControl(e); c != "" {
				return c
			}
		}
	}
	return ""
}

// nonFiniteFigure: a perf case reports one figure with a NaN/Inf interval
// beside a sound one. export -kcidb exits 0 with JSON that carries the sound
// figure and a note on the leaf naming the one left out; an export that
// fails (a bad -origin) leaves no file behind, not an empty one.
func nonFiniteFigure(h *h) []string {
	fake, err := h.resultsFakes("fake", map[string]string{"figures": `echo 'TAP version 13'
echo 1..1
echo '# measurement: ns_per_op 1664 ns/op [1651,1678]'
echo '# measurement: ratio 1.02 ratio [NaN,+Inf]'
echo 'ok 1 write.tmpfs'
`})
	if err != nil {
		return []string{"setup: " + err.Error()}
	}
	res := filepath.Join(h.tmp, "results")
	r := h.run(30*time.Second, nil, h.binary("fsnsuite"), "-dir", fake, "-results", res)
	if r.code != 0 {
		return []string{fmt.Sprintf("setup: the run of the fake binary: status %d: %s", r.code, lastLines(r.stderr, 2))}
	}
	out := filepath.Join(h.tmp, "kcidb.json")
	k := h.run(30*time.Second, nil, h.binary("fsnsuite"), "export", "-kcidb", "-o", out, res)
	p := want(k.code == 0, "exit: export -kcidb of a run with a [NaN,+Inf] interval: status %d: %s", k.code, k.stderr)
	b, _ := os.ReadFile(out)
	var doc struct {
		Tests []struct {
			Path   string
			Number *struct{ Value float64 }
			Misc   map[string]any
		}
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		p = append(p, fmt.Sprintf("false pass: %s (%d bytes) is not JSON: %v", out, len(b), err))
	}
	found := map[string]bool{}
	for _, t := range doc.Tests {
		found[t.Path] = true
		switch t.Path {
		case "fsnsuite.figures.write.tmpfs":
			note := fmt.Sprint(t.Misc["dropped_figures"])
			p = append(p, want(strings.Contains(note, "ratio") && strings.Contains(note, "NaN"), "unclear: the leaf's misc does not name the figure left out: %v", t.Misc)...)
		case "fsnsuite.figures.write.tmpfs.ns_per_op":
			p = append(p, want(t.Number != nil && t.Number.Value == 1664, "exit: ns_per_op figure: %+v", t.Number)...)
		}
	}
	for _, path := range []string{"fsnsuite.figures.write.tmpfs", "fsnsuite.figures.write.tmpfs.ns_per_op"} {
		p = append(p, want(found[path], "exit: no KCIDB test %s", path)...)
	}
	p = append(p, want(!found["fsnsuite.figures.write.tmpfs.ratio"], "false pass: the non-finite figure was exported")...)
	bad := filepath.Join(h.tmp, "bad.json")
	k = h.run(30*time.Second, nil, h.binary("fsnsuite"), "export", "-kcidb", "-origin", "Not-Valid", "-o", bad, res)
	_, err = os.Stat(bad)
	p = append(p, want(k.code != 0, "exit: export with a bad -origin: status 0")...)
	return append(p, want(errors.Is(err, os.ErrNotExist), "false pass: a failed export left %s behind (%v)", bad, err)...)
}

// cutResultsTAP: the results filesystem fills while results.tap is written
// and is freed before the run ends (another job's file removed): results.tap
// stays cut mid-line, the files written at the end are whole. The runner
// says so (stderr naming results.tap and the error, exit 2), and report,
// export and diff refuse the directory as incomplete instead of reading it.
// Which file the full disk cuts first, results.tap or the
// binary's log beside it (both about 7 KiB in the 8 KiB left), depends on
// when each writer flushes: a run where only the log was cut is no test of
// results.tap (CI, 2026-12-05: "results.tap was not cut (16039 bytes)", the
// closing line naming logs/a.stdout) and is run again, up to 3 times; the
// conditions are judged on the first run that cut results.tap.
func cutResultsTAP(h *h) []string {
	var p []string
	for attempt := 1; attempt <= 3; attempt++ {
		var cut bool
		if p, cut = cutResultsTAPOnce(h, attempt); cut {
			return p
		}
	}
	return append(p, "setup: in 3 runs the full disk never cut results.tap (it cut the log beside it first)")
}

// cutResultsTAPOnce is one run of cutResultsTAP in its own directories; cut
// is false when results.tap came out whole (the log took the full disk).
func cutResultsTAPOnce(h *h, attempt int) (problems []string, cut bool) {
	goFile := filepath.Join(h.tmp, fmt.Sprintf("go-%d", attempt))
	fake, err := h.resultsFakes(fmt.Sprintf("fake-%d", attempt), map[string]string{"a": fmt.Sprintf(`echo 'TAP version 13'
echo 1..600
i=1
while [ $i -le 300 ]; do echo "ok $i case_number_$i"; i=$((i+1)); done
n=0
while [ ! -e %s ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n+1)); done
while [ $i -le 600 ]; do echo "ok $i case_number_$i"; i=$((i+1)); done
`, goFile)})
	if err != nil {
		return []string{"setup: " + err.Error()}, true
	}
	mnt := filepath.Join(h.tmp, fmt.Sprintf("cut-%d", attempt))
	os.Mkdir(mnt, 0o755)
	if err := syscall.Mount("fsnsuite-cut", mnt, "tmpfs", 0, "size=1m,mode=0755"); err != nil {
		return []string{"setup: " + err.Error()}, true
	}
	defer syscall.Unmount(mnt, syscall.MNT_DETACH)
	// All but 8 KiB taken by another job's file: the first 300 lines (about
	// 7 KiB in results.tap, as much in the log) fill it.
	filler, err := os.Create(filepath.Join(mnt, "filler"))
	if err != nil {
		return []string{"setup: " + err.Error()}, true
	}
	if _, err := filler.Write(make([]byte, 1<<20-8<<10)); err != nil {
		return []string{"setup: " + err.Error()}, true
	}
	filler.Close()
	res := filepath.Join(mnt, "r")
	r, _ := h.runDuring(60*time.Second, nil, func(int) []string {
		// Once the binary waits, the disk is freed and the binary goes on.
		time.Sleep(time.Second)
		os.Remove(filepath.Join(mnt, "filler"))
		os.WriteFile(goFile, nil, 0o644)
		return nil
	}, h.binary("fsnsuite"), "-dir", fake, "-results", res)
	p := want(r.code == 2, "exit: status %d, want 2 (results.tap could not be written whole)", r.code)
	closing := regexp.MustCompile(`(?m)^fsnsuite: the results in .* are incomplete: .*$`).FindString(r.stderr)
	p = append(p, want(strings.Contains(closing, "results.tap") && strings.Contains(closing, "no space left on device"),
		"unclear: the closing line does not name results.tap and ENOSPC: %q", lastLines(r.stderr, 3))...)
	b, err := os.ReadFile(filepath.Join(res, "results.tap"))
	if err != nil || bytes.HasSuffix(b, []byte("\nok 1 a\n")) {
		return append(p, fmt.Sprintf("setup: results.tap was not cut (%d bytes, %v)", len(b), err)), false
	}
	if _, err := os.Stat(filepath.Join(res, "results.json")); err != nil {
		return append(p, "setup: the disk was not freed in time: "+err.Error()), true
	}
	for _, args := range [][]string{
		{"export", "-kcidb", res},
		{"report", res, "-o", filepath.Join(h.tmp, "r.html")},
		{"diff", res, res},
	} {
		c := h.run(30*time.Second, nil, h.binary("fsnsuite"), args...)
		p = append(p, want(c.code == 2, "false pass: fsnsuite %s of a directory with a cut results.tap: status %d, want 2", args[0], c.code)...)
		p = append(p, want(strings.Contains(c.stderr, "results.tap: cut short"), "unclear: fsnsuite %s: stderr %q, want it to say results.tap is cut short", args[0], c.stderr)...)
	}
	return p, true
}

// lavaFixedPath finds a fixed path in a world-writable directory.
var lavaFixedPath = regexp.MustCompile(`(?:/tmp|/var/tmp|/dev/shm|/run/lock)/[A-Za-z0-9_.-]+`)

// lavaFullDisk runs the LAVA test definition's steps (scripts/lava/fsnsuite.yaml,
// as LAVA's run.sh does: its params as variables, its steps in one shell)
// with a stand-in lava-test-case that logs its arguments, on a results
// filesystem (a small tmpfs in a private mount namespace: $TMPDIR, and any
// fixed RESULTS path put there) that fills while lava.txt is written: every
// earlier file fits, lava.txt does not, and the one failing leaf comes last
// in it. LAVA must hear of a failure, never "N pass, 0 fail". The scripts
// hold no fixed path in a world-writable directory.
func lavaFullDisk(h *h) []string {
	// The LAVA definition and script of the tree the binaries were built
	// in (-bin DIR/bin: DIR), so that a flip-check runs the old scripts
	// with the old binaries; else this repository's.
	top := filepath.Dir(h.bin)
	if _, err := os.Stat(filepath.Join(top, "scripts", "lava", "fsnsuite.yaml")); err != nil {
		if top, err = filepath.Abs(filepath.Join("..", "..")); err != nil {
			return []string{"setup: " + err.Error()}
		}
	}
	var p []string
	for _, f := range []string{"fsnsuite.yaml", "lava-results.sh"} {
		b, err := os.ReadFile(filepath.Join(top, "scripts", "lava", f))
		if err != nil {
			return []string{"setup: " + err.Error()}
		}
		for _, m := range lavaFixedPath.FindAllString(string(b), -1) {
			if !strings.HasSuffix(m, "XXXXXX") {
				p = append(p, fmt.Sprintf("false pass: scripts/lava/%s uses the fixed path %s in a world-writable directory", f, m))
			}
		}
	}
	def, _ := os.ReadFile(filepath.Join(top, "scripts", "lava", "fsnsuite.yaml"))
	params, steps := lavaSteps(string(def))
	if len(steps) == 0 {
		return append(p, "setup: no run steps in scripts/lava/fsnsuite.yaml")
	}
	var cases strings.Builder
	cases.WriteString("echo 'TAP version 13'\necho 1..1000\ni=1\nwhile [ $i -le 1000 ]; do echo \"ok $i case_number_${i}_on_tmpfs\"; i=$((i+1)); done\n")
	fake, err := h.resultsFakes("fake", map[string]string{
		"a": cases.String(),
		"z": "echo 'TAP version 13'; echo 1..1; echo '# want: IN_CREATE'; echo 'not ok 1 last.tmpfs'; exit 1\n",
	})
	if err != nil {
		return append(p, "setup: "+err.Error())
	}
	stub := filepath.Join(h.tmp, "stub")
	calls := filepath.Join(h.tmp, "calls")
	os.Mkdir(stub, 0o755)
	if err := execfile.Write(filepath.Join(stub, "lava-test-case"), []byte("#!/bin/sh\necho \"$*\" >> "+calls+"\n"), 0o755); err != nil {
		return append(p, "setup: "+err.Error())
	}
	mnt := filepath.Join(h.tmp, "mnt")
	os.Mkdir(mnt, 0o755)
	var script strings.Builder
	// A measuring run on a roomy tmpfs: the pages of every file written
	// before lava.txt; then the real one on a tmpfs with 3 pages more.
	fmt.Fprintf(&script, `set -u
M=%[1]s
mount -t tmpfs -o size=16m,mode=1777 fsnsuite-lava-measure "$M" || exit 90
"$FSNSUITE" -dir %[2]s -results "$M/measure" >/dev/null 2>&1
pages=0
for f in "$M"/measure/results.tap "$M"/measure/results.json "$M"/measure/junit.xml "$M"/measure/run.json "$M"/measure/logs/*; do
	s=$(stat -c %%s "$f") || exit 91
	pages=$((pages + (s + 4095) / 4096))
done
lava=$(stat -c %%s "$M/measure/lava.txt") || exit 92
[ "$lava" -gt $((6 * 4096)) ] || { echo "lava.txt is only $lava bytes" >&2; exit 93; }
umount "$M"
mount -t tmpfs -o size=$(((pages + 3) * 4096)),mode=1777 fsnsuite-lava-full "$M" || exit 94
export TMPDIR="$M"
`, mnt, fake)
	for k, v := range params {
		fmt.Fprintf(&script, "%s=%s\n", k, lavaQuote(v))
	}
	fmt.Fprintf(&script, "FSNSUITE=%s\nARGS=%s\nRESULTS=\"$M/fsnsuite-results\"\ncd %s\n",
		lavaQuote(h.binary("fsnsuite")), lavaQuote("-dir "+fake), lavaQuote(top))
	for _, s := range steps {
		script.WriteString(s + "\n")
	}
	cmd := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c", script.String())
	cmd.Env = append(append([]string(nil), h.env...), "PATH="+stub+":"+os.Getenv("PATH"), "FSNSUITE="+h.binary("fsnsuite"))
	cmd.Dir = top
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		return append(p, "setup: "+err.Error())
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		<-done
		return append(p, "hang: the LAVA steps still running after 90s")
	}
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() >= 90 {
		return append(p, fmt.Sprintf("setup: the measuring run: exit %d: %s", ee.ExitCode(), lastLines(out.String(), 5)))
	}
	log, _ := os.ReadFile(calls)
	pass, fail := strings.Count(string(log), "--result pass"), strings.Count(string(log), "--result fail")
	return append(p, want(fail > 0, "false pass: LAVA heard %d pass, %d fail from a run whose last leaf failed and whose results filesystem filled (steps' output: %q)",
		pass, fail, lastLines(out.String(), 4))...)
}

// lavaSteps reads a LAVA test definition's params (KEY: value under
// params:) and run steps (the "- " items under steps:).
func lavaSteps(def string) (params map[string]string, steps []string) {
	params = map[string]string{}
	section := ""
	for _, l := range strings.Split(def, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case t == "" || strings.HasPrefix(t, "#"):
		case !strings.HasPrefix(l, " "):
			section = strings.TrimSuffix(t, ":")
		case section == "params":
			if k, v, ok := strings.Cut(t, ":"); ok {
				params[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"`)
			}
		case section == "run" && strings.HasPrefix(t, "- "):
			steps = append(steps, strings.TrimPrefix(t, "- "))
		}
	}
	return params, steps
}

// lavaQuote quotes s for sh.
func lavaQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
