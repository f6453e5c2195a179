package memcg

import (
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
)

func TestStatField(t *testing.T) {
	stat := "anon 4096\nfile 0\nkernel 98304\nslab_reclaimable 1024\nslab 65536\nsock 0\n"
	v, err := statField(stat, "slab")
	assert.NilError(t, err)
	assert.Equal(t, v, int64(65536))
	_, err = statField(stat, "slab_unreclaimable")
	assert.ErrorContains(t, err, `no "slab_unreclaimable" line`)
	_, err = statField("slab x\n", "slab")
	assert.ErrorContains(t, err, "memory.stat slab")
}

func TestHasWord(t *testing.T) {
	assert.Assert(t, hasWord("cpuset cpu io memory pids\n", "memory"))
	assert.Assert(t, !hasWord("cpuset cpu io memory_recursiveprot pids", "memory"))
}

func TestSweepStale(t *testing.T) {
	dir := t.TempDir()
	// A plain directory stands in for a cgroup: rmdir works alike.
	dead, alive, other := StalePrefix+"999999999-x", StalePrefix+"1-y", "someone-else"
	for _, d := range []string{dead, alive, other} {
		assert.NilError(t, os.Mkdir(filepath.Join(dir, d), 0o755))
	}
	SweepStale(dir)
	_, err := os.Stat(filepath.Join(dir, dead))
	assert.Assert(t, os.IsNotExist(err), "a dead process's group is removed")
	for _, d := range []string{alive, other} {
		_, err := os.Stat(filepath.Join(dir, d))
		assert.NilError(t, err, d)
	}
}

func TestWriteAndCharged(t *testing.T) {
	dir := t.TempDir()
	g := &Group{Dir: dir}
	if err := os.WriteFile(filepath.Join(dir, "memory.max"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := g.Write("memory.max", "4096"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "memory.max")); string(b) != "4096" {
		t.Errorf("memory.max holds %q, want 4096", b)
	}
	if err := os.Symlink(filepath.Join(dir, "memory.max"), filepath.Join(dir, "memory.high")); err != nil {
		t.Fatal(err)
	}
	if err := g.Write("memory.high", "0"); err == nil {
		t.Errorf("Write followed a symlink")
	}
	if err := os.WriteFile(filepath.Join(dir, "memory.current"), []byte("8192\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := g.Charged(); err != nil || n != 8192 {
		t.Errorf("Charged = %d, %v; want 8192", n, err)
	}
	g.V1 = true
	if err := os.WriteFile(filepath.Join(dir, "memory.usage_in_bytes"), []byte("-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Charged(); err == nil {
		t.Errorf("Charged accepted a negative usage")
	}
}
