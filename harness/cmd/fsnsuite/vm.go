package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fsnsuite/fsnsuite/harness/perf"
	"github.com/fsnsuite/fsnsuite/harness/runner"
	"github.com/fsnsuite/fsnsuite/harness/sharing"
	"github.com/fsnsuite/fsnsuite/harness/vm"
)

// skipLeftOut marks the runtest lines naming a perf binary that the VM
// runner left out of this guest (vm.LeftOutEnv, set by its /init) as skips
// that say why. Outside a guest, or with every binary in it, bins is
// returned as it is.
func skipLeftOut(bins []runner.Binary) []runner.Binary {
	left := strings.Fields(os.Getenv(vm.LeftOutEnv))
	if len(left) == 0 {
		return bins
	}
	return runner.SkipCommands(bins, left, vm.LeftOutReason)
}

// bootVM boots r.Kernel with harness/vm and runs the suite inside it.
func bootVM(ctx context.Context, r vmRequest) (int, error) {
	return vm.Run(ctx, vm.Config{
		Kernel:      r.Kernel,
		Modules:     r.Modules,
		MemMB:       r.MemMB,
		CPUs:        r.CPUs,
		Timeout:     r.Timeout,
		BinDir:      r.BinDir,
		Files:       r.Files,
		Args:        r.Args,
		Stdout:      os.Stdout,
		Stderr:      os.Stderr,
		Progress:    os.Stderr,
		IncludePerf: r.IncludePerf,
		ICount:      r.ICount,
		ExtraAppend: r.Append,
		IsPerf:      func(name string) bool { return runner.Binary{Name: name}.IsPerf() },
		ResultsDir:  r.ResultsDir,
		// An absolute path: qemu's -plugin option takes it as given.
		SharingPlugin: absOrEmpty(r.Sharing),
	})
}

func absOrEmpty(p string) string {
	if p == "" {
		return ""
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// sharingReport joins the sharing profile's two records of a finished VM run
// (harness/sharing), writes RESULTS/sharing.txt, prints it on stderr, and
// turns a failed verdict (an -aa case whose sides differ, a control that
// does not see its sharing) or records that do not match into exit code 1.
// The guest's /proc/kallsyms (copied by the perf engine; nokaslr) names the
// writers, else a System.map beside the image.
func sharingReport(r vmRequest, code int, stderr io.Writer) int {
	syms := filepath.Join(r.ResultsDir, perf.SharingKallsyms)
	if _, err := os.Stat(syms); err != nil {
		syms = systemMap(r.Kernel)
	}
	cases, failed, err := sharing.Report(r.ResultsDir, syms)
	if err != nil {
		fmt.Fprintf(stderr, "fsnsuite: %v\n", err)
		return max(code, 1)
	}
	if b, err := os.ReadFile(filepath.Join(r.ResultsDir, sharing.ReportFile)); err == nil {
		stderr.Write(b)
	}
	fmt.Fprintf(stderr, "fsnsuite: sharing profile: %d cases, report in %s\n", len(cases), filepath.Join(r.ResultsDir, sharing.ReportFile))
	if failed {
		return max(code, 1)
	}
	return code
}

// systemMap finds the kernel's System.map beside the image (Debian's
// /usr/lib/modules/VER/System.map beside vmlinuz, or System.map-VER beside
// vmlinuz-VER in /boot); "" when there is none.
func systemMap(kernel string) string {
	dir, base := filepath.Split(kernel)
	cands := []string{filepath.Join(dir, "System.map")}
	if v, ok := strings.CutPrefix(base, "vmlinuz-"); ok {
		cands = append([]string{filepath.Join(dir, "System.map-"+v)}, cands...)
	}
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
			return c
		}
	}
	return ""
}
