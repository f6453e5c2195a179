package vm

import (
	"bytes"
	"debug/elf"
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

//go:embed init.sh
var initScript []byte

// busyboxApplets are linked to busybox in the guest's /bin: what init.sh
// uses plus a few tools handy in test helpers. mke2fs and mkfs.* are left
// out on purpose: the guest gets the real e2fsprogs mke2fs.
var busyboxApplets = []string{
	"sh", "mount", "umount", "mkdir", "mknod", "cat", "echo", "dd", "insmod", "rmmod",
	"lsmod", "reboot", "poweroff", "stty", "tar", "gzip", "base64", "sleep", "uname",
	"zcat", "grep", "ls", "rm", "ln", "cp", "mv", "sync", "nproc", "true", "false",
	"test", "[", "env", "id", "ps", "kill", "dmesg", "sed", "awk", "head", "tail",
	"wc", "cut", "sort", "touch", "chmod", "stat", "losetup", "sysctl", "taskset",
}

// libDirs are searched for an ELF's DT_NEEDED libraries.
var libDirs = []string{
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib",
}

// staging collects the initramfs tree in a host directory. With record set
// it only lists the host files it would copy (HostInputs) and writes nothing.
type staging struct {
	root   string
	record func(guest, src string)
}

func (s *staging) path(guest string) string {
	return filepath.Join(s.root, filepath.FromSlash(strings.TrimPrefix(guest, "/")))
}

func (s *staging) mkdir(guest string) error {
	return os.MkdirAll(s.path(guest), 0o755)
}

// add copies (or hard-links) the host file src to the guest path, keeping
// its permission bits.
func (s *staging) add(guest, src string) error {
	if s.record != nil {
		s.record(guest, src)
		return nil
	}
	dst := s.path(guest)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("vm: staging %s: %w", guest, err)
	}
	_ = os.Remove(dst)
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("vm: staging %s: %w", guest, err)
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return fmt.Errorf("vm: staging %s: %w", guest, err)
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, st.Mode().Perm())
	if err != nil {
		return fmt.Errorf("vm: staging %s: %w", guest, err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("vm: staging %s from %s: %w", guest, src, err)
	}
	return out.Close()
}

func (s *staging) write(guest string, data []byte, mode os.FileMode) error {
	dst := s.path(guest)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("vm: staging %s: %w", guest, err)
	}
	if err := os.WriteFile(dst, data, mode); err != nil {
		return fmt.Errorf("vm: staging %s: %w", guest, err)
	}
	return os.Chmod(dst, mode)
}

func (s *staging) symlink(guest, target string) error {
	if s.record != nil {
		return nil
	}
	dst := s.path(guest)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("vm: staging %s: %w", guest, err)
	}
	_ = os.Remove(dst)
	if err := os.Symlink(target, dst); err != nil {
		return fmt.Errorf("vm: staging %s: %w", guest, err)
	}
	return nil
}

