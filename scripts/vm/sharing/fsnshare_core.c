/* fsnshare_core.c — see fsnshare_core.h. */
#include "fsnshare_core.h"

#include <stdlib.h>
#include <string.h>

#define FSN_INIT_CAP (1u << 14)

static uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static int alloc_table(struct fsn_counter *c, size_t cap)
{
	c->tab = calloc(cap, sizeof *c->tab);
	c->slots = malloc(cap * sizeof *c->slots);
	if (!c->tab || !c->slots) {
		free(c->tab);
		free(c->slots);
		c->tab = NULL;
		c->slots = NULL;
		return -1;
	}
	c->cap = cap;
	c->used = 0;
	return 0;
}

int fsn_init(struct fsn_counter *c)
{
	memset(c, 0, sizeof *c);
	return alloc_table(c, FSN_INIT_CAP);
}

void fsn_free(struct fsn_counter *c)
{
	free(c->tab);
	free(c->slots);
	memset(c, 0, sizeof *c);
}

int fsn_marker(const uint8_t *b, size_t n, unsigned *op, unsigned *tag)
{
	if (n != FSN_MARKER_LEN || b[0] != 0x0f || b[1] != 0x1f || b[2] != 0x80 || b[5] != 0x53 || b[6] != 0x46)
		return 0;
	if (b[4] < FSN_OP_START || b[4] > FSN_OP_LEARN)
		return 0;
	*op = b[4];
	*tag = b[3];
	return 1;
}

static void clear(struct fsn_counter *c)
{
	for (size_t i = 0; i < c->used; i++)
		memset(&c->tab[c->slots[i]], 0, sizeof c->tab[0]);
	c->used = 0;
	c->stores = c->transfers = c->vcpus = c->foreign = 0;
}

void fsn_learn(struct fsn_counter *c, unsigned vcpu)
{
	if (vcpu < FSN_MAX_VCPUS)
		c->learning[vcpu] = 1;
}

static int known_site(const struct fsn_counter *c, uint64_t vaddr)
{
	for (unsigned i = 0; i < c->nsites; i++)
		if (c->sites[i] == vaddr)
			return 1;
	return 0;
}

void fsn_syscall(struct fsn_counter *c, unsigned vcpu, uint64_t vaddr)
{
	if (vcpu >= FSN_MAX_VCPUS)
		return;
	c->site[vcpu] = vaddr;
	if (c->learning[vcpu]) {
		c->learning[vcpu] = 0;
		if (!known_site(c, vaddr) && c->nsites < FSN_MAX_SITES)
			c->sites[c->nsites++] = vaddr;
	}
}

void fsn_start(struct fsn_counter *c, unsigned tag)
{
	if (c->open)
		c->restarts++;
	/* The engine joins its vCPU after the start marker and every member
	 * leaves before the stop: a vCPU still joined here is a join without
	 * its leave, which would count work outside any workload in every
	 * window from now on. */
	clear(c);
	c->open = 1;
	c->tag = tag;
	c->seq++;
	for (unsigned v = 0; v < FSN_MAX_VCPUS; v++) {
		if (c->active[v]) {
			if (!c->joined_at_start++)
				c->first_joined_at_start = c->seq;
			break;
		}
	}
}

static struct fsn_line *lookup(struct fsn_counter *c, uint64_t key);

static int grow(struct fsn_counter *c)
{
	struct fsn_counter old = *c;
	if (alloc_table(c, old.cap * 2) < 0) {
		c->tab = old.tab;
		c->slots = old.slots;
		c->cap = old.cap;
		c->used = old.used;
		return -1;
	}
	for (size_t i = 0; i < old.used; i++) {
		struct fsn_line *o = &old.tab[old.slots[i]];
		struct fsn_line *n = lookup(c, o->key);
		*n = *o;
	}
	free(old.tab);
	free(old.slots);
	return 0;
}

/* lookup finds key's slot, claiming an empty one (recorded in slots). */
static struct fsn_line *lookup(struct fsn_counter *c, uint64_t key)
{
	size_t mask = c->cap - 1;
	for (size_t i = hash64(key) & mask;; i = (i + 1) & mask) {
		struct fsn_line *l = &c->tab[i];
		if (l->key == key)
			return l;
		if (l->key == 0) {
			l->key = key;
			l->last = -1;
			c->slots[c->used++] = (uint32_t)i;
			return l;
		}
	}
}

void fsn_join(struct fsn_counter *c, unsigned vcpu)
{
	if (vcpu < FSN_MAX_VCPUS)
		c->active[vcpu]++;
}

