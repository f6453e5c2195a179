// Command payload stands in for the fsnsuite runner in harness/vm's
// integration test: it prints a small TAP stream with one nested block, checks
// what the guest provides (tmpfs /tmp, mkfs.ext4, loop-control), writes a
// file into $FSNSUITE_RESULTS_DIR and exits with the code given as argument.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

func main() {
	code := 0
	if len(os.Args) > 1 {
		code, _ = strconv.Atoi(os.Args[1])
	}
	fmt.Println("TAP version 13")
	fmt.Println("1..3")
	fmt.Println("# Subtest: payload_probe")
	fmt.Println("    1..1")
	fmt.Println("    ok 1 hello")
	fmt.Println("ok 1 payload_probe")
	_, err := exec.LookPath("mkfs.ext4")
	if err != nil {
		fmt.Printf("not ok 2 mkfs_ext4\n# %v\n", err)
	} else {
		img := filepath.Join(os.TempDir(), "img")
		f, _ := os.Create(img)
		_ = f.Truncate(16 << 20)
		f.Close()
		out, err := exec.Command("mkfs.ext4", "-q", "-F", img).CombinedOutput()
		if err != nil {
			fmt.Printf("not ok 2 mkfs_ext4\n# %v: %s\n", err, out)
		} else {
			fmt.Println("ok 2 mkfs_ext4")
		}
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		fmt.Printf("ok 3 loop_control # SKIP %v\n", err)
	} else {
		fmt.Println("ok 3 loop_control")
	}
	fmt.Fprintln(os.Stderr, "payload: stderr line")
	if d := os.Getenv("FSNSUITE_RESULTS_DIR"); d != "" {
		_ = os.MkdirAll(filepath.Join(d, "sub"), 0o755)
		_ = os.WriteFile(filepath.Join(d, "sub", "summary.txt"), []byte("payload ran\n"), 0o644)
	}
	os.Exit(code)
}
