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
