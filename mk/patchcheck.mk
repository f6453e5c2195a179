# From a kernel patch to a verdict (included by the Makefile): build the base
# kernel and the patched one from one tree, run the suite on both under qemu
# and compare them (scripts/patchcheck/patchcheck.sh, fsnsuite patchcheck).
#
#   make patchcheck KSRC=linux-source-7.3 PATCH=my.patch
#   make patchcheck KSRC=~/linux PATCH=v7.3..my-branch
#   make patchcheck ... PATCHCHECK_ARGS='-scenarios 500 -no-cost'
#
# PC_RESULTS (results/patchcheck/<patch name>), PC_COVERAGE=0 (no gcov
# step), FSNSUITE_VM_LOCK, JOBS, NICE tune it. Not run by .ci/run (kernel
# builds); .ci/patchcheck runs the test-data patches on a schedule.

PATCH           ?=
PATCHCHECK_ARGS ?=

.PHONY: patchcheck

patchcheck: build
	@[ -n $(call q,$(KSRC)) ] && [ -n $(call q,$(PATCH)) ] || { echo "make patchcheck: KSRC= and PATCH= are required" >&2; exit 2; }
	PC_RESULTS=$(call q,$(PC_RESULTS)) PC_COVERAGE=$(call q,$(PC_COVERAGE)) sh scripts/patchcheck/patchcheck.sh $(call q,$(KSRC)) $(call q,$(PATCH)) -- $(PATCHCHECK_ARGS)
