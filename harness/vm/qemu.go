package vm

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fsnsuite/fsnsuite/tap"
)

// kvmUsable reports whether KVM looks usable: the CPU advertises hardware
// virtualisation and /dev/kvm can create a VM. (Some sandboxes offer a
// /dev/kvm that creates VMs but cannot run them; they show no vmx/svm flag.)
func kvmUsable() bool {
	cpuinfo, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return false
	}
	hw := false
	for _, l := range strings.Split(string(cpuinfo), "\n") {
		if strings.HasPrefix(l, "flags") {
			f := " " + strings.ReplaceAll(l, "\t", " ") + " "
			hw = strings.Contains(f, " vmx ") || strings.Contains(f, " svm ")
			break
		}
	}
	if !hw {
		return false
	}
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	const kvmGetAPIVersion, kvmCreateVM = 0xAE00, 0xAE01
	v, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), kvmGetAPIVersion, 0)
	if errno != 0 || v != 12 {
		return false
	}
	fd, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), kvmCreateVM, 0)
	if errno != 0 {
		return false
	}
	syscall.Close(int(fd))
	return true
}

// chooseAccel picks the accelerator: want, else $FSNSUITE_VM_ACCEL, else KVM
// when usable and TCG otherwise.
func chooseAccel(want string) (string, error) {
	if want == "" {
		want = os.Getenv("FSNSUITE_VM_ACCEL")
	}
	switch want {
	case "":
		if kvmUsable() {
			return "kvm", nil
		}
		return "tcg", nil
	case "tcg":
		return "tcg", nil
	case "kvm":
		if !kvmUsable() {
			return "", errors.New("vm: accel kvm requested but /dev/kvm is not usable")
		}
		return "kvm", nil
	}
	return "", fmt.Errorf("vm: unknown accel %q (want kvm or tcg)", want)
}

func mknodConsole(path string) error {
	return syscall.Mknod(path, syscall.S_IFCHR|0o600, 5<<8|1)
}

// vcpus is the guest's vCPU count: CPUs, and vCPU 0 for housekeeping in
// the sharing profile.
func (c *Config) vcpus() int {
	if c.housekeeping {
		return c.CPUs + 1
	}
	return c.CPUs
}

// qemuArgs builds the qemu command line. The console and the two guest
// output ports are written to the inherited fds 3, 4 and 5.
func (c *Config) qemuArgs(accel, initrd string) []string {
	cpu := "max"
	if accel == "kvm" {
		cpu = "host"
	}
	appendLine := "console=ttyS0,115200 panic=-1 rdinit=/init 8250.nr_uarts=4 random.trust_cpu=on"
	if c.ExtraAppend != "" {
		appendLine += " " + c.ExtraAppend
	}
	accelArgs := []string{"-accel", accel}
	if c.ICount && accel == "tcg" {
		// One host thread runs every vCPU in turn (-icount cannot count
		// instructions of vCPUs running in parallel), and the virtual clock
		// advances 2^0 ns per instruction; sleep=off: when every vCPU is idle
		// the clock jumps to the next timer instead of waiting in real time.
		accelArgs = []string{"-accel", "tcg,thread=single", "-icount", "shift=0,sleep=off"}
	}
	args := []string{
		"-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
	}
	args = append(args, accelArgs...)
	if c.SharingPlugin != "" {
		plugin := "file=" + c.SharingPlugin + ",out=" + c.sharingOut
		// The plugin's per-instruction diagnostic (fsnshare.c, pcs=), in
		// the private work directory beside its record.
		if c.sharingPCs() {
			plugin += ",pcs=" + filepath.Join(filepath.Dir(c.sharingOut), SharingPCsOut)
		}
		args = append(args, "-plugin", plugin)
	}
	return append(args, "-cpu", cpu,
		"-m", strconv.Itoa(c.MemMB),
		// Without ACPI only -smp with explicit sockets gives the guest all CPUs.
		"-smp", fmt.Sprintf("%d,sockets=%d,cores=1,threads=1", c.vcpus(), c.vcpus()),
		"-kernel", c.Kernel, "-initrd", initrd, "-append", appendLine,
		"-chardev", "file,id=con,path=/proc/self/fd/3", "-serial", "chardev:con",
		"-chardev", "file,id=out,path=/proc/self/fd/4", "-serial", "chardev:out",
		"-chardev", "file,id=err,path=/proc/self/fd/5", "-serial", "chardev:err",
		"-monitor", "none",
	)
}

