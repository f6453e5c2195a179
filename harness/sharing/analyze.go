package sharing

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/fsnsuite/fsnsuite/harness/perf"
)

// Measured is a chunk of the guest's log with the plugin's window for it.
type Measured struct {
	Chunk
	Window
}

// Join pairs the guest's chunks with the plugin's windows, in order: the
// i-th window the plugin saw opened is the i-th chunk the guest logged. A
// count or a tag that differs means the two records do not describe the
// same run (a binary that died between a marker and its log line), and
// nothing is joined.
func Join(p *Plugin, chunks []Chunk) ([]Measured, error) {
	if p.End == "" {
		return nil, fmt.Errorf("the plugin's output has no end line: qemu did not exit through the plugin's atexit, the record is cut short")
	}
	// The plugin's own account of what it could not count: a store dropped
	// when its table could not grow (dropped, oom): counts with a hole in
	// them are no measurement. And of the join protocol going wrong: a
	// leave on a vCPU that had not joined (unmatched_leaves), a window
	// started with a vCPU still joined (joined_at_start). The measured
	// threads are pinned, so neither happens in a correct run; when one
	// did (a Crew's warm-up run leaving a vCPU it had not joined, then
	// joining it for good, before this was checked), every later window
	// counted the measuring thread's waits: kstores/op spread 2% between
	// windows of one condition.
	for _, f := range strings.Fields(p.End)[1:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		switch k {
		case "dropped", "oom":
			if v != "0" {
				return nil, fmt.Errorf("the plugin's end line says %s=%s (%s): its counts are incomplete", k, v, p.End)
			}
		case "unmatched_leaves", "joined_at_start":
			if v != "0" {
				return nil, fmt.Errorf("the plugin's end line says %s=%s%s (%s): the workload's join and leave markers do not pair, so the windows count work outside the measured threads",
					k, v, firstWindow(p.End, "first_"+k, chunks), p.End)
			}
		}
	}
	if len(p.Windows) != len(chunks) {
		return nil, fmt.Errorf("the plugin closed %d windows, the guest logged %d chunks: the records do not match", len(p.Windows), len(chunks))
	}
	out := make([]Measured, len(chunks))
	for i, c := range chunks {
		w := p.Windows[i]
		if w.TagMismatch || w.Tag != c.Tag&0xff {
			return nil, fmt.Errorf("window %d: plugin tag %d (stop tag mismatch %v), guest chunk %s %s tag %d: the records do not match",
				w.Seq, w.Tag, w.TagMismatch, c.Case, c.Cond, c.Tag)
		}
		out[i] = Measured{c, w}
	}
	return out, nil
}

// firstWindow names the window an end-line field (first_joined_at_start,
// first_unmatched_leaves: a window's seq) points at, with its chunk's case
// and condition when the chunk log has it.
func firstWindow(end, key string, chunks []Chunk) string {
	for _, f := range strings.Fields(end) {
		v, ok := strings.CutPrefix(f, key+"=")
		if !ok {
			continue
		}
		seq, err := strconv.Atoi(v)
		if err != nil || seq <= 0 {
			return ""
		}
		if seq <= len(chunks) {
			c := chunks[seq-1]
			return fmt.Sprintf(", first in window %d: %s %s %s", seq, c.Suite, c.Case, c.Cond)
		}
		return fmt.Sprintf(", first in window %d", seq)
	}
	return ""
}

// Metric names, per operation (Ops of the window) unless said otherwise.
const (
	RemoteWritesPerOp = "remote-writes/op" // of those, the writes not by each line's main writer
	SharedWritesPerOp = "shared-writes/op" // kernel stores to lines more than one vCPU wrote in the window
	TransfersPerOp    = "transfers/op"     // stores to a line another vCPU wrote last (this run's interleaving)
	StoresPerOp       = "kstores/op"       // every kernel store
	SharedLinesPerWin = "shared-lines/window"
)

