package sharing

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// traceDriver builds scripts/vm/sharing's counting core with its trace
// driver (fsnshare_trace.c) using gcc, or skips saying why.
func traceDriver(t *testing.T) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found: the plugin's counting core (C) cannot be built here")
	}
	src := filepath.Join("..", "..", "scripts", "vm", "sharing")
	bin := filepath.Join(t.TempDir(), "fsnshare_trace")
	out, err := exec.Command(gcc, "-O2", "-Wall", "-Wextra", "-Werror", "-o", bin,
		filepath.Join(src, "fsnshare_core.c"), filepath.Join(src, "fsnshare_trace.c")).CombinedOutput()
	if err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}

func runTrace(t *testing.T, bin, trace string) *Plugin {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Stdin = strings.NewReader(trace)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fsnshare_trace: %v\n%s", err, out)
	}
	p, err := ParsePlugin(strings.NewReader(string(out)))
	if err != nil {
		t.Fatalf("parse %q: %v", out, err)
	}
	return p
}

const (
	kpc  = "ffffffff81234560" // a kernel instruction (upper canonical half)
	kpc2 = "ffffffff81234570"
	upc  = "401000" // a user-mode instruction
)

// TestCoreTrace feeds the plugin's counting core synthetic traces and checks
// each figure of the window against what fsnshare_core.h defines.
func TestCoreTrace(t *testing.T) {
	bin := traceDriver(t)
	store := func(vcpu int, pc string, phys uint64) string {
		return fmt.Sprintf("store %d %s %x\n", vcpu, pc, phys)
	}
	for _, tc := range []struct {
		name  string
		trace string
		want  Window // Seq and Hot not compared
	}{
		{
			name: "two_vcpus_one_line_alternating",
			// A line written by vCPUs 0 and 1: all 4 writes are shared, 2
			// of them not by its main writer; each write after another
			// vCPU's is a transfer (3).
			trace: "start 1\n" + store(0, kpc, 0x1000) + store(1, kpc, 0x1008) + store(0, kpc, 0x1010) + store(1, kpc, 0x103f) + "stop 1\n",
			want:  Window{Tag: 1, Stores: 4, Lines: 1, SharedWrites: 4, SharedLines: 1, RemoteWrites: 2, Transfers: 3, VCPUs: 2},
		},
		{
			name: "two_vcpus_one_line_in_runs",
			// The same writes in another interleaving: shared and remote
			// writes do not change, transfers do (1).
			trace: "start 1\n" + store(0, kpc, 0x1000) + store(0, kpc, 0x1010) + store(1, kpc, 0x1008) + store(1, kpc, 0x103f) + "stop 1\n",
			want:  Window{Tag: 1, Stores: 4, Lines: 1, SharedWrites: 4, SharedLines: 1, RemoteWrites: 2, Transfers: 1, VCPUs: 2},
		},
		{
			name: "private_lines",
			// Each vCPU its own line (0x1040 is the line after 0x1000's):
			// nothing shared, no transfer.
			trace: "start 0\n" + store(0, kpc, 0x1000) + store(1, kpc, 0x1040) + store(0, kpc, 0x1030) + store(1, kpc, 0x107f) + "stop 0\n",
			want:  Window{Tag: 0, Stores: 4, Lines: 2, VCPUs: 2},
		},
		{
			name: "user_mode_ignored",
			// Stores of user-mode instructions to one line from two vCPUs
			// (the Go runtime's own sharing) are not counted.
			trace: "start 0\n" + store(0, upc, 0x2000) + store(1, upc, 0x2000) + store(0, kpc, 0x3000) + "stop 0\n",
			want:  Window{Tag: 0, Stores: 1, Lines: 1, VCPUs: 1},
		},
		{
			name: "outside_window_ignored",
			// Before start and after stop nothing counts; a window starts empty.
			trace: store(0, kpc, 0x1000) + store(1, kpc, 0x1000) + "start 2\n" + store(1, kpc, 0x1000) + "stop 2\n" + store(0, kpc, 0x1000),
			want:  Window{Tag: 2, Stores: 1, Lines: 1, VCPUs: 1},
		},
		{
			name: "shared_and_private_mixed",
			// Line A by 0,1,2 (3 writes, 2 remote), line B by 1 only (2
			// writes), line C by 0,2 (2 writes, 1 remote).
			trace: "start 3\n" + store(0, kpc, 0xa000) + store(1, kpc, 0xa000) + store(2, kpc2, 0xa000) +
				store(1, kpc, 0xb000) + store(1, kpc, 0xb000) + store(0, kpc, 0xc000) + store(2, kpc, 0xc000) + "stop 3\n",
			want: Window{Tag: 3, Stores: 7, Lines: 3, SharedWrites: 5, SharedLines: 2, RemoteWrites: 3, Transfers: 3, VCPUs: 3},
		},
		{
			name: "vcpu_not_joined_ignored",
			// vCPU 1 leaves (its thread waits; another thread, say the Go
			// runtime's, writes the line there): only vCPU 0 counts.
			trace: "leave 1\nstart 0\n" + store(0, kpc, 0x1000) + store(1, kpc, 0x1000) + store(0, kpc, 0x1000) + "join 1\n" + store(1, kpc, 0x2000) + "stop 0\n",
			want:  Window{Tag: 0, Stores: 3, Lines: 2, VCPUs: 2},
		},
		{
			name: "one_remote_write",
			// One vCPU writes a line 5 times, another once (a wake-up writing
			// the waiter's futex_q on its stack): 6 shared writes, 1 remote.
			trace: "start 0\n" + store(0, kpc, 0x1000) + store(0, kpc, 0x1000) + store(1, kpc2, 0x1000) +
				store(0, kpc, 0x1000) + store(0, kpc, 0x1000) + store(0, kpc, 0x1000) + "stop 0\n",
			want: Window{Tag: 0, Stores: 6, Lines: 1, SharedWrites: 6, SharedLines: 1, RemoteWrites: 1, Transfers: 2, VCPUs: 2},
		},
		{
			name:  "stop_tag_mismatch",
			trace: "start 1\n" + store(0, kpc, 0x1000) + "stop 0\n",
			want:  Window{Tag: 1, Stores: 1, Lines: 1, VCPUs: 1, TagMismatch: true},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Every vCPU of these traces runs a measured thread.
			p := runTrace(t, bin, "join 0\njoin 1\njoin 2\n"+tc.trace)
			if len(p.Windows) != 1 {
				t.Fatalf("windows: got %d, want 1", len(p.Windows))
			}
			got := p.Windows[0]
			got.Seq, got.Hot = 0, nil
			if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", tc.want) {
				t.Errorf("window:\n got  %+v\n want %+v", got, tc.want)
			}
		})
	}
}

