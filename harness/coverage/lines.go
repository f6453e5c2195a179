package coverage

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// LineData is the per-line execution counts of a run, as `make coverage`
// writes them to results/coverage/lines.json (fsncov -lines) for `make
// mutants` to tell the mutants on never-executed lines.
type LineData struct {
	// Files maps a path relative to the kernel tree to its counts.
	Files map[string]LineFile `json:"files"`
}

// LineFile is one source file's counts.
type LineFile struct {
	// SHA256 is the hex digest of the source the kernel was built from,
	// so counts are not applied to another version of the file.
	SHA256 string `json:"sha256"`
	// Lines maps an instrumented line to its counts.
	Lines map[int]LineCount `json:"lines"`
}

// LineCount is what one line ran: during the suite and before it (boot).
type LineCount struct {
	Suite int64 `json:"suite"`
	Boot  int64 `json:"boot,omitempty"`
	// By is how many times it ran during each binary (when the run took
	// per-binary snapshots).
	By map[string]int64 `json:"by,omitempty"`
}

// Lines returns the per-line counts of the files accepted by keep, each with
// the digest of its source under src.
func (p *Profile) Lines(src string, keep func(string) bool) (*LineData, error) {
	d := &LineData{Files: map[string]LineFile{}}
	for _, name := range p.Paths(keep) {
		b, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(name)))
		if err != nil {
			return nil, fmt.Errorf("coverage: %w", err)
		}
		sum := sha256.Sum256(b)
		lf := LineFile{SHA256: hex.EncodeToString(sum[:]), Lines: map[int]LineCount{}}
		for n, l := range p.Files[name].Lines {
			lf.Lines[n] = LineCount{Suite: l.Count, Boot: l.Boot, By: l.By}
		}
		d.Files[name] = lf
	}
	return d, nil
}

// ReadLines reads a lines.json written from LineData.
func ReadLines(r io.Reader) (*LineData, error) {
	var d LineData
	if err := json.NewDecoder(r).Decode(&d); err != nil {
		return nil, fmt.Errorf("coverage: line data: %w", err)
	}
	if d.Files == nil {
		return nil, fmt.Errorf("coverage: line data: no \"files\"")
	}
	return &d, nil
}
