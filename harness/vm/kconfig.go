package vm

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Option is a kernel configuration option the VM run depends on.
type Option struct {
	// Name is the option without the CONFIG_ prefix.
	Name string
	// Why says what breaks without it.
	Why string
	// Required options make the run fail before booting when a known config
	// lacks them; the others only produce a warning (cases skip instead).
	Required bool
}

// Options lists what a kernel needs to run the suite in the VM. The same list
// is in scripts/kernel.config as a config fragment.
var Options = []Option{
	{"BLK_DEV_INITRD", "the suite is booted from an initramfs", true},
	{"BINFMT_ELF", "the test binaries are ELF executables", true},
	{"BINFMT_SCRIPT", "the guest /init is a shell script", true},
	{"TTY", "results leave the guest over serial ports", true},
	{"SERIAL_8250", "results leave the guest over 8250 serial ports", true},
	{"SERIAL_8250_CONSOLE", "the kernel log and panics are read on ttyS0", true},
	{"PROC_FS", "/proc is needed by the harness and the guest /init", true},
	{"SYSFS", "/sys is mounted by the guest /init", true},
	{"DEVTMPFS", "/dev (ttyS1, loop devices) comes from devtmpfs", true},
	{"TMPFS", "every test's workspace is a tmpfs", true},
	{"FUTEX", "the Go runtime needs futexes", true},
	{"EPOLL", "the Go runtime needs epoll", true},
	{"INOTIFY_USER", "the inotify tests", true},
	{"FANOTIFY", "fanotify_init and every fanotify test", true},
	{"FANOTIFY_ACCESS_PERMISSIONS", "permission events (FAN_OPEN_PERM, FAN_ACCESS_PERM)", false},
	{"FHANDLE", "FID reporting tests (name_to_handle_at)", false},
	{"BLK_DEV_LOOP", "ext4 cases (loop device)", false},
	{"EXT4_FS", "ext4 cases", false},
}

// checkKernelImage rejects files qemu cannot boot as an x86 Linux kernel.
func checkKernelImage(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return &Error{Kind: "kernel", Msg: fmt.Sprintf("kernel image: %v", err)}
	}
	defer f.Close()
	hdr := make([]byte, 0x210)
	n, err := io.ReadFull(f, hdr)
	if err != nil && err != io.ErrUnexpectedEOF {
		return &Error{Kind: "kernel", Msg: fmt.Sprintf("reading kernel image %s: %v", path, err)}
	}
	hdr = hdr[:n]
	if len(hdr) >= 0x206 && string(hdr[0x202:0x206]) == "HdrS" {
		return nil
	}
	if bytes.HasPrefix(hdr, []byte("\x7fELF")) {
		return &Error{Kind: "kernel", Msg: fmt.Sprintf("%s is an ELF vmlinux, not a bootable image: give arch/x86/boot/bzImage", path)}
	}
	return &Error{Kind: "kernel", Msg: fmt.Sprintf("%s is not an x86 Linux kernel image (no bzImage boot header \"HdrS\" at offset 0x202)", path)}
}

// findKernelConfig returns the .config that belongs to kernel, or "".
func findKernelConfig(kernel string) string {
	dir := filepath.Dir(kernel)
	base := filepath.Base(kernel)
	var cands []string
	if v, ok := strings.CutPrefix(base, "vmlinuz-"); ok {
		cands = append(cands, filepath.Join(dir, "config-"+v))
	}
	cands = append(cands,
		filepath.Join(dir, ".config"),
		filepath.Join(dir, "config"),
		filepath.Join(dir, "..", "..", "..", ".config")) // arch/x86/boot/bzImage
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
			return c
		}
	}
	return ""
}

// parseKernelConfig returns the options set to y or m, without CONFIG_.
func parseKernelConfig(r io.Reader) (map[string]string, error) {
	set := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		name, val, ok := strings.Cut(line, "=")
		if !ok || !strings.HasPrefix(name, "CONFIG_") {
			continue
		}
		if val == "y" || val == "m" {
			set[strings.TrimPrefix(name, "CONFIG_")] = val
		}
	}
	return set, sc.Err()
}

// missingOptions checks set against Options; it returns the missing required
// options and the missing optional ones.
func missingOptions(set map[string]string) (required, optional []string) {
	for _, o := range Options {
		if _, ok := set[o.Name]; ok {
			continue
		}
		if o.Required {
			required = append(required, o.Name)
		} else {
			optional = append(optional, o.Name)
		}
	}
	return required, optional
}

func optionWhy(name string) string {
	for _, o := range Options {
		if o.Name == name {
			return o.Why
		}
	}
	return ""
}

// missingError is the one-line diagnosis for missing required options.
func missingError(missing []string, source string) *Error {
	names := make([]string, len(missing))
	for i, m := range missing {
		names[i] = "CONFIG_" + m
	}
	msg := fmt.Sprintf("kernel lacks %s, needed for %s", strings.Join(names, ", "), optionWhy(missing[0]))
	if source != "" {
		msg += " (" + source + ")"
	}
	return &Error{Kind: "config", Missing: missing, Msg: msg}
}

// checkKernelConfig checks the kernel's config, when one can be found, before
// anything is booted.
func (c *Config) checkKernelConfig() error {
	path := c.KernelConfig
	if path == "" {
		path = findKernelConfig(c.Kernel)
		if path == "" {
			c.progressf("no kernel config next to %s; options are checked in the guest", c.Kernel)
			return nil
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("vm: kernel config: %w", err)
	}
	defer f.Close()
	set, err := parseKernelConfig(f)
	if err != nil {
		return fmt.Errorf("vm: reading kernel config %s: %w", path, err)
	}
	req, opt := missingOptions(set)
	for _, o := range opt {
		if o == "FANOTIFY_ACCESS_PERMISSIONS" && slices.Contains(req, "FANOTIFY") {
			continue
		}
		c.progressf("warning: kernel config lacks CONFIG_%s: %s will skip", o, optionWhy(o))
	}
	if len(req) > 0 {
		return missingError(req, "per "+path)
	}
	if c.GcovDir != "" && set["GCOV_KERNEL"] != "y" {
		return &Error{Kind: "gcov", Missing: []string{"GCOV_KERNEL"},
			Msg: "gcov data asked for (GcovDir) but the kernel lacks CONFIG_GCOV_KERNEL, per " + path + " (scripts/coverage/build-kernel.sh builds one)"}
	}
	for _, o := range []string{"BLK_DEV_LOOP", "EXT4_FS"} {
		if set[o] == "m" && c.Modules == "" {
			c.progressf("warning: CONFIG_%s=m but no module tree given (-modules): ext4 cases will skip", o)
		}
	}
	return nil
}