type line struct {
	src  int // srcConsole, srcOut, srcErr, srcQEMU
	text string
}

const (
	srcConsole = iota
	srcOut
	srcErr
	srcQEMU
)

func scanLines(r io.Reader, src int, ch chan<- line, done chan<- struct{}, quit <-chan struct{}) {
	defer func() { done <- struct{}{} }()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 256*1024), 4*1024*1024)
	for sc.Scan() {
		select {
		case ch <- line{src, strings.TrimRight(sc.Text(), "\r")}:
		case <-quit:
			return
		}
	}
}

// tail keeps the last n lines.
type tail struct {
	n     int
	lines []string
}

func (t *tail) add(s string) {
	t.lines = append(t.lines, s)
	if len(t.lines) > t.n {
		t.lines = t.lines[len(t.lines)-t.n:]
	}
}

func (t *tail) last() string {
	for i := len(t.lines) - 1; i >= 0; i-- {
		if s := strings.TrimSpace(t.lines[i]); s != "" {
			return s
		}
	}
	return ""
}

// boot runs qemu and follows the guest until it powers off.
func (c *Config) boot(ctx context.Context, qemu, accel, initrd, work string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()

	var pr, pw [3]*os.File // console, TAP port, stderr port
	for i := 0; i < 3; i++ {
		r, w, err := os.Pipe()
		if err != nil {
			return 1, fmt.Errorf("vm: pipe: %w", err)
		}
		pr[i], pw[i] = r, w
		defer r.Close()
	}
	qr, qw, err := os.Pipe()
	if err != nil {
		return 1, fmt.Errorf("vm: pipe: %w", err)
	}
	defer qr.Close()

	cmd := exec.Command(qemu, c.qemuArgs(accel, initrd)...)
	cmd.Stdin = nil
	cmd.Stdout = qw
	cmd.Stderr = qw
	cmd.ExtraFiles = []*os.File{pw[0], pw[1], pw[2]}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		for i := 0; i < 3; i++ {
			pw[i].Close()
		}
		qw.Close()
		return 1, fmt.Errorf("vm: starting %s: %w", qemu, err)
	}
	for i := 0; i < 3; i++ {
		pw[i].Close()
	}
	qw.Close()

	lines := make(chan line, 1024)
	eof := make(chan struct{}, 4)
	quit := make(chan struct{})
	defer close(quit)
	go scanLines(pr[0], srcConsole, lines, eof, quit)
	go scanLines(pr[1], srcOut, lines, eof, quit)
	go scanLines(pr[2], srcErr, lines, eof, quit)
	go scanLines(qr, srcQEMU, lines, eof, quit)
	waitErr := make(chan error, 1)
	var reaped atomic.Bool
	go func() {
		err := cmd.Wait()
		reaped.Store(true)
		waitErr <- err
	}()

	var consoleLog *os.File
	if c.ResultsDir != "" {
		if err := os.MkdirAll(c.ResultsDir, 0o755); err != nil {
			return 1, fmt.Errorf("vm: results directory: %w", err)
		}
		if consoleLog, err = os.Create(filepath.Join(c.ResultsDir, "vm-console.log")); err != nil {
			return 1, fmt.Errorf("vm: console log: %w", err)
		}
		defer consoleLog.Close()
	}

	m := &monitor{cfg: c, accel: accel, start: start, console: tail{n: 80}, qemuOut: tail{n: 20}, consoleLog: consoleLog}
	bootTimer := time.NewTimer(c.BootTimeout)
	defer bootTimer.Stop()
	kill := func() {
		if reaped.Load() {
			return // its pid may belong to someone else by now
		}
		// qemu and anything it started (its process group).
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Process.Kill()
	}
	var timers []*time.Timer
	defer func() {
		for _, t := range timers {
			t.Stop()
		}
	}()
	var drain <-chan time.Time // after qemu exits, output still buffered is read for a while
	var runErr error
	exited := false
	open := 4
	for open > 0 || !exited {
		select {
		case l := <-lines:
			wasDone := m.done
			if err := m.handle(l); err != nil && runErr == nil {
				runErr = err
				if m.panicked {
					// Let the panic's lines come in; panic=-1 and -no-reboot end qemu.
					timers = append(timers, time.AfterFunc(3*time.Second, kill))
				} else {
					kill()
				}
			}
			if m.done && !wasDone {
				// A guest that cannot power off is stopped after a grace period.
				timers = append(timers, time.AfterFunc(20*time.Second, kill))
			}
		case <-eof:
			open--
		case werr := <-waitErr:
			exited = true
			waitErr = nil
			drain = time.After(5 * time.Second)
			if werr != nil && runErr == nil && !m.gotExit {
				m.qemuErr = werr
			}
		case <-drain:
			open = 0 // a descendant keeps a port open: stop reading
		case <-bootTimer.C:
			if !m.started && runErr == nil {
				runErr = m.bootTimeout()
				kill()
			}
		case <-ctx.Done():
			if runErr == nil {
				if ctx.Err() == context.DeadlineExceeded {
					runErr = &Error{Kind: "timeout", Msg: fmt.Sprintf("guest did not finish within %s (last TAP line: %q)", c.Timeout, m.lastTAP)}
				} else {
					runErr = fmt.Errorf("vm: %w", ctx.Err())
				}
			}
			kill()
			ctx = context.Background() // fire once
		}
	}
	// A reader sends its last lines before its EOF, but select picks among
	// ready channels at random: lines may still wait in the channel.
	for pending := true; pending; {
		select {
		case l := <-lines:
			if err := m.handle(l); err != nil && runErr == nil {
				runErr = err
			}
		default:
			pending = false
		}
	}
	c.progressf("guest ran %.1fs", time.Since(start).Seconds())
	if m.gotExit && runErr == nil {
		if err := m.unpackResults(); err != nil {
			return m.exitCode, err
		}
		if err := c.keepSharing(); err != nil {
			return m.exitCode, err
		}
		if c.GcovDir != "" {
			if err := m.gcov.unpack(c.GcovDir); err != nil {
				return m.exitCode, err
			}
			c.progressf("gcov data (%d files) copied to %s", m.gcov.files, c.GcovDir)
		}
		return m.exitCode, nil
	}
	if runErr == nil {
		runErr = m.diagnose()
	}
	return 1, runErr
}

