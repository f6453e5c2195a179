package runner

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// A results directory the runner did not make must be the caller's (issue
// 33 item 3): another user's, one others may write, a symlink, a file: each
// refused with why, before anything is written or run.
func TestResultsDirRefused(t *testing.T) {
	dir := t.TempDir()
	b := fake(t, dir, "a", passBody)
	mine := filepath.Join(dir, "mine")
	assert.NilError(t, os.Mkdir(mine, 0o755))
	type tc struct {
		name, path, want string
	}
	tests := []tc{
		{"group_writable", filepath.Join(dir, "gw"), "it is writable by group or others (mode 0775)"},
		{"sticky_world_writable", filepath.Join(dir, "tmp"), "it is writable by group or others (mode 1777)"},
		{"symlink", filepath.Join(dir, "link"), "it is a symbolic link (to " + mine + ")"},
		{"file", filepath.Join(dir, "file"), "it is not a directory (a regular file)"},
	}
	assert.NilError(t, os.Mkdir(tests[0].path, 0o755))
	assert.NilError(t, os.Chmod(tests[0].path, 0o775))
	assert.NilError(t, os.Mkdir(tests[1].path, 0o755))
	assert.NilError(t, os.Chmod(tests[1].path, os.ModeSticky|0o777))
	assert.NilError(t, os.Symlink(mine, tests[2].path))
	assert.NilError(t, os.WriteFile(tests[3].path, nil, 0o644))
	if os.Geteuid() == 0 {
		other := filepath.Join(dir, "other")
		assert.NilError(t, os.Mkdir(other, 0o755))
		assert.NilError(t, os.Chown(other, 65534, 65534))
		tests = append(tests, tc{"another_users", other, "it is owned by uid 65534"})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			_, err := Run(context.Background(), []Binary{b}, Options{ResultsDir: tc.path, Out: &out})
			assert.ErrorContains(t, err, "refused: "+tc.want)
			assert.Equal(t, out.String(), "", "nothing ran")
			for _, d := range []string{tc.path, mine} {
				if ents, err := os.ReadDir(d); err == nil {
					assert.Check(t, is.Len(ents, 0), "%s", d)
				}
			}
		})
	}
	// A directory that does not exist is made, the caller's.
	fresh := filepath.Join(dir, "new", "res")
	_, err := Run(context.Background(), []Binary{b}, Options{ResultsDir: fresh, Out: io.Discard})
	assert.NilError(t, err)
	assert.NilError(t, CheckResultsDir(fresh))
}

// A symlink in the caller's results directory (left from the time it was
// another's, or by a tool) is replaced, never followed: not by the files
// written at the end, nor by results.tap, nor by logs/ (which old logs are
// cleared from) nor by a log in it (issue 33 item 3).
func TestResultsDirSymlinksReplaced(t *testing.T) {
	dir := t.TempDir()
	b := fake(t, dir, "a", passBody)
	victims := filepath.Join(dir, "victims")
	assert.NilError(t, os.MkdirAll(filepath.Join(victims, "dir"), 0o755))
	victim := filepath.Join(victims, "file")
	assert.NilError(t, os.WriteFile(victim, []byte("victim\n"), 0o644))
	assert.NilError(t, os.WriteFile(filepath.Join(victims, "dir", "a.stdout"), []byte("keep\n"), 0o644))
	res := filepath.Join(dir, "res")
	assert.NilError(t, os.Mkdir(res, 0o755))
	files := []string{"results.tap", "results.json", "junit.xml", "run.json", "lava.txt", "summary.txt"}
	for _, f := range files {
		assert.NilError(t, os.Symlink(victim, filepath.Join(res, f)))
	}
	assert.NilError(t, os.Symlink(filepath.Join(victims, "dir"), filepath.Join(res, "logs")))
	_, err := Run(context.Background(), []Binary{b}, Options{ResultsDir: res, Out: io.Discard})
	assert.NilError(t, err)
	got, _ := os.ReadFile(victim)
	assert.Equal(t, string(got), "victim\n")
	got, _ = os.ReadFile(filepath.Join(victims, "dir", "a.stdout"))
	assert.Equal(t, string(got), "keep\n")
	for _, f := range append(files, "logs", "logs/a.stdout") {
		fi, err := os.Lstat(filepath.Join(res, f))
		assert.NilError(t, err)
		assert.Check(t, fi.Mode()&os.ModeSymlink == 0, "%s is a symlink", f)
	}

	// A symlink among the logs of an earlier run goes as a link.
	assert.NilError(t, os.Remove(filepath.Join(res, "logs", "a.stdout")))
	assert.NilError(t, os.Symlink(victim, filepath.Join(res, "logs", "a.stdout")))
	assert.NilError(t, os.Symlink(victim, filepath.Join(res, "logs", "gone.stderr")))
	_, err = Run(context.Background(), []Binary{b}, Options{ResultsDir: res, Out: io.Discard})
	assert.NilError(t, err)
	got, _ = os.ReadFile(victim)
	assert.Equal(t, string(got), "victim\n")
	_, err = os.Lstat(filepath.Join(res, "logs", "gone.stderr"))
	assert.Check(t, errors.Is(err, os.ErrNotExist), "an old log of a binary not run is cleared: %v", err)
	ents, _ := os.ReadDir(res)
	for _, e := range ents {
		assert.Check(t, !strings.Contains(e.Name(), ".tmp-"), "temp file %s left behind", e.Name())
	}
}

