package queuelimit

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fsnsuite/fsnsuite/harness/fixture"
)

// fakeT records fatal messages and sysctl writes instead of making them.
type fakeT struct {
	fatal []string
	set   []string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.fatal = append(f.fatal, fmt.Sprintf(format, args...))
}
func (f *fakeT) SetSysctl(name, value string) (func(), error) {
	f.set = append(f.set, name+"="+value)
	return func() { f.set = append(f.set, "restored") }, nil
}

// A fillable system limit is used as it is, without touching the sysctl.
func TestOpenUsesTheSystemLimit(t *testing.T) {
	want, err := fixture.SysctlInt(Inotify.Sysctl)
	if err != nil {
		t.Skipf("%v", err)
	}
	if want > Fillable {
		t.Skipf("system limit %d is above %d", want, Fillable)
	}
	var f fakeT
	calls := 0
	got := Inotify.Open(&f, func() { calls++ })
	if got != want || calls != 1 || len(f.set) != 0 || len(f.fatal) != 0 {
		t.Fatalf("Open = %d (want %d), create called %d times, sysctl writes %v, fatal %v", got, want, calls, f.set, f.fatal)
	}
}

// A sysctl missing before the release that added it gives the fixed limit; on
// a kernel at or after that release it fails, naming the release.
func TestMissingSysctl(t *testing.T) {
	old := Queue{Sysctl: "fs.fsnsuite_no_such_sysctl", Fixed: 123, Since: "999.0"}
	if n, err := old.read(); err != nil || n != 123 {
		t.Fatalf("before Since: read = %d, %v; want 123", n, err)
	}
	now := Queue{Sysctl: "fs.fsnsuite_no_such_sysctl", Fixed: 123, Since: "2.6"}
	if _, err := now.read(); err == nil || !strings.Contains(err.Error(), "exists since 2.6") {
		t.Fatalf("after Since: read error %v, want one naming the release", err)
	}
	always := Queue{Sysctl: "fs.fsnsuite_no_such_sysctl"}
	if _, err := always.read(); err == nil {
		t.Fatal("a sysctl without a fixed fallback: read succeeded")
	}
}
