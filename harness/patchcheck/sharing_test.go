package patchcheck

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/fsnsuite/fsnsuite/harness/perf"
	"github.com/fsnsuite/fsnsuite/harness/sharing"
	"github.com/fsnsuite/fsnsuite/tap"
)

// writeSharing writes a sharing profile's two records for shared_private_n2
// into dir: 12 blocks of 4 windows per condition of 2000 writes, with the
// given remote writes per window (private, shared).
func writeSharing(t *testing.T, dir string, remote [2]int) {
	t.Helper()
	var p, c strings.Builder
	p.WriteString("fsnshare version=1 vcpus=2 line=64 kernel_half=0xffff800000000000\n")
	seq := 0
	for b := 0; b < 12; b++ {
		for j := 0; j < 8; j++ {
			tag := (j/2 + b) % 2
			seq++
			fmt.Fprintf(&p, "window seq=%d tag=%d stores=600000 lines=300 shared_writes=%d shared_lines=2 remote_writes=%d transfers=2 vcpus=2\n",
				seq, tag, 10*remote[tag], remote[tag])
			c.WriteString(perf.SharingChunkLine("perf_parent_write", "shared_private_n2", "gate", "", []string{"private", "shared"}[tag], tag, b, 2000))
		}
	}
	p.WriteString("end windows=96\n")
	assert.NilError(t, os.WriteFile(filepath.Join(dir, sharing.PluginFile), []byte(p.String()), 0o644))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, sharing.ChunksFile), []byte(c.String()), 0o644))
}

// With SharingPlugin the cost step runs perf_parent_write alone under
// -vm-sharing on both kernels and compares remote-writes/op per condition:
// +1.5 per write on the shared directory fails the +0.1 gate, private passes.
func TestSharingCost(t *testing.T) {
	same := map[string]tap.Status{"a": tap.StatusPass}
	cfg := setup(t, same, same)
	root := filepath.Dir(cfg.Suite)
	writeSharing(t, filepath.Join(root, "base"), [2]int{11, 11})
	writeSharing(t, filepath.Join(root, "patched"), [2]int{11, 3011})
	cfg.NoCorrectness, cfg.Cost, cfg.SharingPlugin = true, true, "/x/fsnshare.so"
	res, err := Run(context.Background(), cfg)
	assert.NilError(t, err)
	assert.Equal(t, res.SharingErr, "")
	assert.Assert(t, is.Len(res.Sharing, 2))
	assert.Equal(t, res.Sharing[0].Cond, "private")
	assert.Equal(t, res.Sharing[0].Verdict, "pass")
	assert.Equal(t, res.Sharing[1].Cond, "shared")
	assert.Equal(t, res.Sharing[1].Verdict, "fail")
	calls, err := os.ReadFile(filepath.Join(root, "calls"))
	assert.NilError(t, err)
	assert.Assert(t, is.Contains(string(calls), "-vm-sharing /x/fsnshare.so"))
	rt, err := os.ReadFile(filepath.Join(cfg.Out, "cost-save.runtest"))
	assert.NilError(t, err)
	assert.Equal(t, string(rt), "perf_parent_write perf_parent_write -save /results/perf_parent_write\n")
	var b strings.Builder
	assert.NilError(t, res.WriteText(&b))
	assert.Assert(t, is.Contains(b.String(), "| shared_private_n2 | shared | 0.0055 | 1.506 |"))
}