// shQuote quotes s for a POSIX shell.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// buildInitramfs stages the guest tree under work/root and packs it into
// work/initramfs.cpio. It returns the perf binaries it left out.
func buildInitramfs(cfg *Config, work string, withPerf bool) (initrd string, leftOut []string, err error) {
	s := &staging{root: filepath.Join(work, "root")}
	if err := os.RemoveAll(s.root); err != nil {
		return "", nil, fmt.Errorf("vm: clearing %s: %w", s.root, err)
	}
	for _, d := range []string{"/proc", "/sys", "/dev", "/tmp", "/run", "/root", "/results", "/etc/fsnsuite", "/usr/bin", "/sbin", "/usr/sbin", GuestBinDir} {
		if err := s.mkdir(d); err != nil {
			return "", nil, fmt.Errorf("vm: staging: %w", err)
		}
	}
	if os.Geteuid() == 0 {
		// The kernel opens /dev/console for /init before devtmpfs is mounted.
		_ = mknodConsole(s.path("/dev/console"))
	}

	// Runner and test binaries.
	ents, err := os.ReadDir(cfg.BinDir)
	if err != nil {
		return "", nil, fmt.Errorf("vm: reading BinDir: %w", err)
	}
	haveRunner := false
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		name := e.Name()
		src := filepath.Join(cfg.BinDir, name)
		if st, err := os.Stat(src); err != nil || st.Mode().Perm()&0o111 == 0 {
			continue
		}
		if name == RunnerName {
			haveRunner = true
		} else if !withPerf && cfg.IsPerf(name) {
			leftOut = append(leftOut, name)
			continue
		}
		if err := checkStatic(src); err != nil {
			return "", nil, err
		}
		if err := s.add(GuestBinDir+"/"+name, src); err != nil {
			return "", nil, err
		}
	}
	if !haveRunner {
		return "", nil, fmt.Errorf("vm: %s not found in %s (build it first: make)", RunnerName, cfg.BinDir)
	}
	for guest, src := range cfg.Files {
		if err := s.add(guest, src); err != nil {
			return "", nil, err
		}
	}

	// busybox and the applets init.sh uses.
	if err := checkStatic(cfg.Busybox); err != nil {
		return "", nil, fmt.Errorf("vm: %w (install busybox-static, e.g. scripts/vm/deps.sh)", err)
	}
	if err := s.add("/bin/busybox", cfg.Busybox); err != nil {
		return "", nil, err
	}
	for _, a := range busyboxApplets {
		if err := s.symlink("/bin/"+a, "busybox"); err != nil {
			return "", nil, err
		}
	}

	// mke2fs (as mkfs.ext4) with its shared libraries.
	if err := addMke2fs(cfg, s); err != nil {
		return "", nil, err
	}
	// debugfs, mkfs.xfs and mkfs.btrfs with theirs, when the host has them.
	if err := addGuestTools(cfg, s); err != nil {
		return "", nil, err
	}

	// Kernel modules.
	var modList []string
	if cfg.Modules != "" {
		tree, err := loadModuleTree(cfg.Modules)
		if err != nil {
			return "", nil, err
		}
		cfg.modVersion = tree.version
		order, notFound := tree.resolve(cfg.LoadModules)
		if len(notFound) > 0 {
			cfg.progressf("warning: modules not in %s nor built in: %s", tree.dir, strings.Join(notFound, " "))
		}
		for _, rel := range order {
			guest := guestModulePath(tree.version, rel)
			if err := tree.copyModule(rel, s.path(guest)); err != nil {
				return "", nil, fmt.Errorf("vm: module %s: %w", rel, err)
			}
			modList = append(modList, guest)
		}
		names := make([]string, len(order))
		for i, rel := range order {
			names[i] = modName(rel)
		}
		cfg.progressf("modules from %s: %s", tree.dir, strings.Join(names, " "))
	}
	if len(modList) > 0 {
		if err := s.write("/etc/fsnsuite/modules", []byte(strings.Join(modList, "\n")+"\n"), 0o644); err != nil {
			return "", nil, err
		}
	}

	// /init and its run configuration.
	var conf bytes.Buffer
	fmt.Fprintf(&conf, "runner=%s\n", shQuote(GuestBinDir+"/"+RunnerName))
	for _, kv := range cfg.Env {
		if !strings.Contains(kv, "=") {
			return "", nil, fmt.Errorf("vm: Env entry %q is not KEY=VALUE", kv)
		}
		fmt.Fprintf(&conf, "export %s\n", shQuote(kv))
	}
	if len(leftOut) > 0 {
		fmt.Fprintf(&conf, "export %s\n", shQuote(LeftOutEnv+"="+strings.Join(leftOut, " ")))
	}
	if cfg.ResultsDir != "" {
		if abs, err := filepath.Abs(cfg.ResultsDir); err == nil {
			fmt.Fprintf(&conf, "export %s\n", shQuote(HostResultsEnv+"="+abs))
		}
	}
	if cfg.GcovDir != "" {
		conf.WriteString("gcov=1\n")
	}
	if cfg.housekeeping {
		// /init binds itself, so every process it starts, to vCPU 0
		// (taskset -p, mask 0x1); the perf engine pins its threads to
		// PerfCPUsEnv's.
		conf.WriteString("housekeeping=0x1\n")
	}
	conf.WriteString("set --")
	for _, a := range cfg.Args {
		conf.WriteString(" " + shQuote(a))
	}
	conf.WriteString("\n")
	if err := s.write("/etc/fsnsuite/run.conf", conf.Bytes(), 0o644); err != nil {
		return "", nil, err
	}
	if err := s.write("/init", initScript, 0o755); err != nil {
		return "", nil, err
	}
	if err := s.write("/etc/passwd", []byte("root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"), 0o644); err != nil {
		return "", nil, err
	}
	if err := s.write("/etc/group", []byte("root:x:0:\nnogroup:x:65534:\n"), 0o644); err != nil {
		return "", nil, err
	}

	initrd = filepath.Join(work, "initramfs.cpio")
	if err := packCpio(s.root, initrd); err != nil {
		return "", nil, err
	}
	return initrd, leftOut, nil
}

// checkStatic fails for a dynamically linked executable: the guest has no
// libraries for it.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return nil // scripts and the like: not our business
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("vm: %s is dynamically linked; the guest needs static binaries (CGO_ENABLED=0)", path)
		}
	}
	return nil
}

