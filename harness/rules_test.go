package harness

import (
	"bytes"
	"testing"

	"gotest.tools/v3/assert"
)

func TestListRules(t *testing.T) {
	s := Suite{
		Name:        "x",
		Filesystems: []string{"tmpfs", "ext4"},
		Cases: []Case{
			{Name: "a"},
			{Name: "b", Subtests: []string{"one", "two"}},
		},
		Rules: map[string][]string{
			"a":       {"inotify.7/read/blocks"},
			"b.ext4":  {"inotify.7/notes/poll"},
			"b/two":   {"inotify.7/notes/sigio", "inotify.7/notes/fionread"},
			"a.tmpfs": {"inotify.7/notes/ordered"},
		},
	}
	all := expand(&s)
	var out bytes.Buffer
	assert.NilError(t, listRules(&s, all, all, &out))
	assert.Equal(t, out.String(), `a.tmpfs inotify.7/read/blocks
a.tmpfs inotify.7/notes/ordered
a.ext4 inotify.7/read/blocks
b.tmpfs/two inotify.7/notes/sigio
b.tmpfs/two inotify.7/notes/fionread
b.ext4 inotify.7/notes/poll
b.ext4/two inotify.7/notes/sigio
b.ext4/two inotify.7/notes/fionread
`)
	// Only the selected leaves are printed.
	out.Reset()
	assert.NilError(t, listRules(&s, all, all[:1], &out))
	assert.Equal(t, out.String(), "a.tmpfs inotify.7/read/blocks\na.tmpfs inotify.7/notes/ordered\n")
}

func TestListRulesRefuses(t *testing.T) {
	s := Suite{
		Name:  "x",
		Cases: []Case{{Name: "a", Subtests: []string{"one"}}},
		Rules: map[string][]string{
			"nocase":  {"inotify.7/read/blocks"},
			"a/three": {"inotify.7/read/blocks"},
			"a":       {"inotify.7/read/no-such-rule"},
			"a/one":   {},
		},
	}
	all := expand(&s)
	err := listRules(&s, all, all, &bytes.Buffer{})
	assert.ErrorContains(t, err, `key "nocase" names no case`)
	assert.ErrorContains(t, err, `key "a/three" names no case`)
	assert.ErrorContains(t, err, `rule "inotify.7/read/no-such-rule" is not in harness/spec/rules.txt`)
	assert.ErrorContains(t, err, `key "a/one" declares no rule`)
}
