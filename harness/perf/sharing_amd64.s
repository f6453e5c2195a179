#include "textflag.h"

// The sharing profile's markers (sharing.go): "nopl disp32(%rax)", 0f 1f 80
// followed by disp32 = 0x4653<<16 | op<<8 | tag, little endian: tag, op,
// 0x53, 0x46. A no-op that touches no memory; the qemu plugin
// (scripts/vm/sharing/fsnshare.c) recognizes its bytes when it translates
// it. op 1 opens a window, op 2 closes it (tag: the condition's index); op 3
// joins the vCPU that runs it (its kernel stores count), op 4 leaves it; op 5
// says the next syscall instruction the vCPU runs is the workload's.

// func shareStart0()
TEXT ·shareStart0(SB), NOSPLIT, $0-0
	BYTE $0x0f; BYTE $0x1f; BYTE $0x80; BYTE $0x00; BYTE $0x01; BYTE $0x53; BYTE $0x46
	RET

// func shareStart1()
TEXT ·shareStart1(SB), NOSPLIT, $0-0
	BYTE $0x0f; BYTE $0x1f; BYTE $0x80; BYTE $0x01; BYTE $0x01; BYTE $0x53; BYTE $0x46
	RET

// func shareStop0()
TEXT ·shareStop0(SB), NOSPLIT, $0-0
	BYTE $0x0f; BYTE $0x1f; BYTE $0x80; BYTE $0x00; BYTE $0x02; BYTE $0x53; BYTE $0x46
	RET

// func shareStop1()
TEXT ·shareStop1(SB), NOSPLIT, $0-0
	BYTE $0x0f; BYTE $0x1f; BYTE $0x80; BYTE $0x01; BYTE $0x02; BYTE $0x53; BYTE $0x46
	RET

// func shareJoin()
TEXT ·shareJoin(SB), NOSPLIT, $0-0
	BYTE $0x0f; BYTE $0x1f; BYTE $0x80; BYTE $0x00; BYTE $0x03; BYTE $0x53; BYTE $0x46
	RET

// func shareLeave()
TEXT ·shareLeave(SB), NOSPLIT, $0-0
	BYTE $0x0f; BYTE $0x1f; BYTE $0x80; BYTE $0x00; BYTE $0x04; BYTE $0x53; BYTE $0x46
	RET

// func shareLearn()
TEXT ·shareLearn(SB), NOSPLIT, $0-0
	BYTE $0x0f; BYTE $0x1f; BYTE $0x80; BYTE $0x00; BYTE $0x05; BYTE $0x53; BYTE $0x46
	RET
