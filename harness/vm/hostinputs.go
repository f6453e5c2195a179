package vm

import (
	"fmt"
	"path/filepath"
	"sort"
)

// HostFile is a host file Run puts in the guest.
type HostFile struct {
	// Guest is its path in the guest, Host the file it is copied from.
	Guest, Host string
}

// HostInputs is what Run takes from the host besides the kernel, BinDir,
// Files and Modules: the qemu executable it would start (looked up as Run
// looks it up, symlinks resolved) and the files it would put in the
// guest's initramfs: busybox, mke2fs with its libraries and
// /etc/mke2fs.conf, and debugfs, mkfs.xfs and mkfs.btrfs with theirs when
// the host has them, sorted by guest path. It copies, builds and starts
// nothing: it is for a cache of runs, whose results depend on these
// (harness/patchcheck's base runs).
func (c Config) HostInputs() (qemu string, files []HostFile, err error) {
	if c.Busybox == "" {
		c.Busybox = DefaultBusybox
	}
	if c.QEMU == "" {
		c.QEMU = DefaultQEMU
	}
	c.Progress = nil // Run warns about a missing tool; this only lists
	p, err := lookPath(c.QEMU)
	if err != nil {
		return "", nil, fmt.Errorf("vm: %s not found: %w", c.QEMU, err)
	}
	if qemu, err = filepath.EvalSymlinks(p); err != nil {
		return "", nil, fmt.Errorf("vm: qemu: %w", err)
	}
	seen := map[string]string{}
	s := &staging{record: func(guest, src string) { seen[guest] = src }}
	if err := s.add("/bin/busybox", c.Busybox); err != nil {
		return "", nil, err
	}
	if err := addMke2fs(&c, s); err != nil {
		return "", nil, err
	}
	if err := addGuestTools(&c, s); err != nil {
		return "", nil, err
	}
	for g, h := range seen {
		files = append(files, HostFile{Guest: g, Host: h})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Guest < files[j].Guest })
	return qemu, files, nil
}
