package main

import (
	"context"
	"os"
	"strings"

	"github.com/fsnsuite/fsnsuite/harness/runner"
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
	})
}
