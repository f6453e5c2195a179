package markmirror_test

import (
	"testing"

	"golang.org/x/sys/unix"
	"gotest.tools/v3/assert"

	"github.com/fsnsuite/fsnsuite/harness/markmirror"
	"github.com/fsnsuite/fsnsuite/harness/model"
)

// The model keeps one mark per location, updated in place by later calls,
// and lists them self, parent, mount, fs whatever the order of the calls.
func TestMarksAddAndList(t *testing.T) {
	m := markmirror.NewMarks(3, false)
	mount := model.Target{Loc: model.LocMount, IsDir: true}
	self := model.Target{Loc: model.LocSelf}
	assert.Equal(t, m.Add(mount, 0, unix.FAN_OPEN), unix.Errno(0))
	assert.Equal(t, m.Add(self, 0, unix.FAN_OPEN), unix.Errno(0))
	assert.Equal(t, m.Add(self, unix.FAN_MARK_IGNORED_MASK, unix.FAN_OPEN), unix.Errno(0))
	l := m.List()
	assert.Equal(t, len(l), 2)
	assert.Equal(t, l[0].Loc, model.LocSelf)
	assert.Equal(t, l[0].Group, 3)
	assert.Equal(t, l[0].Mask, uint32(unix.FAN_OPEN))
	assert.Equal(t, l[0].Ignore, uint32(unix.FAN_OPEN))
	assert.Equal(t, l[1].Loc, model.LocMount)
	m.Forget(model.LocSelf)
	assert.Assert(t, m.At(model.LocSelf) == nil)
	assert.Equal(t, len(m.List()), 1)
}

// Predict answers without changing the model.
func TestPredictLeavesTheModel(t *testing.T) {
	m := markmirror.NewMarks(0, false)
	nm, errno := m.Predict(model.Target{Loc: model.LocParent, IsDir: true}, 0, unix.FAN_OPEN|unix.FAN_EVENT_ON_CHILD)
	assert.Equal(t, errno, unix.Errno(0))
	assert.Assert(t, nm != nil)
	assert.Assert(t, m.At(model.LocParent) == nil)
}

// AllMarks lists group by group.
func TestAllMarks(t *testing.T) {
	a, b := markmirror.NewMarks(0, false), markmirror.NewMarks(1, false)
	b.Add(model.Target{Loc: model.LocSelf}, 0, unix.FAN_OPEN)
	a.Add(model.Target{Loc: model.LocMount, IsDir: true}, 0, unix.FAN_OPEN)
	all := markmirror.AllMarks([]*markmirror.Marks{a, b})
	assert.Equal(t, len(all), 2)
	assert.Equal(t, all[0].Group, 0)
	assert.Equal(t, all[1].Group, 1)
}

// Places name the object of each location and say which are directories.
func TestPlaces(t *testing.T) {
	p := markmirror.Places{Self: "/r/d/sub", Parent: "/r/d", Root: "/r", SelfIsDir: true}
	assert.Equal(t, p.Path(model.LocSelf), "/r/d/sub")
	assert.Equal(t, p.Path(model.LocParent), "/r/d")
	assert.Equal(t, p.Path(model.LocMount), "/r")
	assert.Equal(t, p.Path(model.LocFS), "/r")
	assert.Assert(t, p.Target(model.LocSelf).IsDir)
	assert.Assert(t, p.Target(model.LocParent).IsDir)
	p.SelfIsDir = false
	assert.Assert(t, !p.Target(model.LocSelf).IsDir)
}
