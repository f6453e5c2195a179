# From a kernel patch to a verdict (included by the Makefile): build the base
# kernel and the patched one from one tree, run the suite on both under qemu
# and compare them (scripts/patchcheck/patchcheck.sh, fsnsuite patchcheck).
#
#   make patchcheck KSRC=linux-source-7.3 PATCH=my.patch
#   make patchcheck KSRC=~/linux PATCH=v7.3..my-branch
#   make patchcheck ... PATCHCHECK_ARGS='-scenarios 500 -no-cost'
#   make patchcheck ... STEPS=correctness          # a quick check
#   make patchcheck ... STEPS=correctness,explore  # or STEPS=cost, STEPS=coverage,correctness
#
# STEPS (comma-separated: coverage, correctness, explore, cost; default
# all four) says what runs; PC_COVERAGE=0 and PATCHCHECK_ARGS='-steps ...'
# still work and win over it.
# PC_RESULTS (results/patchcheck/<patch name>), PC_COVERAGE=0 (no gcov
# step), FSNSUITE_VM_LOCK, JOBS, NICE tune it. Not run by .ci/run (kernel
# builds); .ci/patchcheck runs the test-data patches on a schedule.

PATCH           ?=
PATCHCHECK_ARGS ?=
STEPS           ?=
# The script the recipe runs (a test points it at a fake).
PATCHCHECK_SH   ?= scripts/patchcheck/patchcheck.sh

.PHONY: patchcheck

# Exit status: GNU make exits 0 when every recipe succeeded and 2 when one
# failed, whatever its status (1 only for -q; the manual's "Exit Status of
# make"), so `make patchcheck` cannot exit 1 for "behaviour changed". The
# recipe passes patchcheck.sh's status on (make then says "Error 1" for
# behaviour changed, "Error 2" for broken) and prints the verdict's meaning;
# patchcheck.sh writes it to PC_RESULTS/exit_status too. CI that needs
# 0/1/2 runs scripts/patchcheck/patchcheck.sh (as .ci/patchcheck does).
patchcheck: build
	@[ -n $(call q,$(KSRC)) ] && [ -n $(call q,$(PATCH)) ] || { echo "make patchcheck: KSRC= and PATCH= are required" >&2; exit 2; }
	@echo "PC_RESULTS=$(call q,$(PC_RESULTS)) PC_COVERAGE=$(call q,$(PC_COVERAGE)) PC_STEPS=$(call q,$(STEPS)) sh $(call q,$(PATCHCHECK_SH)) $(call q,$(KSRC)) $(call q,$(PATCH)) -- $(PATCHCHECK_ARGS)" >&2
	@rc=0; PC_RESULTS=$(call q,$(PC_RESULTS)) PC_COVERAGE=$(call q,$(PC_COVERAGE)) PC_STEPS=$(call q,$(STEPS)) sh $(call q,$(PATCHCHECK_SH)) $(call q,$(KSRC)) $(call q,$(PATCH)) -- $(PATCHCHECK_ARGS) || rc=$$?; \
	case $$rc in \
	0) ;; \
	1) echo "make patchcheck: BEHAVIOUR CHANGED (patchcheck.sh exit 1). make itself exits 2 for any failing recipe; the verdict's own status (0 no difference, 1 behaviour changed, 2 broken) is scripts/patchcheck/patchcheck.sh's and is in <results>/exit_status" >&2 ;; \
	*) echo "make patchcheck: BROKEN (patchcheck.sh exit $$rc): the patchcheck could not decide (see above); make itself exits 2" >&2 ;; \
	esac; \
	exit $$rc