// Metrics lists the metrics in the order they are reported.
var Metrics = []string{RemoteWritesPerOp, SharedWritesPerOp, SharedLinesPerWin, TransfersPerOp, StoresPerOp}

func value(m Measured, metric string) float64 {
	switch metric {
	case RemoteWritesPerOp:
		return float64(m.RemoteWrites) / float64(m.Ops)
	case SharedWritesPerOp:
		return float64(m.SharedWrites) / float64(m.Ops)
	case TransfersPerOp:
		return float64(m.Transfers) / float64(m.Ops)
	case StoresPerOp:
		return float64(m.Stores) / float64(m.Ops)
	case SharedLinesPerWin:
		return float64(m.SharedLines)
	}
	return math.NaN()
}

// Figure is one metric of a case: each condition's median over blocks (of
// the median window of each block) with its interval, and the paired ratio.
type Figure struct {
	Metric     string
	Base, Cond perf.Interval
	Ratio      perf.Interval // NaN center when the base is 0 in some block
	Exact      bool          // every block gave both conditions the same values as the first block
}

// HotWriter is the majority writing instruction of shared lines, with their
// remote writes summed over a condition's windows (their described lines:
// those with the most remote writes).
type HotWriter struct {
	PC     uint64
	Symbol string // from the guest's kallsyms or a System.map, "" without one
	Writes int64  // remote writes of the lines it wrote most
}

// Case is one experiment of the run, in the sharing profile.
type Case struct {
	Suite, Name, Mode string
	Base, Cond        string
	Blocks, Windows   int
	OpsPerWindow      int64
	Figures           []Figure
	Hot               [2][]HotWriter // per condition (0 base, 1 cond), most writes first
	Verdict           string         // "" none, else "pass: ..." or "fail: ..."
}

// Confidence of the intervals (the engine's gate confidence).
const Confidence = 0.99

// Analyze groups the measured windows by case and condition and gives each
// metric its statistics. sym resolves instruction addresses (nil: none).
func Analyze(ms []Measured, sym *Symbols) []*Case {
	type key struct{ suite, name, mode string }
	var order []key
	byCase := map[key][]Measured{}
	for _, m := range ms {
		if m.Phase == "warm" {
			continue
		}
		k := key{m.Suite, m.Case, m.Mode}
		if _, ok := byCase[k]; !ok {
			order = append(order, k)
		}
		byCase[k] = append(byCase[k], m)
	}
	var out []*Case
	for _, k := range order {
		out = append(out, analyzeCase(k.suite, k.name, k.mode, byCase[k], sym))
	}
	return out
}