void fsn_leave(struct fsn_counter *c, unsigned vcpu)
{
	if (vcpu < FSN_MAX_VCPUS && c->active[vcpu] > 0)
		c->active[vcpu]--;
	else if (!c->unmatched_leaves++)
		c->first_unmatched_leaves = c->seq;
}

void fsn_store(struct fsn_counter *c, unsigned vcpu, uint64_t insn_vaddr, uint64_t phys)
{
	if (!c->open || !fsn_is_kernel(insn_vaddr))
		return;
	if (vcpu >= FSN_MAX_VCPUS) {
		c->dropped++;
		return;
	}
	if (!c->active[vcpu])
		return;
	if (c->nsites && !known_site(c, c->site[vcpu])) {
		c->foreign++;
		return;
	}
	if ((c->used + 1) * 10 > c->cap * 7 && grow(c) < 0) {
		c->oom = 1;
		return;
	}
	struct fsn_line *l = lookup(c, (phys >> FSN_LINE_SHIFT) + 1);
	c->stores++;
	c->vcpus |= 1ULL << vcpu;
	l->writers |= 1ULL << vcpu;
	l->writes++;
	l->by[vcpu]++;
	if (l->last >= 0 && (unsigned)l->last != vcpu)
		c->transfers++;
	l->last = (int32_t)vcpu;
	if (l->pc == insn_vaddr)
		l->pc_votes++;
	else if (l->pc_votes == 0) {
		l->pc = insn_vaddr;
		l->pc_votes = 1;
	} else
		l->pc_votes--;
}

static int popcount64(uint64_t x)
{
	int n = 0;
	for (; x; x &= x - 1)
		n++;
	return n;
}

int fsn_stop(struct fsn_counter *c, unsigned tag, struct fsn_window *w)
{
	if (!c->open) {
		c->orphan_stops++;
		return 0;
	}
	memset(w, 0, sizeof *w);
	w->seq = c->seq;
	w->tag = c->tag;
	w->tag_mismatch = tag != c->tag;
	w->stores = c->stores;
	w->foreign = c->foreign;
	w->transfers = c->transfers;
	w->lines = c->used;
	w->vcpus = (unsigned)popcount64(c->vcpus);
	for (size_t i = 0; i < c->used; i++) {
		const struct fsn_line *l = &c->tab[c->slots[i]];
		if (popcount64(l->writers) < 2)
			continue;
		w->shared_writes += l->writes;
		w->shared_lines++;
		uint32_t most = 0;
		for (unsigned v = 0; v < FSN_MAX_VCPUS; v++)
			if (l->by[v] > most)
				most = l->by[v];
		w->remote_writes += l->writes - most;
		/* Keep the FSN_HOT_MAX shared lines with the most remote writes,
		 * then the most writes (insertion; ties: the lower address
		 * first, so the list does not depend on the table's layout). */
		struct fsn_hot h = { (l->key - 1) << FSN_LINE_SHIFT, l->writes, l->writes - most, l->writers, l->pc };
		unsigned j = w->nhot < FSN_HOT_MAX ? w->nhot++ : FSN_HOT_MAX;
		while (j > 0 && (w->hot[j - 1].remote < h.remote ||
				 (w->hot[j - 1].remote == h.remote && w->hot[j - 1].writes < h.writes) ||
				 (w->hot[j - 1].remote == h.remote && w->hot[j - 1].writes == h.writes &&
				  w->hot[j - 1].line > h.line))) {
			if (j < FSN_HOT_MAX)
				w->hot[j] = w->hot[j - 1];
			j--;
		}
		if (j < FSN_HOT_MAX)
			w->hot[j] = h;
	}
	c->open = 0;
	return 1;
}

void fsn_print(FILE *f, const struct fsn_window *w)
{
	fprintf(f, "window seq=%llu tag=%u stores=%llu lines=%llu shared_writes=%llu shared_lines=%llu remote_writes=%llu transfers=%llu vcpus=%u foreign=%llu%s\n",
		(unsigned long long)w->seq, w->tag, (unsigned long long)w->stores, (unsigned long long)w->lines,
		(unsigned long long)w->shared_writes, (unsigned long long)w->shared_lines, (unsigned long long)w->remote_writes,
		(unsigned long long)w->transfers, w->vcpus, (unsigned long long)w->foreign, w->tag_mismatch ? " tag_mismatch=1" : "");
	for (unsigned i = 0; i < w->nhot; i++)
		fprintf(f, "hot seq=%llu line=0x%llx writes=%llu remote=%llu writers=0x%llx pc=0x%llx\n",
			(unsigned long long)w->seq, (unsigned long long)w->hot[i].line,
			(unsigned long long)w->hot[i].writes, (unsigned long long)w->hot[i].remote,
			(unsigned long long)w->hot[i].writers,
			(unsigned long long)w->hot[i].pc);
}
