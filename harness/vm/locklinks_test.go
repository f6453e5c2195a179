package vm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A lock file with another hard link (a name another user could have made
// for a file of root's) is refused and its mode left alone.
func TestLockRefusesHardLinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, "vm.lock")
	if err := os.Link(target, lock); err != nil {
		t.Fatal(err)
	}
	release, err := Lock(lock, nil)
	if err == nil {
		release()
		t.Fatal("a hard-linked lock file was taken")
	}
	if !strings.Contains(err.Error(), "hard links") {
		t.Errorf("error %q does not say why", err)
	}
	if st, _ := os.Stat(target); st.Mode().Perm() != 0o644 {
		t.Errorf("the linked file's mode changed to %v", st.Mode().Perm())
	}
}
