// Package execfile writes executable files (the fake binaries and scripts of
// the tests) so that they can be run at once, even while other goroutines
// start processes.
//
// A file that some process holds open for writing cannot be executed:
// execve(2) fails with ETXTBSY. os.WriteFile's descriptor is close-on-exec,
// but a child forked by another goroutine while it is open gets a copy that
// stays open until that child calls execve; running the new file in that
// window fails with "text file busy" (Go issue 22315). Fork takes
// syscall.ForkLock for writing; holding it for reading while the file is
// open keeps every fork out of that window.
package execfile

import (
	"os"
	"syscall"
)

// Write writes data to path with mode perm (os.WriteFile), with no fork in
// between its open and its close.
func Write(path string, data []byte, perm os.FileMode) error {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	return os.WriteFile(path, data, perm)
}
