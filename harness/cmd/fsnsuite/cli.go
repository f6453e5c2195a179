package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

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

// writeTo calls write for the file path, or for "" or "-" stdout, so that
// the output is whole or absent: to a file, through a temp file beside it
// (O_EXCL) renamed over path once complete, so that an error leaves no
// empty or partial file and a symlink at path is replaced, never followed;
// to stdout, from memory once complete, so that an error writes nothing.
func writeTo(path string, stdout io.Writer, write func(io.Writer) error) error {
	if path == "" || path == "-" {
		var buf bytes.Buffer
		if err := write(&buf); err != nil {
			return err
		}
		_, err := stdout.Write(buf.Bytes())
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	err = write(f)
	if err == nil {
		// The temp file is 0600; a report is for others to read. Through
		// the descriptor: a name could be swapped for a symlink meanwhile.
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