// monitor follows the guest's output streams.
type monitor struct {
	cfg        *Config
	accel      string
	start      time.Time
	console    tail
	qemuOut    tail
	consoleLog *os.File

	booted    bool // a console line arrived
	started   bool // init reported in
	running   bool // runner started
	gotExit   bool
	done      bool // the guest said it is about to power off
	exitCode  int
	panicked  bool
	sawInitrd bool // the kernel said it unpacked or freed the initramfs
	panicMsg  string
	missing   []string
	cfgSource string // where the guest read the kernel config, if anywhere
	inResults bool
	results   bytes.Buffer
	gcov      gcovBlock
	lastTAP   string
	qemuErr   error
}

func (m *monitor) elapsed() string {
	return fmt.Sprintf("%6.1fs", time.Since(m.start).Seconds())
}

func (m *monitor) handle(l line) error {
	switch l.src {
	// What qemu, the guest's stderr and its console print reaches the
	// terminal and error messages escaped (tap.Escape: no raw control
	// byte); vm-console.log keeps the bytes as written.
	case srcQEMU:
		m.qemuOut.add(tap.Escape(l.text))
		m.cfg.progressf("qemu: %s", tap.Escape(l.text))
	case srcErr:
		fmt.Fprintln(m.cfg.Stderr, tap.Escape(l.text))
	case srcConsole:
		m.booted = true
		m.console.add(tap.Escape(l.text))
		if m.consoleLog != nil {
			fmt.Fprintln(m.consoleLog, l.text)
		}
		return m.consoleLine(tap.Escape(l.text))
	case srcOut:
		return m.outLine(l.text)
	}
	return nil
}

