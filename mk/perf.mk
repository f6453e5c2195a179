# Perf engine self-checks (included by the Makefile).
#
#   make perf-engine-check   one -aa and one -inject 2% experiment (CI, < 2 s)
#   make perfcheck           RUNS=100 -aa runs of each perf binary and -inject 2%
#                            runs of perf_modify_overhead (11 min here, RUNS=100)
#
# PERFCHECK_BIN (default bin) lets perfcheck run from a copy of the binaries
# while the tree is rebuilt; results go to results/perfcheck.

RUNS          ?= 100
PERFCHECK_BIN ?= $(BIN)

.PHONY: perf-engine-check perfcheck

perf-engine-check: build
	BIN=$(call q,$(BIN)) sh scripts/perf/enginecheck.sh

perfcheck: build
	RUNS=$(call q,$(RUNS)) BIN=$(call q,$(PERFCHECK_BIN)) OUT=results/perfcheck sh scripts/perf/perfcheck.sh
