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
	BASE='$(BASE)' VM_CPUS='$(VM_CPUS)' VM_MEM='$(VM_MEM)' VM_TIMEOUT='$(VM_TIMEOUT)' \
	  COV_RESULTS='$(abspath $(COV_RESULTS))' COV_FUNCTIONS='$(COV_FUNCTIONS)' \
	  sh scripts/coverage/coverage.sh '$(KSRC)' $(COVERAGE_ARGS)