func analyzeCase(suite, name, mode string, ms []Measured, sym *Symbols) *Case {
	c := &Case{Suite: suite, Name: name, Mode: mode, Windows: len(ms), OpsPerWindow: ms[0].Ops}
	// blocks[b][tag] = the windows of block b and condition tag.
	var blockIDs []int
	blocks := map[int]*[2][]Measured{}
	hot := [2]map[uint64]int64{{}, {}}
	for _, m := range ms {
		t := m.Chunk.Tag & 1
		if m.Chunk.Tag == 0 {
			c.Base = m.Cond
		} else {
			c.Cond = m.Cond
		}
		b, ok := blocks[m.Block]
		if !ok {
			b = &[2][]Measured{}
			blocks[m.Block] = b
			blockIDs = append(blockIDs, m.Block)
		}
		b[t] = append(b[t], m)
		for _, h := range m.Hot {
			if h.Remote > 0 {
				hot[t][h.PC] += h.Remote
			}
		}
	}
	// Only blocks where both conditions ran (the engine always runs both).
	var ids []int
	for _, id := range blockIDs {
		if b := blocks[id]; len(b[0]) > 0 && len(b[1]) > 0 {
			ids = append(ids, id)
		}
	}
	c.Blocks = len(ids)
	for _, metric := range Metrics {
		var base, cond []float64
		for _, id := range ids {
			b := blocks[id]
			base = append(base, medianOf(b[0], metric))
			cond = append(cond, medianOf(b[1], metric))
		}
		f := Figure{Metric: metric, Base: perf.MedianCI(base, Confidence), Cond: perf.MedianCI(cond, Confidence), Exact: len(base) > 0}
		for i := range base {
			if base[i] != base[0] || cond[i] != cond[0] {
				f.Exact = false
			}
		}
		f.Ratio = perf.Interval{Center: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
		if positive(base) {
			f.Ratio = perf.RatioCI(cond, base, Confidence)
		}
		c.Figures = append(c.Figures, f)
	}
	for t := range hot {
		for pc, w := range hot[t] {
			c.Hot[t] = append(c.Hot[t], HotWriter{PC: pc, Writes: w, Symbol: sym.Lookup(pc)})
		}
		sort.Slice(c.Hot[t], func(i, j int) bool {
			a, b := c.Hot[t][i], c.Hot[t][j]
			return a.Writes > b.Writes || a.Writes == b.Writes && a.PC < b.PC
		})
		if len(c.Hot[t]) > 6 {
			c.Hot[t] = c.Hot[t][:6]
		}
	}
	c.Verdict = verdict(c)
	return c
}

func positive(xs []float64) bool {
	for _, x := range xs {
		if !(x > 0) {
			return false
		}
	}
	return len(xs) > 0
}

func medianOf(ms []Measured, metric string) float64 {
	xs := make([]float64, len(ms))
	for i, m := range ms {
		xs[i] = value(m, metric)
	}
	return perf.Median(xs)
}

// ControlPrefix starts the names of the control cases (perf_parent_write's
// samefile_private_nN): clients writing one file (cond) against one file
// each in its own directory (base).
const ControlPrefix = "samefile_private_"

// Control bounds, on remote-writes/op: a write to one file shared by every
// client takes and releases its inode's i_rwsem (inode_lock and
// inode_unlock: atomics on the rwsem's count, mm/shmem.c
// shmem_file_write_iter), two writes per operation on one line from every
// client's vCPU, so with n clients writing equally at least (n-1)/n·2 >= 1
// remote write per operation (and the file's one page adds its folio lock
// the same way); clients each writing their own file in their own directory
// share no line on the write path: 0 remote writes per write in the
// isolated guest (the crew's wake-ups are outside the windows), well under
// ControlPrivateMax, which leaves room for a kernel's own global counters
// (a tinyconfig 7.3's workingset_age_nonresident: 0.26 per write).
const (
	ControlSharedMin  = 1.0
	ControlPrivateMax = 0.1
)

// AAFloor is the difference per operation below which two -aa sides are
// the same figure whatever their ratio: one write per hundred operations,
// where a ratio of small counts says nothing (before the isolated guest, a
// chunk's own start and end gave 11 to 13 remote writes in a window of 2000
// writes on 7.3; now 0, and -aa is identical: Identical).
const AAFloor = 0.01

// AAMetrics are the figures -aa judges: the gated one and every kernel
// store. The others are reported: shared-writes/op counts a line's owner's
// writes in full once any other vCPU wrote it, so one remote write landing
// on a private stack line in some chunks moves it by thousands (a figure of
// which lines were touched from two vCPUs, not of how often), and transfers
// depend on the interleaving by definition.
var AAMetrics = map[string]bool{RemoteWritesPerOp: true, StoresPerOp: true}

// Same reports whether -aa finds no difference in f, the engine's -aa rule
// (a difference is flagged when the paired ratio's interval excludes 1)
// with a floor: medians within 1% of the base or AAFloor of each other are
// the same whatever the ratio's interval (small counts: 11 against 13
// remote writes in a window).
func Same(f Figure) bool {
	if math.Abs(f.Cond.Center-f.Base.Center) <= math.Max(0.01*math.Abs(f.Base.Center), AAFloor) {
		return true
	}
	return f.Ratio.Lo <= 1 && 1 <= f.Ratio.Hi
}

// IdenticalWithin is the relative difference under which two -aa medians
// are the same figure: one part in 10^4, the resolution of the 4
// significant digits they are printed with. In the isolated guest the
// windows of one condition still differ by a few stores in hundreds of
// thousands, from the kernel's own clock (a file's ctime updated once more
// when the coarse clock ticked during the window, a jiffy's time
// accounting); comparing the printed strings instead would call 372.549
// and 372.551 different.
const IdenticalWithin = 1e-4

// Identical reports whether f's two medians are the same figure: equal, or
// within IdenticalWithin of each other.
func Identical(f Figure) bool {
	a, b := f.Base.Center, f.Cond.Center
	return a == b || math.Abs(a-b) <= IdenticalWithin*math.Max(math.Abs(a), math.Abs(b))
}

// verdict judges -aa cases (no difference in remote writes and kernel
// stores per operation: Same) and the control.
func verdict(c *Case) string {
	f := c.Figures[0] // remote-writes/op
	k := c.Figures[len(c.Figures)-1]
	judged := c.Mode == "aa" || strings.HasPrefix(c.Name, ControlPrefix)
	switch {
	case c.Blocks == 0:
		return "fail: no block measured both conditions"
	case judged && k.Metric == StoresPerOp && (k.Base.Center == 0 || k.Cond.Center == 0):
		// Every operation of a perf workload is a syscall, which stores
		// in the kernel: a side with no kernel store counted measured
		// nothing (its vCPUs never joined, or the syscall-site rule
		// learned a site the workload does not use), and two such sides
		// would otherwise be "identical".
		return fmt.Sprintf("fail: %s %s and %s %s: a side with no kernel store counted measured nothing (joins or the syscall site did not match the workload)",
			k.Metric, iv(k.Base), k.Metric, iv(k.Cond))
	case c.Mode == "aa":
		for _, f := range c.Figures {
			if AAMetrics[f.Metric] && !Same(f) {
				return fmt.Sprintf("fail: -aa %s differs between the sides: %s against %s, more than 1%% and %g per op apart, ratio %s excludes 1",
					f.Metric, iv(f.Base), iv(f.Cond), AAFloor, iv(f.Ratio))
			}
		}
		how := "identical figures"
		for _, g := range c.Figures {
			if AAMetrics[g.Metric] && !Identical(g) {
				how = "within the floor"
			}
		}
		return fmt.Sprintf("pass: -aa no difference (%s): remote-writes/op %s and %s, kstores/op %s and %s (ratio %s)",
			how, iv(f.Base), iv(f.Cond), iv(k.Base), iv(k.Cond), iv(k.Ratio))
	case strings.HasPrefix(c.Name, ControlPrefix):
		if f.Cond.Lo < ControlSharedMin || f.Base.Hi > ControlPrivateMax {
			return fmt.Sprintf("fail: control: %s %s %s (want >= %g), %s %s (want <= %g): the profile does not see the sharing it must",
				f.Metric, c.Cond, iv(f.Cond), ControlSharedMin, c.Base, iv(f.Base), ControlPrivateMax)
		}
		return fmt.Sprintf("pass: control: %s %s %s >= %g, %s %s <= %g", f.Metric, c.Cond, iv(f.Cond), ControlSharedMin, c.Base, iv(f.Base), ControlPrivateMax)
	}
	return ""
}

func iv(i perf.Interval) string {
	if math.IsNaN(i.Center) {
		return "n/a"
	}
	return fmt.Sprintf("%.4g [%.4g,%.4g]", i.Center, i.Lo, i.Hi)
}

// IsolationFile is the guest's account of its isolation in a results
// directory (harness/vm's SharingIsolation, written by its /init).
const IsolationFile = "sharing-isolation.txt"

// ReadIsolation describes the guest's isolation from dir's IsolationFile in
// one line for the report, "" when there is none (a run before the
// isolation). The file comes from the guest: only its known keys, with
// CPU-list values, are used.
func ReadIsolation(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, IsolationFile))
	if err != nil || len(b) > 4096 {
		return ""
	}
	kv := map[string]string{}
	for _, f := range strings.Fields(string(b)) {
		k, v, _ := strings.Cut(f, "=")
		if strings.Trim(v, "0123456789-,x") != "" {
			return "isolation: unreadable account (" + IsolationFile + ")"
		}
		kv[k] = v
	}
	if kv["nohz_full"] == "" {
		return fmt.Sprintf("isolation: guest processes on CPU mask %s, online CPUs %s; nohz_full not in effect (a kernel without CONFIG_NO_HZ_FULL): the measured vCPUs keep the scheduler tick, so kstores/op differ between windows in the fourth digit", kv["housekeeping"], kv["online"])
	}
	return fmt.Sprintf("isolation: guest processes on CPU mask %s, measured vCPUs %s nohz_full (online CPUs %s)", kv["housekeeping"], kv["nohz_full"], kv["online"])
}

