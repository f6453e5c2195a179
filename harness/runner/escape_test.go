package runner

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/fsnsuite/fsnsuite/tap"
)

// A results.json written by other means (older, by hand) that holds control
// characters is read back escaped, as Parse would have.
func TestLoadResultsEscapes(t *testing.T) {
	dir := t.TempDir()
	doc := `{"version":"TAP version 13","plan":1,"children":[{"name":"a","status":"fail","plan":1,` +
		`"children":[{"name":"c","status":"fail","diagnostics":["x\u001b[2Jy"],"reason":"r\u0007"}]}]}`
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "results.json"), []byte(doc), 0o644))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "run.json"), []byte(`{"suite":"fsnsuite","start":"2026-01-02T03:04:05Z"}`), 0o644))
	r, err := LoadResults(dir)
	assert.NilError(t, err)
	leaf := r.Root.Children[0].Children[0]
	assert.DeepEqual(t, leaf.Diagnostics, []string{`x\x1b[2Jy`})
	assert.Equal(t, leaf.Reason, `r\x07`)
}

// A figure with a non-finite number costs that figure, not the export: the
// leaf's misc says which was left out and why (issue 33 item 6: the whole
// export failed, with a 0-byte file).
func TestKCIDBNonFinite(t *testing.T) {
	st := tap.ParseString("1..1\n# measurement: ns_per_op 1664 ns/op [1651,1678]\n# measurement: ratio 1.02 ratio [NaN,+Inf]\n# measurement: undecided 1.1 ratio [-Inf,+Inf]\nok 1 write.tmpfs\n")
	r := &Results{Root: &tap.Node{Children: []*tap.Node{{Name: "perf_x", Status: tap.StatusPass, Children: st.Children}}}, Info: RunInfo{Kernel: "6.18.0"}}
	var buf bytes.Buffer
	assert.NilError(t, WriteKCIDB(&buf, r, KCIDBOptions{}))
	assert.DeepEqual(t, kcidbRules(buf.Bytes()), []string(nil))
	var doc kcidbDoc
	assert.NilError(t, json.Unmarshal(buf.Bytes(), &doc))
	byPath := map[string]kcidbTest{}
	for _, tt := range doc.Tests {
		byPath[tt.Path] = tt
	}
	assert.Equal(t, len(byPath), 3, "%v", byPath)
	leaf := byPath["fsnsuite.perf_x.write.tmpfs"]
	assert.DeepEqual(t, leaf.Misc["dropped_figures"], []any{"ratio: interval bound NaN is not finite (figure left out)"})
	fig := byPath["fsnsuite.perf_x.write.tmpfs.ns_per_op"]
	assert.Assert(t, fig.Number != nil)
	assert.Equal(t, fig.Number.Value, 1664.0)
	assert.Check(t, fig.Misc["dropped_figures"] == nil, "the note is the leaf's")
	// The perf engine's undecided interval is a figure; JSON has no
	// infinity, so its interval is said in words.
	und := byPath["fsnsuite.perf_x.write.tmpfs.undecided"]
	assert.Assert(t, und.Number != nil)
	assert.Equal(t, und.Number.Value, 1.1)
	assert.Equal(t, und.Misc["interval"], "unbounded")
}
