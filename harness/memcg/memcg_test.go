package memcg

import (
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
