// Command inotify_basic checks inotify(7)'s basic event reporting.
package main

import (
	"github.com/fsnsuite/fsnsuite/harness"
	"github.com/fsnsuite/fsnsuite/harness/expect"
	"github.com/fsnsuite/fsnsuite/harness/feature"
	"github.com/fsnsuite/fsnsuite/harness/inotify"
	"golang.org/x/sys/unix"
)

func main() {
	harness.Main(harness.Suite{
		Name:        "inotify_basic",
		Doc:         "inotify(7) events with names, cookies, flags and errnos",
		Needs:       []*feature.Feature{feature.Inotify},
		Filesystems: []string{"tmpfs", "ext4"},
		Cases:       cases,
	})
}

var cases = []harness.Case{
	{
		Name: "create_in_dir",
		Doc:  "IN_CREATE on a watched directory names the new file (inotify(7))",
		Run: func(t *harness.T) {
			in := t.Inotify(0)
			wd, err := in.AddWatch(t.Dir(), unix.IN_CREATE)
			if err != nil {
				t.Fatal(err)
			}
			a := t.Actor()
			if err := a.Touch(t.Path("f")); err != nil {
				t.Fatal(err)
			}
			got, err := in.Drain()
			if err != nil {
				t.Fatal(err)
			}
			expect.Inotify(t, "watch dir IN_CREATE; create f", got, []inotify.Event{{Wd: wd, Mask: unix.IN_CREATE, Name: "f"}})
		},
	},
}