// TestCoreHot checks the described lines: the shared lines with the most
// remote writes first, with the majority writing instruction, private lines
// never.
func TestCoreHot(t *testing.T) {
	bin := traceDriver(t)
	tr := "join 0\njoin 1\nstart 0\n"
	for i := 0; i < 3; i++ {
		tr += fmt.Sprintf("store %d %s 5000\nstore %d %s 5008\n", i%2, kpc, (i+1)%2, kpc)
	}
	tr += fmt.Sprintf("store 0 %s 6000\nstore 1 %s 6000\nstore 1 %s 6000\n", kpc2, kpc2, kpc)
	tr += strings.Repeat(fmt.Sprintf("store 0 %s 8000\n", kpc2), 6) + fmt.Sprintf("store 1 %s 8000\n", kpc)
	tr += fmt.Sprintf("store 0 %s 7000\nstore 0 %s 7000\nstore 0 %s 7000\nstore 0 %s 7000\nstop 0\n", kpc, kpc, kpc, kpc)
	p := runTrace(t, bin, tr)
	w := p.Windows[0]
	// 0x5000: 3 remote writes; 0x8000 and 0x6000 one each, 0x8000 first
	// (more writes); 0x7000 private.
	want := []Hot{{Line: 0x5000, Writes: 6, Remote: 3, Writers: 3, PC: 0xffffffff81234560},
		{Line: 0x8000, Writes: 7, Remote: 1, Writers: 3, PC: 0xffffffff81234570},
		{Line: 0x6000, Writes: 3, Remote: 1, Writers: 3, PC: 0xffffffff81234570}}
	if fmt.Sprint(w.Hot) != fmt.Sprint(want) {
		t.Errorf("hot lines:\n got  %+v\n want %+v", w.Hot, want)
	}
}