// siteNote says what the plugin's syscall-site rule did: how many workload
// syscall sites it learned and how many kernel stores of the joined vCPUs
// it left out over the windows ("" for a plugin without the rule).
func siteNote(p *Plugin) string {
	sites := ""
	for _, f := range strings.Fields(p.End) {
		if v, ok := strings.CutPrefix(f, "sites="); ok {
			sites = v
		}
	}
	if sites == "" {
		return ""
	}
	if sites == "0" {
		return "syscall sites: none learned: the kernel work of every syscall of the measured threads counts, the Go runtime's own (a preempted goroutine's hand-off) included"
	}
	var foreign int64
	for _, w := range p.Windows {
		foreign += w.Foreign
	}
	return fmt.Sprintf("syscall sites: %s learned; %d kernel stores of the measured vCPUs after other syscalls (the Go runtime's own) left out over %d windows", sites, foreign, len(p.Windows))
}

// Format writes the report: per case, a verdict line if any, then per metric
// both conditions with intervals and the ratio, then the hottest writers.
func Format(w io.Writer, cases []*Case) { FormatWith(w, cases, "") }

// FormatWith is Format with notes (the guest's isolation: ReadIsolation;
// the syscall-site rule: siteNote) in the header, those not "".
func FormatWith(w io.Writer, cases []*Case, notes ...string) {
	fmt.Fprintln(w, "# sharing profile: kernel-mode stores to 64-byte physical lines written by more than one vCPU in a chunk;")
	fmt.Fprintln(w, "# a count of coherence-relevant writes, a lower bound on cross-CPU traffic, not time (harness/perf/README.md)")
	for _, n := range notes {
		if n != "" {
			fmt.Fprintf(w, "# %s\n", n)
		}
	}
	for _, c := range cases {
		fmt.Fprintf(w, "%s %s (%s): %d blocks, %d windows of %d ops\n", c.Suite, c.Name, c.Mode, c.Blocks, c.Windows, c.OpsPerWindow)
		if c.Verdict != "" {
			fmt.Fprintf(w, "  %s\n", c.Verdict)
		}
		for _, f := range c.Figures {
			exact := ""
			if f.Exact {
				exact = " (exact: every block the same)"
			}
			fmt.Fprintf(w, "  %-20s %s %s  %s %s  ratio %s%s\n", f.Metric, c.Base, iv(f.Base), c.Cond, iv(f.Cond), iv(f.Ratio), exact)
		}
		for t, name := range []string{c.Base, c.Cond} {
			if len(c.Hot[t]) == 0 {
				continue
			}
			var s []string
			for _, h := range c.Hot[t] {
				where := fmt.Sprintf("%#x", h.PC)
				if h.Symbol != "" {
					where = h.Symbol
				}
				s = append(s, fmt.Sprintf("%s %d", where, h.Writes))
			}
			fmt.Fprintf(w, "  shared lines' main writers (%s; remote writes of the lines each wrote most, over the windows): %s\n", name, strings.Join(s, ", "))
		}
	}
}

