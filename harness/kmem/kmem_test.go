package kmem

import (
	"testing"

	"gotest.tools/v3/assert"
)

func TestLeaksNeedsEveryRound(t *testing.T) {
	th := int64(1 << 20)
	assert.Assert(t, Result{Growth: []int64{2 << 20, 1 << 20, 3 << 20}, Threshold: th}.Leaks())
	assert.Assert(t, !Result{Growth: []int64{2 << 20, 0, 3 << 20}, Threshold: th}.Leaks(), "one quiet round is no leak")
	assert.Assert(t, !Result{Threshold: th}.Leaks())
}

// Objects that are freed do not grow the slab; the counter reads.
func TestRunNoLeak(t *testing.T) {
	if _, err := Unreclaimable(); err != nil {
		t.Skip(err)
	}
	res, err := Check{PerRound: 64, Workers: 4, Rounds: 2, Leak: 1 << 30}.Run(func() error { return nil })
	assert.NilError(t, err)
	assert.Equal(t, len(res.Growth), 2)
	assert.Assert(t, !res.Leaks(), "%s", res)
}
