/*
 * fsnshare.c — the sharing profile's TCG plugin for qemu's plugin API
 * version 1 (qemu 7.2, Debian bookworm's; the header comes from Debian's qemu
 * source package: fetch-qemu-plugin-header.sh).
 *
 *   qemu-system-x86_64 -accel tcg,thread=single ... -plugin fsnshare.so,out=FILE
 *
 * At translation time it gives every instruction whose address lies in the
 * kernel's half (fsn_is_kernel) a store callback, and every marker
 * instruction (fsn_marker: a 7-byte no-op the guest's workload runs in user
 * mode) an execution callback that opens or closes a window, or joins or
 * leaves the vCPU that runs it. The counting is
 * fsnshare_core.c's; each window is written to FILE as it closes
 * (fsn_print), and an "end" line at exit. A store is counted on the line of
 * its first byte; stores to I/O (MMIO) are not counted.
 *
 * pcs=FILE (a diagnostic, FSNSUITE_SHARING_PCS=1 on the host: FILE is in the
 * VM runner's private work directory) also writes, per window, the counted
 * stores per writing instruction and vCPU ("pc seq= vcpu= pc= stores="),
 * every shared line ("shared seq= line= ..."), and for the first 60 windows
 * their order: runs
 * of one vCPU's stores ("run seq= vcpu= n= first= last=") and the markers
 * with the vCPU's join count before each ("marker seq= vcpu= op= active=").
 * Two windows of one condition that differ show where.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

#include "fsnshare_core.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

static struct fsn_counter counter;
/* -accel tcg,thread=single runs every vCPU on one host thread; the lock
 * keeps the table whole under a multi-threaded TCG too. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *out;
static uint64_t io_stores;

/* pcs=FILE (a diagnostic): every window's kernel stores per writing
 * instruction and vCPU, "pc seq=N vcpu=V pc=0x... stores=K", to find what
 * makes two windows of one condition differ. */
#define PCS_CAP (1u << 16)
static FILE *pcs_out;
static struct pcs_slot { uint64_t pc; uint32_t vcpu; uint64_t n; } *pcs_tab;
static size_t pcs_used;
static uint64_t pcs_dropped; /* stores of instructions the full table could not take */

static void pcs_add(unsigned vcpu, uint64_t pc)
{
	uint64_t h = (pc ^ (uint64_t)vcpu << 56) * 0x9e3779b97f4a7c15ULL;
	for (size_t i = (h >> 40) & (PCS_CAP - 1), k = 0; k < PCS_CAP; i = (i + 1) & (PCS_CAP - 1), k++) {
		struct pcs_slot *s = &pcs_tab[i];
		if (s->n && s->pc == pc && s->vcpu == vcpu) {
			s->n++;
			return;
		}
		if (!s->n) {
			if (pcs_used * 10 > PCS_CAP * 7) {
				pcs_dropped++;
				return;
			}
			s->pc = pc;
			s->vcpu = vcpu;
			s->n = 1;
			pcs_used++;
			return;
		}
	}
}

/* The order of a window: runs of stores by one vCPU and the markers, for
 * the first windows only (pcs= set). */
static unsigned trace_vcpu = ~0u;
static uint64_t trace_n, trace_first, trace_last, trace_windows;
static void trace_end(void)
{
	if (trace_n && trace_windows < 60)
		fprintf(pcs_out, "run seq=%" PRIu64 " vcpu=%u n=%" PRIu64 " first=0x%" PRIx64 " last=0x%" PRIx64 "\n",
			counter.seq, trace_vcpu, trace_n, trace_first, trace_last);
	trace_n = 0;
	trace_vcpu = ~0u;
}
static void trace_store(unsigned vcpu, uint64_t pc)
{
	if (vcpu != trace_vcpu)
		trace_end();
	if (!trace_n)
		trace_first = pc;
	trace_vcpu = vcpu;
	trace_last = pc;
	trace_n++;
}

static void pcs_flush(uint64_t seq)
{
	for (size_t i = 0; i < PCS_CAP; i++) {
		if (pcs_tab[i].n)
			fprintf(pcs_out, "pc seq=%" PRIu64 " vcpu=%u pc=0x%" PRIx64 " stores=%" PRIu64 "\n", seq, pcs_tab[i].vcpu,
				pcs_tab[i].pc, pcs_tab[i].n);
	}
	memset(pcs_tab, 0, PCS_CAP * sizeof *pcs_tab);
	pcs_used = 0;
}

static void on_store(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
	if (!counter.open || !qemu_plugin_mem_is_store(info))
		return;
	struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
	if (!hw)
		return;
	pthread_mutex_lock(&lock);
	if (qemu_plugin_hwaddr_is_io(hw))
		io_stores++;
	else {
		uint64_t before = counter.stores;
		fsn_store(&counter, vcpu, (uint64_t)(uintptr_t)udata, qemu_plugin_hwaddr_phys_addr(hw));
		if (pcs_out && counter.stores != before) {
			pcs_add(vcpu, (uint64_t)(uintptr_t)udata);
			trace_store(vcpu, (uint64_t)(uintptr_t)udata);
		}
	}
	pthread_mutex_unlock(&lock);
}

