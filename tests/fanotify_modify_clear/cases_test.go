package main

import (
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fsnsuite/fsnsuite/harness/model"
)

// TestLackedFix runs every row through the model alone: what a kernel
// without a fix reports names a fix whose kernel reports it, and only when
// it differs from the fixed kernel's; the fixed kernel's trace, and one
// with an event no kernel gives, name none.
func TestLackedFix(t *testing.T) {
	withFix := 0
	for _, c := range table {
		fixed, _ := c.trace(model.Fixed)
		if f := c.lackedFix(fixed); f != nil {
			t.Errorf("%s: the fixed kernel's events name %s", c.name, f.Commit)
		}
		odd := fixed
		odd.events = append(slices.Clone(fixed.events), []uint32{unix.FAN_ATTRIB})
		if f := c.lackedFix(odd); f != nil {
			t.Errorf("%s: an extra step's event names %s", c.name, f.Commit)
		}
		fix := c.fix()
		if fix == nil {
			continue
		}
		withFix++
		named := false
		for _, p := range preFixes {
			tr, _ := c.trace(p.k)
			f := c.lackedFix(tr)
			if tr.equal(fixed) {
				continue
			}
			if f == nil {
				t.Errorf("%s: the events of a kernel without %s name no fix", c.name, p.fix.Commit)
				continue
			}
			// Its events with the fixed kernel's marks after the write
			// are neither kernel's.
			if mixed := (behaviour{events: tr.events, afterWrite: fixed.afterWrite}); !slices.Equal(tr.afterWrite, fixed.afterWrite) && c.lackedFix(mixed) != nil {
				t.Errorf("%s: the events of a kernel without %s, with the fixed kernel's marks, name a fix", c.name, p.fix.Commit)
			}
			named = named || f == fix
			for _, q := range preFixes {
				if qt, _ := c.trace(q.k); q.fix == f && !qt.equal(tr) {
					t.Errorf("%s: the events of a kernel without %s name %s, whose kernel reports otherwise", c.name, p.fix.Commit, f.Commit)
				}
			}
		}
		if !named {
			t.Errorf("%s: Fix %s, but the events of no pre-fix kernel name it", c.name, fix.Commit)
		}
	}
	if withFix == 0 {
		t.Fatalf("no row depends on a fix: the test checks nothing")
	}
}
