/*
 * fsnshare_core.h — the counting core of the sharing profile's qemu plugin
 * (fsnshare.c), kept free of qemu's API so that a synthetic trace can drive
 * it (fsnshare_trace.c, run by harness/sharing's go test).
 *
 * Between a start and a stop marker it records every kernel-mode store (an
 * atomic read-modify-write reports a store too) of a vCPU that a measured
 * thread has joined (join and leave markers run by that thread: the vCPU
 * counts while the thread runs the workload, not while it waits or while
 * other threads of the process, the Go runtime's, run elsewhere) by vCPU and
 * 64-byte physical cache line, and at the stop marker reports for the window:
 *   stores         kernel-mode stores of all vCPUs;
 *   lines          distinct lines written;
 *   shared_writes  stores to lines that more than one vCPU wrote in the
 *                  window (the same whatever the order of the stores);
 *   shared_lines   how many such lines;
 *   remote_writes  of those, the writes not made by the line's main writer
 *                  (per line: its writes minus its most writing vCPU's),
 *                  also independent of the order: a line that one vCPU
 *                  writes a thousand times and another once (a wake-up
 *                  writing the waiter's futex_q on its stack) gives 1,
 *                  two clients taking one inode's lock a thousand times
 *                  each give 1000;
 *   transfers      stores by vCPU j to a line whose last store in the window
 *                  was vCPU i's, i != j (depends on the interleaving).
 */
