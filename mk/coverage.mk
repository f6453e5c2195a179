# Kernel line coverage of fs/notify (included by the Makefile): build a kernel
# with only fs/notify instrumented for gcov, run the correctness suite on it
# under qemu, report per-file and per-function line coverage and the
# functions never executed. Not run by CI (a kernel build: minutes).
#
#   make coverage                          # Debian's linux-source-6.1, fetched
#   make coverage KSRC=~/linux BASE=HEAD~1 # also: did the suite run my patch's lines?
#
# VM_CPUS, VM_MEM, VM_TIMEOUT (mk/vm.mk), COV_RESULTS (results/coverage),
# COV_FUNCTIONS=1 and COVERAGE_ARGS (runner flags, e.g. -run REGEX) tune it.
# Details: scripts/vm/README.md.

KSRC          ?=
BASE          ?=
COV_RESULTS   ?= results/coverage
COVERAGE_ARGS ?=

.PHONY: coverage

coverage: build
	BASE=$(call q,$(BASE)) VM_CPUS=$(call q,$(VM_CPUS)) VM_MEM=$(call q,$(VM_MEM)) VM_TIMEOUT=$(call q,$(VM_TIMEOUT)) \
	  COV_RESULTS=$(call q,$(call abs,$(COV_RESULTS))) COV_FUNCTIONS=$(call q,$(COV_FUNCTIONS)) \
	  sh scripts/coverage/coverage.sh $(call q,$(KSRC)) $(COVERAGE_ARGS)
