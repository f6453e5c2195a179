package vm

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// moduleTree is an unpacked lib/modules/VERSION directory.
type moduleTree struct {
	dir     string              // lib/modules/VERSION
	version string              // VERSION
	deps    map[string][]string // relative path -> dependency paths (modules.dep)
	byName  map[string]string   // normalised module name -> relative path
	softPre map[string][]string // module name -> "pre:" soft dependencies
	aliases map[string][]string // alias -> module names
	builtin map[string]bool     // normalised names of built-in modules
}

// modName turns "kernel/fs/ext4/ext4.ko.xz" or "crc32c-intel" into "crc32c_intel".
func modName(s string) string {
	b := filepath.Base(s)
	if i := strings.Index(b, ".ko"); i >= 0 {
		b = b[:i]
	}
	return strings.ReplaceAll(b, "-", "_")
}

// findModuleDir accepts lib/modules/VERSION, lib/modules (one version), or a
// root containing lib/modules/VERSION or usr/lib/modules/VERSION.
func findModuleDir(dir string) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, "kernel")); err == nil {
		return dir, nil
	}
	if _, err := os.Stat(filepath.Join(dir, "modules.dep")); err == nil {
		return dir, nil
	}
	for _, sub := range []string{".", "lib/modules", "usr/lib/modules"} {
		ents, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			continue
		}
		var found []string
		for _, e := range ents {
			p := filepath.Join(dir, sub, e.Name())
			if _, err := os.Stat(filepath.Join(p, "kernel")); err == nil {
				found = append(found, p)
			}
		}
		if len(found) == 1 {
			return found[0], nil
		}
		if len(found) > 1 {
			return "", fmt.Errorf("vm: %s holds several module trees (%s); give one lib/modules/VERSION", dir, strings.Join(found, ", "))
		}
	}
	return "", fmt.Errorf("vm: %s is not a module tree (want lib/modules/VERSION with kernel/ and modules.dep)", dir)
}

func loadModuleTree(dir string) (*moduleTree, error) {
	d, err := findModuleDir(dir)
	if err != nil {
		return nil, err
	}
	t := &moduleTree{dir: d, version: filepath.Base(d), deps: map[string][]string{}, byName: map[string]string{},
		softPre: map[string][]string{}, aliases: map[string][]string{}, builtin: map[string]bool{}}
	depFile := filepath.Join(d, "modules.dep")
	if _, err := os.Stat(depFile); os.IsNotExist(err) {
		// Distribution packages ship no modules.dep; build it like their
		// maintainer scripts do.
		base := strings.TrimSuffix(d, filepath.Join("lib", "modules", t.version))
		if base == d {
			return nil, fmt.Errorf("vm: %s has no modules.dep; run depmod -b ROOT %s", d, t.version)
		}
		out, err := exec.Command("depmod", "-b", base, t.version).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("vm: %s has no modules.dep and depmod -b %s %s failed: %v: %s", d, base, t.version, err, strings.TrimSpace(string(out)))
		}
	}
	err = eachLine(depFile, func(line string) {
		mod, rest, ok := strings.Cut(line, ":")
		if !ok {
			return
		}
		t.deps[mod] = strings.Fields(rest)
		t.byName[modName(mod)] = mod
	})
	if err != nil {
		return nil, fmt.Errorf("vm: reading modules.dep: %w", err)
	}
	_ = eachLine(filepath.Join(d, "modules.softdep"), func(line string) {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "softdep" {
			return
		}
		name := modName(f[1])
		pre := false
		for _, w := range f[2:] {
			switch w {
			case "pre:":
				pre = true
			case "post:":
				pre = false
			default:
				if pre {
					t.softPre[name] = append(t.softPre[name], w)
				}
			}
		}
	})
	_ = eachLine(filepath.Join(d, "modules.alias"), func(line string) {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "alias" && !strings.ContainsAny(f[1], "*?[") {
			t.aliases[f[1]] = append(t.aliases[f[1]], modName(f[2]))
		}
	})
	_ = eachLine(filepath.Join(d, "modules.builtin"), func(line string) {
		t.builtin[modName(line)] = true
	})
	return t, nil
}

func eachLine(path string, fn func(string)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			fn(l)
		}
	}
	return sc.Err()
}

// resolve returns the module files (relative paths) to load, dependencies
// first, for the wanted names, and the names found neither as module nor
// built in. Soft "pre:" dependencies are added when they resolve.
func (t *moduleTree) resolve(want []string) (order []string, notFound []string) {
	seen := map[string]bool{}
	var visit func(rel string)
	visit = func(rel string) {
		if seen[rel] {
			return
		}
		seen[rel] = true
		for _, s := range t.softPre[modName(rel)] {
			for _, r := range t.lookup(s) {
				visit(r)
			}
		}
		deps := t.deps[rel]
		// modules.dep lists the deepest dependency last: load from the end.
		for i := len(deps) - 1; i >= 0; i-- {
			visit(deps[i])
		}
		order = append(order, rel)
	}
	for _, w := range want {
		rels := t.lookup(w)
		if len(rels) == 0 {
			if !t.builtin[modName(w)] {
				notFound = append(notFound, w)
			}
			continue
		}
		for _, r := range rels {
			visit(r)
		}
	}
	return order, notFound
}

// lookup maps a module name or alias to module files.
func (t *moduleTree) lookup(name string) []string {
	if rel, ok := t.byName[modName(name)]; ok {
		return []string{rel}
	}
	names := t.aliases[name]
	sort.Strings(names)
	var rels []string
	for _, n := range names {
		if rel, ok := t.byName[n]; ok {
			rels = append(rels, rel)
		}
	}
	return rels
}

// copyModule writes the module rel of t to dst, decompressed (busybox insmod
// and kernels without MODULE_DECOMPRESS take plain ELF objects).
func (t *moduleTree) copyModule(rel, dst string) error {
	src := filepath.Join(t.dir, rel)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	defer out.Close()
	var tool string
	switch {
	case strings.HasSuffix(rel, ".ko"):
	case strings.HasSuffix(rel, ".ko.gz"):
	case strings.HasSuffix(rel, ".ko.xz"):
		tool = "xz"
	case strings.HasSuffix(rel, ".ko.zst"):
		tool = "zstd"
	default:
		return fmt.Errorf("vm: unknown module compression: %s", rel)
	}
	if tool != "" {
		var msg strings.Builder
		cmd := exec.Command(tool, "-dc", src)
		cmd.Stdout = out
		cmd.Stderr = &msg
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("vm: %s -dc %s: %v: %s (install %s)", tool, src, err, strings.TrimSpace(msg.String()), tool)
		}
		return out.Close()
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	var r io.Reader = in
	if strings.HasSuffix(rel, ".gz") {
		zr, err := gzip.NewReader(in)
		if err != nil {
			return fmt.Errorf("vm: %s: %w", src, err)
		}
		r = zr
	}
	if _, err := io.Copy(out, r); err != nil {
		return fmt.Errorf("vm: copying %s: %w", src, err)
	}
	return out.Close()
}

// guestModulePath is where a module is put in the guest (always .ko).
func guestModulePath(version, rel string) string {
	if i := strings.Index(rel, ".ko"); i >= 0 {
		rel = rel[:i] + ".ko"
	}
	return filepath.Join("/lib/modules", version, rel)
}
