package spec

import (
	"bytes"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// The embedded map parses, names the man pages' version, and every page has
// rules.
func TestEmbeddedMap(t *testing.T) {
	m, err := Load()
	assert.NilError(t, err)
	assert.Check(t, strings.Contains(m.Header["manpages"], "6.20"), "header: %v", m.Header)
	perPage := map[string]int{}
	for _, r := range m.Rules {
		perPage[r.Page]++
		assert.Check(t, !strings.Contains(r.Text, " | "), "%s: text holds a field separator", r.ID)
	}
	for _, p := range Pages {
		assert.Check(t, perPage[p] > 0, "page %s has no rule", p)
	}
}

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"bad id", "fanotify.7/x | a\n", "want PAGE/SECTION/NAME"},
		{"unknown page", "inotify_init.2/a/b | a\n", "page \"inotify_init.2\""},
		{"duplicate", "fanotify.7/a/b | a\nfanotify.7/a/b | c\n", "already on line 1"},
		{"no text", "fanotify.7/a/b\n", "want \"ID | text\""},
		{"empty text", "fanotify.7/a/b |  | src: x\n", "empty text"},
		{"unknown field", "fanotify.7/a/b | a | why: x\n", "field \"why: x\""},
		{"two sources", "fanotify.7/a/b | a | src: x | src: y\n", "each once"},
		{"bad header", "@manpages\nfanotify.7/a/b | a\n", "want \"@key value\""},
		{"empty", "# nothing\n", "no rules"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.text))
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

func TestCover(t *testing.T) {
	m, err := Parse(strings.NewReader(`@manpages test 1.0
fanotify.7/a/one | checked
fanotify.7/a/two | not checked
fanotify.7/a/three | cannot be | untestable: needs a fuse server
fanotify.7/a/four | kernel says more | src: fs/notify/x.c f
`))
	assert.NilError(t, err)
	r := Cover(m, []Claim{
		{"bin", "case.tmpfs", "fanotify.7/a/one"},
		{"bin", "case.ext4", "fanotify.7/a/one"},
		{"bin", "case.ext4", "fanotify.7/a/four"},
		{"bin", "case.ext4", "fanotify.7/a/nope"},
	})
	assert.Equal(t, r.Total, 4)
	assert.DeepEqual(t, r.Covered["fanotify.7/a/one"], []string{"bin case.ext4", "bin case.tmpfs"})
	assert.Equal(t, len(r.Missing), 1)
	assert.Equal(t, r.Missing[0].ID, "fanotify.7/a/two")
	assert.Equal(t, len(r.Untestable), 1)
	assert.Equal(t, r.SourceRules, 1)
	assert.Equal(t, len(r.Unknown), 1)
	var b bytes.Buffer
	assert.NilError(t, r.Write(&b, m, false))
	out := b.String()
	assert.Check(t, strings.HasPrefix(out, "spec-coverage: 4 rules (test 1.0), 2 checked by a case, 1 without a case, 1 untestable"), out)
	assert.Check(t, is.Contains(out, "  fanotify.7/a/two  not checked\n"))
	assert.Check(t, is.Contains(out, "  fanotify.7/a/three  (needs a fuse server)\n"))
	assert.Check(t, is.Contains(out, "bin case.ext4 fanotify.7/a/nope"))
}