// Symbols resolves kernel addresses with a System.map (the kernel must run
// at its link address: the sharing profile boots with nokaslr).
type Symbols struct {
	addrs []uint64
	names []string
}

// LoadSymbols reads a System.map ("ADDR TYPE NAME" lines), keeping text
// symbols.
func LoadSymbols(path string) (*Symbols, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := &Symbols{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) < 3 || !strings.ContainsAny(fl[1], "tTwW") {
			continue
		}
		a, err := strconv.ParseUint(fl[0], 16, 64)
		if err != nil {
			continue
		}
		s.addrs = append(s.addrs, a)
		s.names = append(s.names, fl[2])
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	idx := make([]int, len(s.addrs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return s.addrs[idx[i]] < s.addrs[idx[j]] })
	a2, n2 := make([]uint64, len(idx)), make([]string, len(idx))
	for i, j := range idx {
		a2[i], n2[i] = s.addrs[j], s.names[j]
	}
	s.addrs, s.names = a2, n2
	return s, nil
}

// Lookup returns "name+0xoff" for a text address, "" when unknown.
func (s *Symbols) Lookup(pc uint64) string {
	if s == nil || len(s.addrs) == 0 {
		return ""
	}
	i := sort.Search(len(s.addrs), func(i int) bool { return s.addrs[i] > pc }) - 1
	if i < 0 || pc-s.addrs[i] > 1<<20 {
		return ""
	}
	return fmt.Sprintf("%s+%#x", s.names[i], pc-s.addrs[i])
}

