package main

import (
	"context"
	"os"

	"github.com/fsnsuite/fsnsuite/harness/runner"
	"github.com/fsnsuite/fsnsuite/harness/vm"
)

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
