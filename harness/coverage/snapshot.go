package coverage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// SnapshotsEnv names the directory a gcov guest's runner copies the
// counters into after each binary (harness/vm init.sh sets it with
// make coverage): one subdirectory per binary, "NN-name" in run order,
// beside the boot/ and suite/ snapshots.
const SnapshotsEnv = "FSNSUITE_GCOV_SNAPSHOTS"

// GcovDebugfs is where a CONFIG_GCOV_KERNEL kernel shows its counters.
const GcovDebugfs = "/sys/kernel/debug/gcov"

// BinSnapshots is the subdirectory of a gcda directory that holds the
// per-binary snapshots.
const BinSnapshots = "bin"

// Snapshot copies every .gcda file under from into to, keeping the
// directory structure, and returns how many it copied. debugfs reports a
// size of 0 for them: they are read to the end, never sized by stat.
func Snapshot(from, to string) (int, error) {
	n := 0
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".gcda") {
			return nil
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dest := filepath.Join(to, rel)
		if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dest, b, 0o644); err != nil {
			return err
		}
		n++
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("coverage: snapshot of %s: %w", from, err)
	}
	return n, nil
}

// BinarySnapshot is one per-binary snapshot directory.
type BinarySnapshot struct {
	// Binary is the binary's name, Dir the snapshot taken after it ended.
	Binary, Dir string
}

// SnapshotFailed is the file the runner writes into the snapshots
// directory when a per-binary snapshot could not be taken: the per-binary
// counts are then not given at all.
const SnapshotFailed = "snapshot-failed"

// ErrSnapshotsIncomplete is BinarySnapshots' error when a snapshot failed.
var ErrSnapshotsIncomplete = errors.New("coverage: a per-binary snapshot failed")

// BinarySnapshots lists the per-binary snapshots under gcda/bin in run
// order (none when the run took none: an older guest, or -j without
// them).
func BinarySnapshots(gcda string) ([]BinarySnapshot, error) {
	if b, err := os.ReadFile(filepath.Join(gcda, BinSnapshots, SnapshotFailed)); err == nil {
		return nil, fmt.Errorf("%w: %s", ErrSnapshotsIncomplete, strings.TrimSpace(string(b)))
	}
	ents, err := os.ReadDir(filepath.Join(gcda, BinSnapshots))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("coverage: %w", err)
	}
	var out []BinarySnapshot
	order := map[string]int{}
	for _, e := range ents {
		pos, name, ok := strings.Cut(e.Name(), "-")
		n, err := strconv.Atoi(pos)
		if !e.IsDir() || !ok || err != nil {
			continue
		}
		d := filepath.Join(gcda, BinSnapshots, e.Name())
		order[d] = n
		out = append(out, BinarySnapshot{Binary: name, Dir: d})
	}
	// By the position number, not the name: 100 sorts before 99.
	sort.Slice(out, func(i, j int) bool { return order[out[i].Dir] < order[out[j].Dir] })
	return out, nil
}

// AttributeBinaries sets each line's By from the per-binary snapshots:
// the counters after each binary minus those after the one before (the
// first against before, the snapshot taken when the runner started), so a
// line's By names every binary during which it ran, and how often.
//
// A file missing from a snapshot (a copy that failed) is taken from the
// last snapshot that has it, so its counts are never credited in full to
// the next binary.
func (p *Profile) AttributeBinaries(before *Profile, snaps []*Profile, names []string) {
	last := map[string]*File{}
	if before != nil {
		for path, f := range before.Files {
			last[path] = f
		}
	}
	for i, cur := range snaps {
		for path, f := range p.Files {
			cf := cur.Files[path]
			if cf == nil {
				continue
			}
			pf := last[path]
			last[path] = cf
			for n, l := range f.Lines {
				c := cf.Lines[n]
				if c == nil {
					continue
				}
				d := c.Count
				if pf != nil && pf.Lines[n] != nil {
					d -= pf.Lines[n].Count
				}
				if d > 0 {
					if l.By == nil {
						l.By = map[string]int64{}
					}
					l.By[names[i]] += d
				}
			}
		}
	}
}

// byShown is how many binaries ByString names before "and N more".
const byShown = 5

// ByString renders a By map as "name N, name N" in descending count, the
// first byShown of them ("and N more": lines.json has them all).
func ByString(by map[string]int64) string {
	type kv struct {
		k string
		v int64
	}
	var s []kv
	for k, v := range by {
		s = append(s, kv{k, v})
	}
	sort.Slice(s, func(i, j int) bool {
		if s[i].v != s[j].v {
			return s[i].v > s[j].v
		}
		return s[i].k < s[j].k
	})
	var out []string
	for i, e := range s {
		if i == byShown {
			out = append(out, fmt.Sprintf("and %d more", len(s)-byShown))
			break
		}
		out = append(out, fmt.Sprintf("%s %d", e.k, e.v))
	}
	return strings.Join(out, ", ")
}