// Report reads a results directory's two records, analyzes them and writes
// ReportFile there; systemMap may be "" (no symbols). It returns the cases
// and whether any verdict failed.
func Report(dir, systemMap string) ([]*Case, bool, error) {
	pf, err := os.Open(filepath.Join(dir, PluginFile))
	if err != nil {
		return nil, false, fmt.Errorf("sharing: %w", err)
	}
	p, err := ParsePlugin(pf)
	pf.Close()
	if err != nil {
		return nil, false, fmt.Errorf("sharing: %s: %w", PluginFile, err)
	}
	var chunks []Chunk
	if cf, err := os.Open(filepath.Join(dir, ChunksFile)); err == nil {
		chunks, err = ParseChunks(cf)
		cf.Close()
		if err != nil {
			return nil, false, fmt.Errorf("sharing: %s: %w", ChunksFile, err)
		}
	} else if !os.IsNotExist(err) {
		return nil, false, fmt.Errorf("sharing: %w", err)
	}
	ms, err := Join(p, chunks)
	if err != nil {
		return nil, false, fmt.Errorf("sharing: %w", err)
	}
	var sym *Symbols
	if systemMap != "" {
		if sym, err = LoadSymbols(systemMap); err != nil {
			return nil, false, fmt.Errorf("sharing: System.map: %w", err)
		}
	}
	cases := Analyze(ms, sym)
	notes := []string{ReadIsolation(dir), siteNote(p)}
	failed := false
	for _, c := range cases {
		failed = failed || strings.HasPrefix(c.Verdict, "fail")
	}
	f, err := os.Create(filepath.Join(dir, ReportFile))
	if err != nil {
		return cases, failed, fmt.Errorf("sharing: %w", err)
	}
	FormatWith(f, cases, notes...)
	if err := f.Close(); err != nil {
		return cases, failed, fmt.Errorf("sharing: %s: %w", ReportFile, err)
	}
	return cases, failed, nil
}