#ifndef FSNSHARE_CORE_H
#define FSNSHARE_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The upper canonical half of x86-64's address space: the kernel's in Linux
 * (Documentation/arch/x86/x86_64/mm.rst). An instruction there runs in kernel
 * mode; user code (the Go runtime's own sharing included) never does. */
#define FSN_KERNEL_HALF 0xffff800000000000ULL
#define FSN_LINE_SHIFT 6 /* 64-byte cache lines */
#define FSN_MAX_VCPUS 16 /* per-line write counts per vCPU */

/* The marker: "nopl disp32(%rax)" = 0f 1f 80 + disp32, a no-op that touches
 * no memory, with disp32 = 0x4653 << 16 | op << 8 | tag (little endian: tag,
 * op, 0x53, 0x46). op 1 starts a window, op 2 stops it (tag: the workload's,
 * the engine's condition index); op 3 joins the vCPU that runs it, op 4
 * leaves. */
#define FSN_MARKER_LEN 7
#define FSN_OP_START 1
#define FSN_OP_STOP 2
#define FSN_OP_JOIN 3  /* the vCPU running it counts from now on */
#define FSN_OP_LEAVE 4 /* ... no longer (joins nest) */
#define FSN_OP_LEARN 5 /* the next user-mode syscall instruction this vCPU
			* runs is the workload's syscall site */
#define FSN_SYSCALL_LEN 2 /* "syscall": 0f 05 */
#define FSN_MAX_SITES 4

/* How many of a window's shared lines are described: most remote writes
 * first, then most writes. */
#define FSN_HOT_MAX 8

struct fsn_line {
	uint64_t key;     /* line number + 1; 0: empty slot */
	uint64_t writers; /* vCPUs that wrote it in the window */
	uint64_t writes;
	uint32_t by[FSN_MAX_VCPUS]; /* writes per vCPU */
	uint64_t pc;      /* majority vote of the writing instructions */
	int64_t pc_votes;
	int32_t last;     /* last writing vCPU */
};

struct fsn_hot {
	uint64_t line;    /* physical address of the line */
	uint64_t writes;
	uint64_t remote;  /* writes minus its most writing vCPU's */
	uint64_t writers;
	uint64_t pc;      /* an instruction that wrote it (the majority writer if any) */
};

struct fsn_window {
	uint64_t seq;     /* 1, 2, ... in the order windows were started */
	unsigned tag;
	int tag_mismatch; /* the stop marker's tag differed from the start's */
	uint64_t stores, lines, shared_writes, shared_lines, remote_writes, transfers;
	uint64_t foreign; /* kernel stores left out: the vCPU's last syscall was not the workload's */
	unsigned vcpus;   /* vCPUs that stored in the window */
	unsigned nhot;
	struct fsn_hot hot[FSN_HOT_MAX];
};

struct fsn_counter {
	struct fsn_line *tab;
	size_t cap, used;   /* cap: a power of two */
	uint32_t *slots;    /* slots in use, to clear them at the next start */
	int open;
	unsigned tag;
	uint64_t seq;
	uint64_t stores, transfers;
	uint64_t vcpus;     /* mask of vCPUs that stored */
	uint64_t dropped;   /* stores of a vCPU index >= FSN_MAX_VCPUS (never on our VMs) */
	uint64_t orphan_stops, restarts;
	uint64_t unmatched_leaves; /* a leave on a vCPU that had not joined */
	uint64_t joined_at_start;  /* windows started with a vCPU still joined */
	uint64_t first_unmatched_leaves, first_joined_at_start; /* the window (seq) of the first of each, 0: none */
	int oom;
	uint32_t active[FSN_MAX_VCPUS]; /* joins minus leaves per vCPU (kept across windows) */
	/* The syscall-site rule: once a site is learned (FSN_OP_LEARN), a
	 * vCPU's kernel stores count only while the last user-mode syscall
	 * instruction it ran is a learned one, so the kernel work of the Go
	 * runtime's own syscalls (runtime.futex, nanosleep, sched_yield: a
	 * preempted locked goroutine handing its P over) is left out. */
	uint64_t site[FSN_MAX_VCPUS];  /* last user-mode syscall instruction run */
	uint8_t learning[FSN_MAX_VCPUS];
	uint64_t sites[FSN_MAX_SITES];
	unsigned nsites;
	uint64_t foreign;               /* in the open window */
};

int fsn_init(struct fsn_counter *c);
void fsn_free(struct fsn_counter *c);
/* fsn_is_kernel says whether an instruction at vaddr runs in kernel mode. */
static inline int fsn_is_kernel(uint64_t vaddr) { return vaddr >= FSN_KERNEL_HALF; }
/* fsn_marker decodes a marker instruction: 1 and *op, *tag when bytes[0..n)
 * is one, else 0. */
int fsn_marker(const uint8_t *bytes, size_t n, unsigned *op, unsigned *tag);
void fsn_start(struct fsn_counter *c, unsigned tag);
/* fsn_learn: vCPU's next user-mode syscall instruction is a workload site. */
void fsn_learn(struct fsn_counter *c, unsigned vcpu);
/* fsn_syscall: vCPU runs the user-mode syscall instruction at vaddr. */
void fsn_syscall(struct fsn_counter *c, unsigned vcpu, uint64_t vaddr);
/* fsn_is_syscall says whether bytes[0..n) is a "syscall" instruction. */
static inline int fsn_is_syscall(const uint8_t *b, size_t n) { return n == FSN_SYSCALL_LEN && b[0] == 0x0f && b[1] == 0x05; }
void fsn_join(struct fsn_counter *c, unsigned vcpu);
void fsn_leave(struct fsn_counter *c, unsigned vcpu);
/* fsn_store records a store by vcpu of the instruction at insn_vaddr to the
 * physical address phys; ignored outside a window, in user mode, or on a
 * vCPU no measured thread has joined. */
void fsn_store(struct fsn_counter *c, unsigned vcpu, uint64_t insn_vaddr, uint64_t phys);
/* fsn_stop closes the window and fills *w; 0 when no window was open. */
int fsn_stop(struct fsn_counter *c, unsigned tag, struct fsn_window *w);
/* fsn_print writes the window as one "window k=v ..." line, then one "hot"
 * line per described shared line. */
void fsn_print(FILE *f, const struct fsn_window *w);

#endif
