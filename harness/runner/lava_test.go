package runner

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// lava.txt ends with a count line that ParseLAVA (and lava-results.sh)
// check the lines against: a file cut short is an error, not fewer lines.
func TestLAVACountLine(t *testing.T) {
	_, res := exportRun(t)
	b, err := os.ReadFile(filepath.Join(res, "lava.txt"))
	assert.NilError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	assert.Equal(t, len(lines), 13)
	assert.Equal(t, lines[12], "# count pass=5 fail=3 skip=4 total=12")
	cutAt := bytes.Index(b, []byte("crasher.missing_3"))
	for _, tc := range []struct{ name, text, want string }{
		{"cut_mid_line", string(b[:cutAt+5]), "cut short: no newline at the end"},
		{"cut_at_line_end", string(b[:cutAt]), "cut short: the last line is \"crasher.missing_2 fail\", not the count line"},
		{"count_disagrees", strings.Replace(string(b), "fail=3", "fail=0", 1), `the count line says "# count pass=5 fail=0 skip=4 total=12", the lines above it "# count pass=5 fail=3 skip=4 total=12"`},
		{"line_dropped", strings.Replace(string(b), "crasher.missing_3 fail\n", "", 1), "the lines above it \"# count pass=5 fail=2 skip=4 total=11\""},
		{"non_finite", strings.Replace(string(b), "1.005 ratio", "NaN ratio", 1), "is not a finite number"},
	} {
		_, err := ParseLAVA(strings.NewReader(tc.text))
		assert.Check(t, is.ErrorContains(err, tc.want), tc.name)
	}
}