// A file written at the end is whole or absent: a write that fails leaves
// no temp file and the file as it was.
func TestReplaceWholeOrNothing(t *testing.T) {
	dir := t.TempDir()
	d, err := openResultsDir(dir)
	assert.NilError(t, err)
	defer d.close()
	assert.NilError(t, replace(d.dir, "x.txt", func(w io.Writer) error { _, err := io.WriteString(w, "first\n"); return err }))
	err = replace(d.dir, "x.txt", func(w io.Writer) error {
		io.WriteString(w, "half")
		return errors.New("disk full")
	})
	assert.ErrorContains(t, err, "writing "+filepath.Join(dir, "x.txt")+": disk full")
	got, _ := os.ReadFile(filepath.Join(dir, "x.txt"))
	assert.Equal(t, string(got), "first\n")
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	assert.DeepEqual(t, names, []string{"logs", "x.txt"})
}

// A results directory whose files the run could not write whole is refused
// by its readers, saying so (issue 33 item 9): results.tap cut mid-line or
// at a line's end, results.json cut short.
func TestLoadResultsCutShort(t *testing.T) {
	dir := t.TempDir()
	bins := []Binary{fake(t, dir, "a", passBody), fake(t, dir, "b", failBody)}
	res := filepath.Join(dir, "res")
	_, err := Run(context.Background(), bins, Options{ResultsDir: res, Out: io.Discard})
	assert.NilError(t, err)
	_, err = LoadResults(res)
	assert.NilError(t, err)
	tapPath, jsonPath := filepath.Join(res, "results.tap"), filepath.Join(res, "results.json")
	whole, err := os.ReadFile(tapPath)
	assert.NilError(t, err)
	lastBlock := bytes.Index(whole, []byte("    # Subtest: b"))
	assert.Assert(t, lastBlock > 0)
	for _, tc := range []struct {
		name string
		tap  []byte
		want string
	}{
		{"mid_line", whole[:lastBlock+10], "results.tap: cut short: no newline at its end"},
		{"at_a_line_end", whole[:lastBlock], "results.tap: cut short: plan 1..2 but only 1 result lines"},
		{"empty", nil, "results.tap: cut short: no newline at its end (0 bytes)"},
	} {
		assert.NilError(t, os.WriteFile(tapPath, tc.tap, 0o644))
		_, err := LoadResults(res)
		assert.ErrorContains(t, err, tc.want, tc.name)
		assert.Check(t, is.Contains(err.Error(), res+"/"), "names the file: %v", err)
	}
	assert.NilError(t, os.WriteFile(tapPath, whole, 0o644))
	js, err := os.ReadFile(jsonPath)
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(jsonPath, js[:len(js)/2], 0o644))
	_, err = LoadResults(res)
	assert.ErrorContains(t, err, "results.json: cut short: the JSON ends after")
}
