package main

import "testing"

// nameHash64 is fs/namei.c's full_name_hash on a 64-bit little-endian kernel
// with word-at-a-time access, for a name of 1 to 7 bytes: the name's bytes
// are one word (little-endian, the rest zero), mixed with the salt by
// fold_hash (y ^= x * GOLDEN_RATIO_64; y *= GOLDEN_RATIO_64; the top 32
// bits). fanotify salts a name with its length.
func nameHash64(name string) uint32 {
	const goldenRatio64 = 0x61C8864680B583EB
	var x uint64
	for i := 0; i < len(name); i++ {
		x |= uint64(name[i]) << (8 * i)
	}
	y := uint64(len(name))
	y ^= x * goldenRatio64
	y *= goldenRatio64
	return uint32(y >> 32)
}

// TestCollidingNames: merge_name_hash_collision's names are a prefix and a
// longer name whose hashes agree in the 29 bits an event keeps
// (FANOTIFY_EVENT_HASH_BITS), else the case could not tell a kernel that
// ignores name lengths from one that does not.
func TestCollidingNames(t *testing.T) {
	const hashBits = 29
	if len(collideShort) >= len(collideLong) || collideLong[:len(collideShort)] != collideShort || len(collideLong) > 7 {
		t.Fatalf("%q must be a prefix of %q, at most 7 bytes", collideShort, collideLong)
	}
	a, b := nameHash64(collideShort), nameHash64(collideLong)
	if a&(1<<hashBits-1) != b&(1<<hashBits-1) {
		t.Errorf("hashes %#08x (%q) and %#08x (%q) differ in their low %d bits", a, collideShort, b, collideLong, hashBits)
	}
}

// TestCollidingFsids: merge_fsid_hash_collision's fsids differ in val[0]
// only, and fanotify_hash_fsid gives them the same 29-bit hash, else the
// case could not tell a kernel that compares one half of the fsid from one
// that compares both.
func TestCollidingFsids(t *testing.T) {
	a, b := collidingFsidHalves()
	if a == b {
		t.Fatalf("val[0] %#x twice", a)
	}
	if ha, hb := fsidHash29(a, fsidHalfShared), fsidHash29(b, fsidHalfShared); ha != hb {
		t.Errorf("fsid hashes %#x and %#x differ", ha, hb)
	}
	if got, want := ext4UUIDForFsid(0x04030201, 0x08070605), "01020304-0506-0708-0000-000000000000"; got != want {
		t.Errorf("UUID %s, want %s", got, want)
	}
}