func (m *monitor) consoleLine(s string) error {
	if strings.Contains(s, "Freeing initrd memory") || strings.Contains(s, "Unpacking initramfs") {
		m.sawInitrd = true
	}
	if i := strings.Index(s, "Kernel panic - not syncing:"); i >= 0 && !m.panicked {
		m.panicked = true
		m.panicMsg = strings.TrimSpace(s[i+len("Kernel panic - not syncing:"):])
		// The report that led to the panic is in the lines before it; a CI
		// log shows stderr, not vm-console.log, so it goes there too.
		if ex := oopsExcerpt(m.console.lines); len(ex) > 0 {
			m.cfg.progressf("console before the panic (all of it in vm-console.log):")
			for _, l := range ex {
				m.cfg.progressf("  | %s", l)
			}
		}
		return m.panicError()
	}
	for _, k := range []string{"BUG:", "Oops:", "WARNING:", "INFO: task", "general protection fault"} {
		if strings.Contains(s, k) && m.running {
			m.cfg.progressf("%s kernel: %s", m.elapsed(), strings.TrimSpace(s))
			break
		}
	}
	return nil
}

func (m *monitor) outLine(s string) error {
	if m.gcov.open {
		if strings.HasPrefix(s, "FSNSUITE-VM gcov-end") {
			m.gcov.open, m.gcov.ended = false, true
			return nil
		}
		m.gcov.data.WriteString(strings.TrimSpace(s))
		return nil
	}
	if m.inResults {
		if strings.HasPrefix(s, "FSNSUITE-VM results-end") {
			m.inResults = false
			return nil
		}
		m.results.WriteString(strings.TrimSpace(s))
		return nil
	}
	if rest, ok := strings.CutPrefix(s, "FSNSUITE-VM "); ok {
		f := strings.Fields(rest)
		if len(f) == 0 {
			return nil
		}
		switch f[0] {
		case "init":
			m.started = true
			m.cfg.progressf("%s guest /init started (kernel %s)", m.elapsed(), strings.Join(f[1:], ", CPUs "))
			if len(f) > 1 && m.cfg.modVersion != "" && f[1] != m.cfg.modVersion {
				m.cfg.progressf("warning: the modules are for %s but the kernel is %s: they will not load", m.cfg.modVersion, f[1])
			}
		case "config":
			m.cfgSource = strings.Join(f[1:], " ")
		case "lacks":
			for _, o := range f[1:] {
				m.cfg.progressf("warning: kernel lacks CONFIG_%s: %s will skip", o, optionWhy(o))
			}
		case "missing":
			m.started = true
			m.missing = f[1:]
			return m.missingError()
		case "modfail":
			m.cfg.progressf("warning: insmod %s failed (see vm-console.log)", strings.Join(f[1:], " "))
		case "rng":
		case "clocksource":
			m.cfg.progressf("guest clocksource: %s", strings.Join(f[1:], " "))
		case "housekeeping":
			m.cfg.progressf("guest processes bound to CPU mask %s", strings.Join(f[1:], ", kernel "))
		case "housekeeping-failed":
			m.started = true
			return &Error{Kind: "sharing", Msg: "the sharing profile could not bind the guest's processes to vCPU 0: " + strings.Join(f[1:], " ") + " failed (busybox without taskset?)"}
		case "start":
			m.running = true
			m.cfg.progressf("%s runner started", m.elapsed())
		case "exit":
			if len(f) < 2 {
				return &Error{Kind: "protocol", Msg: "malformed exit line from the guest: " + s}
			}
			code, err := strconv.Atoi(f[1])
			if err != nil {
				return &Error{Kind: "protocol", Msg: "malformed exit line from the guest: " + s}
			}
			m.gotExit, m.exitCode = true, code
			m.cfg.progressf("%s runner exited with %d", m.elapsed(), code)
		case "results-begin":
			m.inResults = true
		case "gcov-begin":
			return m.gcov.begin(s, f[1:])
		case "gcov-none":
			return &Error{Kind: "gcov", Msg: "no gcov data in the guest: " + strings.Join(f[1:], " ")}
		case "done":
			m.done = true
		}
		return nil
	}
	fmt.Fprintln(m.cfg.Stdout, s)
	if strings.TrimSpace(s) != "" {
		m.lastTAP = s
	}
	m.progressTAP(s)
	return nil
}

