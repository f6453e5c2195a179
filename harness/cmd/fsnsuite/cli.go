package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/fsnsuite/fsnsuite/harness/exitcode"
)

// parseArgs parses args into fs the way every fsnsuite command does: -h
// prints usage and the flags (exit 0), a bad flag is one line and "see -h"
// (exit 2). done is true when the caller should return code.
func parseArgs(fs *flag.FlagSet, args []string, usage string, stderr io.Writer) (code int, done bool) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	switch {
	case err == nil:
		return exitcode.Pass, false
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stderr, usage)
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		return exitcode.Pass, true
	}
	fmt.Fprintf(stderr, "%s: %v; see -h\n", fs.Name(), err)
	return exitcode.Usage, true
}

// writeTo calls write with the file path (created) or, for "" or "-", stdout.
func writeTo(path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == "" || path == "-" {
		return write(stdout)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