static void on_marker(unsigned int vcpu, void *udata)
{
	unsigned v = (unsigned)(uintptr_t)udata, op = v >> 8, tag = v & 0xff;
	pthread_mutex_lock(&lock);
	if (pcs_out && counter.open) {
		trace_end();
		if (trace_windows < 60)
			fprintf(pcs_out, "marker seq=%" PRIu64 " vcpu=%u op=%u active=%u\n", counter.seq, vcpu, op,
				vcpu < FSN_MAX_VCPUS ? counter.active[vcpu] : 0);
		if (op == FSN_OP_STOP)
			trace_windows++;
	}
	if (op == FSN_OP_START) {
		if (pcs_out)
			memset(pcs_tab, 0, PCS_CAP * sizeof *pcs_tab), pcs_used = 0;
		fsn_start(&counter, tag);
	} else if (op == FSN_OP_JOIN) {
		fsn_join(&counter, vcpu);
	} else if (op == FSN_OP_LEAVE) {
		fsn_leave(&counter, vcpu);
	} else if (op == FSN_OP_LEARN) {
		fsn_learn(&counter, vcpu);
	} else {
		struct fsn_window w;
		if (fsn_stop(&counter, tag, &w)) {
			fsn_print(out, &w);
			if (pcs_out) {
				pcs_flush(w.seq);
				/* Every shared line, not only the FSN_HOT_MAX hottest. */
				for (size_t i = 0; i < counter.used; i++) {
					const struct fsn_line *l = &counter.tab[counter.slots[i]];
					if (l->writers & (l->writers - 1))
						fprintf(pcs_out, "shared seq=%" PRIu64 " line=0x%" PRIx64 " writes=%" PRIu64 " writers=0x%" PRIx64 " pc=0x%" PRIx64 "\n",
							w.seq, (l->key - 1) << FSN_LINE_SHIFT, l->writes, l->writers, l->pc);
				}
			}
		}
	}
	pthread_mutex_unlock(&lock);
}

static void on_syscall(unsigned int vcpu, void *udata)
{
	pthread_mutex_lock(&lock);
	fsn_syscall(&counter, vcpu, (uint64_t)(uintptr_t)udata);
	pthread_mutex_unlock(&lock);
}

static void on_tb(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	(void)id;
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t va = qemu_plugin_insn_vaddr(insn);
		unsigned op, tag;
		if (fsn_is_kernel(va)) {
			qemu_plugin_register_vcpu_mem_cb(insn, on_store, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_W,
							 (void *)(uintptr_t)va);
		} else if (fsn_marker(qemu_plugin_insn_data(insn), qemu_plugin_insn_size(insn), &op, &tag)) {
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker, QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)(op << 8 | tag));
		} else if (fsn_is_syscall(qemu_plugin_insn_data(insn), qemu_plugin_insn_size(insn))) {
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_syscall, QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)va);
		}
	}
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
	(void)id;
	(void)p;
	pthread_mutex_lock(&lock);
	fprintf(out, "end sites=%u windows=%" PRIu64 " orphan_stops=%" PRIu64  " restarts=%" PRIu64 " dropped=%" PRIu64 " unmatched_leaves=%" PRIu64
		" joined_at_start=%" PRIu64 " first_unmatched_leaves=%" PRIu64 " first_joined_at_start=%" PRIu64
		" io_stores=%" PRIu64 " pcs_dropped=%" PRIu64 " oom=%d open=%d\n",
		counter.nsites, counter.seq, counter.orphan_stops, counter.restarts, counter.dropped, counter.unmatched_leaves,
		counter.joined_at_start, counter.first_unmatched_leaves, counter.first_joined_at_start, io_stores,
		pcs_dropped, counter.oom, counter.open);
	fclose(out);
	out = NULL;
	if (pcs_out)
		fclose(pcs_out);
	pcs_out = NULL;
	pthread_mutex_unlock(&lock);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	const char *path = NULL;
	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], "out=", 4) == 0)
			path = argv[i] + 4;
		else if (strncmp(argv[i], "pcs=", 4) == 0) {
			pcs_out = fopen(argv[i] + 4, "w");
			pcs_tab = calloc(PCS_CAP, sizeof *pcs_tab);
			if (!pcs_out || !pcs_tab) {
				perror(argv[i] + 4);
				return -1;
			}
		}
		else {
			fprintf(stderr, "fsnshare: unknown argument %s (want out=FILE)\n", argv[i]);
			return -1;
		}
	}
	if (!path) {
		fprintf(stderr, "fsnshare: no out=FILE argument\n");
		return -1;
	}
	if (!info->system_emulation || strcmp(info->target_name, "x86_64") != 0) {
		fprintf(stderr, "fsnshare: needs qemu-system-x86_64 (target %s)\n", info->target_name);
		return -1;
	}
	if (info->system.max_vcpus > FSN_MAX_VCPUS) {
		fprintf(stderr, "fsnshare: at most %d vCPUs (got %d)\n", FSN_MAX_VCPUS, info->system.max_vcpus);
		return -1;
	}
	if (fsn_init(&counter) < 0) {
		fprintf(stderr, "fsnshare: out of memory\n");
		return -1;
	}
	out = fopen(path, "w");
	if (!out) {
		perror(path);
		return -1;
	}
	setvbuf(out, NULL, _IOFBF, 1 << 16);
	fprintf(out, "fsnshare version=3 vcpus=%d line=%d kernel_half=0x%llx\n", info->system.smp_vcpus,
		1 << FSN_LINE_SHIFT, (unsigned long long)FSN_KERNEL_HALF);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