// progressTAP reports top-level TAP lines: one per test binary in the
// runner's merged stream.
func (m *monitor) progressTAP(s string) {
	// A block's "# Subtest:" header is at the top level or indented like the
	// block it heads (TAP13 allows both).
	if h, ok := strings.CutPrefix(strings.TrimPrefix(s, "    "), "# Subtest:"); ok {
		m.cfg.progressf("%s running %s", m.elapsed(), strings.TrimSpace(h))
		return
	}
	if s == "" || s[0] == ' ' || s[0] == '\t' {
		return
	}
	switch {
	case strings.HasPrefix(s, "ok ") || strings.HasPrefix(s, "not ok "):
		m.cfg.progressf("%s %s", m.elapsed(), s)
	case strings.HasPrefix(s, "Bail out!"):
		m.cfg.progressf("%s %s", m.elapsed(), s)
	}
}

func (m *monitor) missingError() *Error {
	src := "per the guest's /proc"
	if m.cfgSource != "" {
		src = "per the guest's " + m.cfgSource
	}
	return missingError(m.missing, src)
}

// oopsMarkers start a kernel report that can end in a panic.
var oopsMarkers = []string{"BUG:", "Oops:", "Oops ", "general protection fault", "Unable to handle", "kernel BUG at", "WARNING:", "watchdog:", "RIP:", "Call Trace:"}

// oopsExcerpt picks the console lines of the report that ended in a panic:
// from the first report marker among the kept lines to the panic line, or
// the last 15 lines when none is there.
func oopsExcerpt(lines []string) []string {
	for i, l := range lines {
		for _, k := range oopsMarkers {
			if strings.Contains(l, k) {
				return lines[i:]
			}
		}
	}
	return lines[max(0, len(lines)-15):]
}

func (m *monitor) panicError() *Error {
	msg := m.panicMsg
	hint := ""
	switch {
	case strings.Contains(msg, "VFS: Unable to mount root fs"):
		if m.sawInitrd {
			hint = " (the initramfs was unpacked but its /init did not run)"
		} else {
			hint = " (the kernel did not use the initramfs: needs CONFIG_BLK_DEV_INITRD)"
		}
	case strings.Contains(msg, "No working init found"), strings.Contains(msg, "Requested init /init failed"):
		hint = " (/init could not run"
		for _, l := range m.console.lines {
			if strings.Contains(l, "error -8") {
				hint += ": exec format error, needs CONFIG_BINFMT_SCRIPT and CONFIG_BINFMT_ELF"
				break
			}
		}
		hint += ")"
	case strings.Contains(msg, "Attempted to kill init"):
		hint = " (the guest /init died)"
	}
	when := "during boot"
	if m.running {
		when = "while the suite ran (last TAP line: " + strconv.Quote(m.lastTAP) + ")"
	} else if m.started {
		when = "before the runner started"
	}
	return &Error{Kind: "panic", Msg: fmt.Sprintf("kernel panic %s: %s%s", when, msg, hint)}
}

