// Command walker plays another program on the machine (an indexer, a
// backup, a virus scanner) for the hostile condition
// other_program_walks_the_tree: for -for, it walks the directory given as
// its argument over and over, opening and reading one byte of every
// regular file and listing every directory, in one long-lived process (so
// that the events it causes carry the pid of a process that is still
// running). It skips FIFOs and devices (an open would wait for a peer) and
// ignores files that vanish under it. On exit it prints on stderr how many
// files it read.
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

func main() {
	d := flag.Duration("for", 10*time.Second, "how long to walk")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: walker [-for DURATION] DIR")
		os.Exit(2)
	}
	root := flag.Arg(0)
	end := time.Now().Add(*d)
	n := 0
	buf := make([]byte, 1)
	for time.Now().Before(end) {
		before := n
		filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil || !e.Type().IsRegular() {
				return nil
			}
			f, err := os.Open(p)
			if err != nil {
				return nil
			}
			f.Read(buf)
			f.Close()
			n++
			return nil
		})
		if n == before {
			time.Sleep(10 * time.Millisecond) // nothing there (yet, or any more)
		}
	}
	fmt.Fprintf(os.Stderr, "walker: read %d files\n", n)
}
