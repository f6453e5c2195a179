// Package tinyelf makes the smallest executable a test can execve: a static
// ELF image whose only code is exit(status), the same on every machine (no
// interpreter, no library, no program of the host or guest copied: a copy of
// busybox or of a dynamically linked true(1) does not run under another name
// or without its loader).
package tinyelf

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Program returns a static ELF executable for arch whose only code is
// exit(status): an ELF header (64 bytes), one PT_LOAD program header (56
// bytes) mapping the whole file read+execute at 0x400000, and the code. See
// elf(5) for the layout.
func Program(arch string, status byte) ([]byte, error) {
	var machine uint16
	var code []byte
	switch arch {
	case "amd64":
		machine = 62 // EM_X86_64
		code = []byte{
			0xbf, status, 0, 0, 0, // mov $status, %edi
			0xb8, 60, 0, 0, 0, // mov $60 (exit), %eax
			0x0f, 0x05, // syscall
		}
	case "arm64":
		machine = 183 // EM_AARCH64
		ins := []uint32{
			0xd2800000 | uint32(status)<<5, // mov x0, #status
			0xd2800ba8,                     // mov x8, #93 (exit)
			0xd4000001,                     // svc #0
		}
		for _, i := range ins {
			code = binary.LittleEndian.AppendUint32(code, i)
		}
	default:
		return nil, fmt.Errorf("no tiny program for GOARCH %s", arch)
	}
	const base, ehsize, phsize = 0x400000, 64, 56
	size := uint64(ehsize + phsize + len(code))
	var b bytes.Buffer
	le := binary.LittleEndian
	b.Write([]byte{0x7f, 'E', 'L', 'F', 2 /* 64-bit */, 1 /* little-endian */, 1 /* EV_CURRENT */, 0 /* System V */})
	b.Write(make([]byte, 8))
	binary.Write(&b, le, uint16(2)) // e_type ET_EXEC
	binary.Write(&b, le, machine)
	binary.Write(&b, le, uint32(1))                  // e_version
	binary.Write(&b, le, uint64(base+ehsize+phsize)) // e_entry: the code
	binary.Write(&b, le, uint64(ehsize))             // e_phoff
	binary.Write(&b, le, uint64(0))                  // e_shoff
	binary.Write(&b, le, uint32(0))                  // e_flags
	binary.Write(&b, le, uint16(ehsize))             // e_ehsize
	binary.Write(&b, le, uint16(phsize))             // e_phentsize
	binary.Write(&b, le, uint16(1))                  // e_phnum
	binary.Write(&b, le, uint16(64))                 // e_shentsize
	binary.Write(&b, le, uint16(0))                  // e_shnum
	binary.Write(&b, le, uint16(0))                  // e_shstrndx
	binary.Write(&b, le, uint32(1))                  // p_type PT_LOAD
	binary.Write(&b, le, uint32(5))                  // p_flags PF_R|PF_X
	binary.Write(&b, le, uint64(0))                  // p_offset
	binary.Write(&b, le, uint64(base))               // p_vaddr
	binary.Write(&b, le, uint64(base))               // p_paddr
	binary.Write(&b, le, size)                       // p_filesz
	binary.Write(&b, le, size)                       // p_memsz
	binary.Write(&b, le, uint64(0x1000))             // p_align
	b.Write(code)
	return b.Bytes(), nil
}