func (m *monitor) bootTimeout() *Error {
	if !m.booted {
		return &Error{Kind: "boot", Msg: fmt.Sprintf("no output on the serial console within %s: %s did not boot under qemu or lacks CONFIG_SERIAL_8250_CONSOLE", m.cfg.BootTimeout, m.cfg.Kernel)}
	}
	return &Error{Kind: "boot", Msg: fmt.Sprintf("the guest never started the payload within %s (needs CONFIG_BLK_DEV_INITRD, CONFIG_DEVTMPFS, CONFIG_SERIAL_8250 for ttyS1); last console line: %q", m.cfg.BootTimeout, m.console.last())}
}

// diagnose explains a run that ended without an exit line.
func (m *monitor) diagnose() error {
	if m.panicked {
		return m.panicError()
	}
	if len(m.missing) > 0 {
		return m.missingError()
	}
	if m.running {
		return &Error{Kind: "protocol", Msg: fmt.Sprintf("the guest stopped without an exit status (last TAP line: %q; last console line: %q)", m.lastTAP, m.console.last())}
	}
	if m.started {
		return &Error{Kind: "boot", Msg: fmt.Sprintf("the guest stopped before the runner started; last console line: %q", m.console.last())}
	}
	if !m.booted {
		msg := m.qemuOut.last()
		if msg == "" && m.qemuErr != nil {
			msg = m.qemuErr.Error()
		}
		if msg != "" {
			if m.accel == "kvm" {
				msg += " (FSNSUITE_VM_ACCEL=tcg forces emulation)"
			}
			return &Error{Kind: "qemu", Msg: fmt.Sprintf("qemu could not boot %s: %s", m.cfg.Kernel, msg)}
		}
		return &Error{Kind: "boot", Msg: fmt.Sprintf("qemu exited before %s wrote anything on the serial console (not a bootable kernel, or no CONFIG_SERIAL_8250_CONSOLE)", m.cfg.Kernel)}
	}
	return &Error{Kind: "boot", Msg: fmt.Sprintf("the guest stopped before the payload started; last console line: %q", m.console.last())}
}

// unpackResults extracts the guest's results directory into ResultsDir.
func (m *monitor) unpackResults() error {
	if m.results.Len() == 0 || m.cfg.ResultsDir == "" {
		return nil
	}
	raw, err := base64.StdEncoding.DecodeString(m.results.String())
	if err != nil {
		return fmt.Errorf("vm: decoding guest results: %w", err)
	}
	if _, err := untarGz(raw, m.cfg.ResultsDir); err != nil {
		return fmt.Errorf("vm: guest results: %w", err)
	}
	m.cfg.progressf("guest results copied to %s", m.cfg.ResultsDir)
	return nil
}

// untarGz extracts the regular files and directories of a tar.gz archive
// under dest (entries leaving dest are ignored) and returns how many regular
// files it wrote.
func untarGz(raw []byte, dest string) (files int, err error) {
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return 0, err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return files, err
		}
		name := filepath.Clean(h.Name)
		if name == "." || strings.HasPrefix(name, "..") || filepath.IsAbs(name) {
			continue
		}
		p := filepath.Join(dest, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return files, err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return files, err
			}
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
			if err != nil {
				return files, err
			}
			_, err = io.Copy(f, tr)
			cerr := f.Close()
			if err != nil || cerr != nil {
				return files, fmt.Errorf("%s: %w", name, errors.Join(err, cerr))
			}
			files++
		}
	}
}

// gcovBlock collects the guest's gcov block: "FSNSUITE-VM gcov-begin FILES
// BYTES", base64 lines of a tar.gz of BYTES bytes holding FILES .gcda files,
// "FSNSUITE-VM gcov-end".
type gcovBlock struct {
	open, ended  bool
	files, bytes int
	data         bytes.Buffer
}

