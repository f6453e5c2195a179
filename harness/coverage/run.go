package coverage

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Object is one object file's coverage data: the .gcda from the guest and the
// .gcno of the build.
type Object struct {
	Rel  string // path relative to the build directory, without extension (fs/notify/mark)
	Gcda string
	Gcno string
}

// FindObjects pairs every .gcda file under gcdaDir with the .gcno file of the
// same object in buildDir. The guest names a .gcda by the build directory's
// path (/sys/kernel/debug/gcov/<build dir>/fs/notify/mark.gcda), so the
// longest suffix of its path that names a .gcno in buildDir is the object.
// A .gcda with no .gcno is an error: the data is from another build.
func FindObjects(buildDir, gcdaDir string) ([]Object, error) {
	var objs []Object
	err := filepath.WalkDir(gcdaDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".gcda") {
			return nil
		}
		rel, err := filepath.Rel(gcdaDir, p)
		if err != nil {
			return err
		}
		parts := strings.Split(filepath.ToSlash(strings.TrimSuffix(rel, ".gcda")), "/")
		for i := range parts {
			cand := filepath.Join(parts[i:]...)
			gcno := filepath.Join(buildDir, cand+".gcno")
			if _, err := os.Stat(gcno); err == nil {
				objs = append(objs, Object{Rel: filepath.ToSlash(cand), Gcda: p, Gcno: gcno})
				return nil
			}
		}
		return fmt.Errorf("coverage: %s has no .gcno in %s: the data is from another build", rel, buildDir)
	})
	if err != nil {
		return nil, err
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("coverage: no .gcda files under %s", gcdaDir)
	}
	sort.Slice(objs, func(i, j int) bool { return objs[i].Rel < objs[j].Rel })
	return objs, nil
}

// RunGcov runs gcov (the binary, "gcov" when empty: it must be the gcov of
// the gcc that built the kernel) on each object in JSON mode and returns its
// output, one JSON document per object. Each object's .gcno and .gcda are
// staged together in a private directory, so the build directory is not
// written to.
func RunGcov(gcov string, objs []Object) ([]byte, error) {
	if gcov == "" {
		gcov = "gcov"
	}
	stage, err := os.MkdirTemp("", "fsnsuite-gcov-")
	if err != nil {
		return nil, fmt.Errorf("coverage: %w", err)
	}
	defer os.RemoveAll(stage)
	var out bytes.Buffer
	for _, o := range objs {
		base := filepath.Join(stage, filepath.FromSlash(o.Rel))
		if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
			return nil, fmt.Errorf("coverage: %w", err)
		}
		if err := copyFile(o.Gcno, base+".gcno"); err != nil {
			return nil, err
		}
		if err := copyFile(o.Gcda, base+".gcda"); err != nil {
			return nil, err
		}
		cmd := exec.Command(gcov, "--json-format", "--stdout", "--object-directory", filepath.Dir(base), base+".gcda")
		cmd.Dir = stage
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("coverage: %s on %s: %w: %s", gcov, o.Rel, err, strings.TrimSpace(stderr.String()))
		}
		out.WriteByte('\n')
	}
	return out.Bytes(), nil
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return fmt.Errorf("coverage: %w", err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		return fmt.Errorf("coverage: %w", err)
	}
	return nil
}
