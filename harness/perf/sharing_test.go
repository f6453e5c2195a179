package perf_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnsuite/fsnsuite/harness/perf"
	"github.com/fsnsuite/fsnsuite/harness/sharing"
)

// TestSharingChunkLog runs an experiment natively in the sharing profile
// (the markers are no-ops outside qemu's plugin): every timed chunk is one
// line of the chunk log, warm-up and measured blocks apart, with the
// chunk's operations times Parallel, each condition's tag, and as many
// measured chunks per block and condition as the experiment's Chunks; the
// guest's kallsyms is copied beside it.
func TestSharingChunkLog(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(perf.SharingEnv, filepath.Join(dir, sharing.ChunksFile))
	cond := func(name string) perf.Condition {
		return perf.Condition{Name: name, Run: func(r *perf.Run) error {
			x := 0
			for i := 0; i < r.N*2000; i++ {
				x += i
			}
			_ = x
			return nil
		}}
	}
	o := perf.NewOptions()
	o.Budget = 300 * time.Millisecond
	e := &perf.Experiment{Suite: "perf_unit", Name: "share_n3", Base: cond("private"), Cond: cond("shared"),
		OpsPerRun: 400, Chunks: 4, Parallel: 3,
		Verify: func(perf.Stage, string) (string, error) { return "synthetic", nil }}
	res, err := e.Measure(o, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, sharing.ChunksFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunks, err := sharing.ParseChunks(f)
	if err != nil {
		t.Fatal(err)
	}
	perBlock := map[[2]int]int{}
	warm := 0
	for _, c := range chunks {
		if c.Suite != "perf_unit" || c.Case != "share_n3" || c.Mode != "gate" || c.Ops != 100*3 {
			t.Fatalf("chunk %+v: want perf_unit share_n3 gate, 100 ops x 3 clients", c)
		}
		if want := []string{"private", "shared"}[c.Tag]; c.Cond != want {
			t.Fatalf("chunk %+v: tag %d is %s", c, c.Tag, want)
		}
		if c.Phase == "warm" {
			warm++
			continue
		}
		perBlock[[2]int{c.Block, c.Tag}]++
	}
	if warm == 0 || len(perBlock) != 2*res.Blocks {
		t.Errorf("%d warm-up chunks, %d (block, condition) pairs for %d blocks", warm, len(perBlock), res.Blocks)
	}
	for k, n := range perBlock {
		if n != 4 {
			t.Errorf("block %d condition %d: %d chunks, want 4", k[0], k[1], n)
		}
	}
	if _, err := os.Stat("/proc/kallsyms"); err == nil {
		if st, err := os.Stat(filepath.Join(dir, perf.SharingKallsyms)); err != nil || st.Size() == 0 {
			t.Errorf("kallsyms beside the chunk log: %v", err)
		}
	}
}