func (g *gcovBlock) begin(line string, args []string) error {
	if len(args) != 2 {
		return &Error{Kind: "protocol", Msg: "malformed gcov-begin line from the guest: " + line}
	}
	files, err1 := strconv.Atoi(args[0])
	n, err2 := strconv.Atoi(args[1])
	if err1 != nil || err2 != nil || files < 0 || n < 0 {
		return &Error{Kind: "protocol", Msg: "malformed gcov-begin line from the guest: " + line}
	}
	g.open, g.files, g.bytes = true, files, n
	g.data.Reset()
	return nil
}

// unpack checks the block is complete (its end marker, its byte and file
// counts) and extracts it under dest.
func (g *gcovBlock) unpack(dest string) error {
	if !g.ended {
		if g.open {
			return &Error{Kind: "gcov", Msg: fmt.Sprintf("the guest's gcov block was cut short (%d base64 characters, no gcov-end line)", g.data.Len())}
		}
		return &Error{Kind: "gcov", Msg: "the guest sent no gcov block"}
	}
	raw, err := base64.StdEncoding.DecodeString(g.data.String())
	if err != nil {
		return &Error{Kind: "gcov", Msg: fmt.Sprintf("the guest's gcov block does not decode: %v", err)}
	}
	if len(raw) != g.bytes {
		return &Error{Kind: "gcov", Msg: fmt.Sprintf("the guest's gcov block has %d bytes, its header said %d", len(raw), g.bytes)}
	}
	if g.files == 0 {
		return &Error{Kind: "gcov", Msg: "the guest found no .gcda files under /sys/kernel/debug/gcov: nothing was built with GCOV_PROFILE"}
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return fmt.Errorf("vm: gcov directory: %w", err)
	}
	got, err := untarGz(raw, dest)
	if err != nil {
		return fmt.Errorf("vm: guest gcov data: %w", err)
	}
	if got != g.files {
		return &Error{Kind: "gcov", Msg: fmt.Sprintf("the guest's gcov block holds %d files, its header said %d", got, g.files)}
	}
	return nil
}

// UsesKVM reports whether the VM runner will use KVM ($FSNSUITE_VM_ACCEL,
// else KVM when usable): callers choose between time and instruction
// counts with it.
func UsesKVM() bool {
	a, err := chooseAccel("")
	return err == nil && a == "kvm"
}

// keepSharing copies the sharing plugin's record into the results directory
// (qemu has exited: the plugin's atexit wrote its end line).
func (c *Config) keepSharing() error {
	if c.SharingPlugin == "" || c.ResultsDir == "" {
		return nil
	}
	b, err := os.ReadFile(c.sharingOut)
	if err != nil {
		return &Error{Kind: "sharing", Msg: fmt.Sprintf("the sharing plugin left no record: %v", err)}
	}
	if err := os.WriteFile(filepath.Join(c.ResultsDir, SharingPluginOut), b, 0o644); err != nil {
		return fmt.Errorf("vm: sharing record: %w", err)
	}
	c.progressf("sharing plugin record (%d bytes) copied to %s", len(b), filepath.Join(c.ResultsDir, SharingPluginOut))
	if c.sharingPCs() {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(c.sharingOut), SharingPCsOut))
		if err != nil {
			return &Error{Kind: "sharing", Msg: fmt.Sprintf("the sharing plugin left no diagnostic: %v", err)}
		}
		if err := os.WriteFile(filepath.Join(c.ResultsDir, SharingPCsOut), b, 0o644); err != nil {
			return fmt.Errorf("vm: sharing diagnostic: %w", err)
		}
		c.progressf("sharing plugin diagnostic (%d bytes) copied to %s", len(b), filepath.Join(c.ResultsDir, SharingPCsOut))
	}
	return nil
}

// sharingPCs reports whether SharingPCsEnv asks for the plugin's
// per-instruction diagnostic.
func (c *Config) sharingPCs() bool { return c.SharingPlugin != "" && os.Getenv(SharingPCsEnv) == "1" }
