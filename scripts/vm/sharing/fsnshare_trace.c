/*
 * fsnshare_trace.c — drives the counting core (fsnshare_core.c) with a
 * synthetic trace on stdin, one event a line, and prints what the plugin
 * would write:
 *   start TAG
 *   store VCPU INSN_VADDR PHYS     (hexadecimal addresses)
 *   stop TAG
 *   join VCPU, leave VCPU, learn VCPU
 *   syscall VCPU INSN_VADDR        (a user-mode syscall instruction runs)
 *   marker HEXBYTES                (prints "marker OP TAG" or "marker none")
 * Built and run by harness/sharing's go test.
 */
#include "fsnshare_core.h"

#include <stdlib.h>
#include <string.h>

int main(void)
{
	struct fsn_counter c;
	char line[512];
	if (fsn_init(&c) < 0) {
		fprintf(stderr, "fsnshare_trace: out of memory\n");
		return 2;
	}
	while (fgets(line, sizeof line, stdin)) {
		char ev[16];
		unsigned a;
		unsigned long long v, p;
		char hex[64];
		if (sscanf(line, "start %u", &a) == 1) {
			fsn_start(&c, a);
		} else if (sscanf(line, "store %u %llx %llx", &a, &v, &p) == 3) {
			fsn_store(&c, a, v, p);
		} else if (sscanf(line, "join %u", &a) == 1) {
			fsn_join(&c, a);
		} else if (sscanf(line, "leave %u", &a) == 1) {
			fsn_leave(&c, a);
		} else if (sscanf(line, "learn %u", &a) == 1) {
			fsn_learn(&c, a);
		} else if (sscanf(line, "syscall %u %llx", &a, &v) == 2) {
			fsn_syscall(&c, a, v);
		} else if (sscanf(line, "stop %u", &a) == 1) {
			struct fsn_window w;
			if (fsn_stop(&c, a, &w))
				fsn_print(stdout, &w);
		} else if (sscanf(line, "marker %63s", hex) == 1) {
			uint8_t b[32];
			size_t n = 0;
			unsigned op, tag;
			for (const char *s = hex; s[0] && s[1] && n < sizeof b; s += 2) {
				char two[3] = { s[0], s[1], 0 };
				b[n++] = (uint8_t)strtoul(two, NULL, 16);
			}
			if (fsn_marker(b, n, &op, &tag))
				printf("marker %u %u\n", op, tag);
			else
				printf("marker none\n");
		} else if (sscanf(line, "%15s", ev) == 1 && ev[0] != '#') {
			fprintf(stderr, "fsnshare_trace: bad line: %s", line);
			return 2;
		}
	}
	printf("end sites=%u windows=%llu orphan_stops=%llu restarts=%llu dropped=%llu unmatched_leaves=%llu joined_at_start=%llu first_unmatched_leaves=%llu first_joined_at_start=%llu oom=%d\n",
	       c.nsites, (unsigned long long)c.seq, (unsigned long long)c.orphan_stops,
	       (unsigned long long)c.restarts, (unsigned long long)c.dropped,
	       (unsigned long long)c.unmatched_leaves, (unsigned long long)c.joined_at_start,
	       (unsigned long long)c.first_unmatched_leaves, (unsigned long long)c.first_joined_at_start, c.oom);
	fsn_free(&c);
	return 0;
}