// addMke2fs puts the host's mke2fs in the guest as /usr/sbin/mke2fs and
// mkfs.ext{2,3,4}, with its ELF interpreter and libraries.
func addMke2fs(cfg *Config, s *staging) error {
	path := cfg.Mke2fs
	if path == "" {
		for _, c := range []string{"mke2fs", "/sbin/mke2fs", "/usr/sbin/mke2fs"} {
			if p, err := lookPath(c); err == nil {
				path = p
				break
			}
		}
	}
	if path == "" {
		cfg.progressf("warning: mke2fs not found on the host (install e2fsprogs): ext4 cases will skip in the guest")
		return nil
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return fmt.Errorf("vm: mke2fs: %w", err)
	}
	if err := s.add("/usr/sbin/mke2fs", real); err != nil {
		return err
	}
	for _, n := range []string{"mkfs.ext4", "mkfs.ext3", "mkfs.ext2"} {
		if err := s.symlink("/usr/sbin/"+n, "mke2fs"); err != nil {
			return err
		}
	}
	if _, err := os.Stat("/etc/mke2fs.conf"); err == nil {
		if err := s.add("/etc/mke2fs.conf", "/etc/mke2fs.conf"); err != nil {
			return err
		}
	}
	return addELFDeps(s, real, map[string]bool{})
}

// guestTools are host tools the guest gets in /usr/sbin, with their
// libraries, when the host has them (scripts/deps.sh installs them): debugfs
// corrupts an ext4 inode for fanotify_fs_error's FAN_FS_ERROR cases, mkfs.xfs
// and mkfs.btrfs make the xfs and btrfs fixtures. A tool the host lacks is
// left out with a warning; the cases needing it skip in the guest, saying so.
var guestTools = []string{"debugfs", "mkfs.xfs", "mkfs.btrfs"}

// addGuestTools copies each of guestTools found on the host into the guest.
func addGuestTools(cfg *Config, s *staging) error {
	done := map[string]bool{}
	for _, name := range guestTools {
		path := ""
		for _, c := range []string{name, "/sbin/" + name, "/usr/sbin/" + name} {
			if p, err := lookPath(c); err == nil {
				path = p
				break
			}
		}
		if path == "" {
			cfg.progressf("warning: %s not found on the host (scripts/deps.sh installs it): the cases needing it will skip in the guest", name)
			continue
		}
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return fmt.Errorf("vm: %s: %w", name, err)
		}
		if err := s.add("/usr/sbin/"+name, real); err != nil {
			return err
		}
		if err := addELFDeps(s, real, done); err != nil {
			return err
		}
	}
	return nil
}

// addELFDeps copies the interpreter and the DT_NEEDED libraries of the ELF
// file at path, recursively, to the same paths in the guest.
func addELFDeps(s *staging, path string, done map[string]bool) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("vm: reading ELF %s: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		b := make([]byte, p.Filesz)
		if _, err := p.ReadAt(b, 0); err != nil {
			return fmt.Errorf("vm: reading interpreter of %s: %w", path, err)
		}
		interp := strings.TrimRight(string(b), "\x00")
		if !done[interp] {
			done[interp] = true
			real, err := filepath.EvalSymlinks(interp)
			if err != nil {
				return fmt.Errorf("vm: interpreter of %s: %w", path, err)
			}
			if err := s.add(interp, real); err != nil {
				return err
			}
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		return fmt.Errorf("vm: libraries of %s: %w", path, err)
	}
	for _, lib := range libs {
		if done[lib] {
			continue
		}
		done[lib] = true
		found := ""
		for _, d := range libDirs {
			if _, err := os.Stat(filepath.Join(d, lib)); err == nil {
				found = filepath.Join(d, lib)
				break
			}
		}
		if found == "" {
			return fmt.Errorf("vm: library %s needed by %s not found in %s", lib, path, strings.Join(libDirs, " "))
		}
		real, err := filepath.EvalSymlinks(found)
		if err != nil {
			return fmt.Errorf("vm: library %s: %w", found, err)
		}
		if err := s.add(found, real); err != nil {
			return err
		}
		if err := addELFDeps(s, real, done); err != nil {
			return err
		}
	}
	return nil
}

// packCpio writes the tree at root as an uncompressed newc cpio archive with
// the cpio tool, files owned by root.
func packCpio(root, out string) error {
	var names []string
	err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		names = append(names, rel)
		return nil
	})
	if err != nil {
		return fmt.Errorf("vm: walking %s: %w", root, err)
	}
	sort.Strings(names)
	cpio, err := lookPath("cpio")
	if err != nil {
		return fmt.Errorf("vm: cpio not found (install cpio, e.g. scripts/vm/deps.sh): %w", err)
	}
	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("vm: creating initramfs: %w", err)
	}
	defer f.Close()
	var stderr bytes.Buffer
	cmd := exec.Command(cpio, "--quiet", "-o", "-H", "newc", "-R", "0:0")
	cmd.Dir = root
	cmd.Stdin = strings.NewReader(strings.Join(names, "\n") + "\n")
	cmd.Stdout = f
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("vm: cpio: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return f.Close()
}

// lookPath is exec.LookPath that also accepts a path to an executable and
// searches /sbin and /usr/sbin (not in every user's PATH).
func lookPath(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	if !strings.Contains(name, "/") {
		for _, d := range []string{"/usr/sbin", "/sbin", "/usr/bin", "/bin"} {
			p := filepath.Join(d, name)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("%s: not found", name)
}