// TestCoreMarker checks the marker's decoding: nopl disp32(%rax), 0f 1f 80
// and disp32 = 0x4653<<16 | op<<8 | tag.
func TestCoreMarker(t *testing.T) {
	bin := traceDriver(t)
	cmd := exec.Command(bin)
	cmd.Stdin = strings.NewReader("marker 0f1f8005015346\nmarker 0f1f80ff025346\nmarker 0f1f8000065346\nmarker 0f1f8000035346\nmarker 0f1f8000015347\nmarker 0f1f400001\nmarker 0f1f800001534600\nmarker 0f1f8000055346\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "marker 1 5\nmarker 2 255\nmarker none\nmarker 3 0\nmarker none\nmarker none\nmarker none\nmarker 5 0\n"
	if got, _, _ := strings.Cut(string(out), "end "); got != want {
		t.Errorf("markers:\n got  %q\n want %q", got, want)
	}
}

// TestCoreGrowth writes more distinct lines than the table's first size,
// then checks a second window starts from nothing.
func TestCoreGrowth(t *testing.T) {
	bin := traceDriver(t)
	var b strings.Builder
	b.WriteString("join 0\njoin 1\nstart 0\n")
	for i := 0; i < 100000; i++ {
		fmt.Fprintf(&b, "store %d %s %x\n", i%2, kpc, uint64(i)<<6)
	}
	b.WriteString("stop 0\nstart 1\n" + "store 0 " + kpc + " 40\nstop 1\n")
	p := runTrace(t, bin, b.String())
	if len(p.Windows) != 2 || p.Windows[0].Lines != 100000 || p.Windows[0].SharedLines != 0 || p.Windows[1].Lines != 1 || p.Windows[1].Stores != 1 {
		t.Errorf("windows %+v", p.Windows)
	}
	if !strings.Contains(p.End, "oom=0") {
		t.Errorf("end line %q", p.End)
	}
}

// TestCoreJoinedAtStart: the engine's protocol (start, join, ..., leave,
// stop) leaves no vCPU joined at the next start; a join without its leave
// (a Crew's warm-up run before the fix) is counted in the end line, which
// Join refuses.
func TestCoreJoinedAtStart(t *testing.T) {
	bin := traceDriver(t)
	window := "start 0\njoin 1\nstore 1 " + kpc + " 1000\nleave 1\nstop 0\n"
	for _, tc := range []struct {
		name, trace, want string
	}{
		{"paired", window + window, "joined_at_start=0"},
		{"join_left_over", "join 1\n" + window, "joined_at_start=1"},
		{"leave_without_join", "leave 1\njoin 1\n" + window + window, "joined_at_start=2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := runTrace(t, bin, tc.trace)
			if !strings.Contains(p.End, " "+tc.want+" ") {
				t.Errorf("end line %q, want %s", p.End, tc.want)
			}
		})
	}
}

// TestCoreSyscallSite: once the workload's syscall site is learned, a
// measured vCPU's kernel stores count only after a syscall from that site;
// those after another site's syscall (the Go runtime's futex when a
// preempted goroutine hands its P over) are left out and counted as
// foreign. Before any site is learned every store counts.
func TestCoreSyscallSite(t *testing.T) {
	bin := traceDriver(t)
	const workload, runtimeFutex = "401000", "402000"
	store := func(phys string) string { return "store 1 " + kpc + " " + phys + "\n" }
	for _, tc := range []struct {
		name, trace string
		want        Window // Seq and Hot not compared
		sites       string
	}{
		{"nothing_learned", "join 1\nstart 0\nsyscall 1 " + runtimeFutex + "\n" + store("1000") + "leave 1\nstop 0\n",
			Window{Stores: 1, Lines: 1, VCPUs: 1}, "sites=0"},
		{"after_the_runtime's_syscall", "learn 1\nsyscall 1 " + workload + "\njoin 1\nstart 0\n" + store("1000") +
			"syscall 1 " + runtimeFutex + "\n" + store("2000") + store("3000") + "syscall 1 " + workload + "\n" + store("4000") + "leave 1\nstop 0\n",
			Window{Stores: 2, Lines: 2, VCPUs: 1, Foreign: 2}, "sites=1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := runTrace(t, bin, tc.trace)
			if len(p.Windows) != 1 {
				t.Fatalf("windows: got %d, want 1", len(p.Windows))
			}
			got := p.Windows[0]
			got.Seq, got.Hot = 0, nil
			if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", tc.want) {
				t.Errorf("window:\n got  %+v\n want %+v", got, tc.want)
			}
			if !strings.Contains(p.End, tc.sites+" ") {
				t.Errorf("end line %q, want %s", p.End, tc.sites)
			}
		})
	}
}
