# From a kernel patch to a verdict (included by the Makefile): build the base
# kernel and the patched one from one tree, run the suite on both under qemu
# and compare them (scripts/patchcheck/patchcheck.sh, fsnsuite patchcheck).
#
#   make patchcheck KSRC=linux-source-7.3 PATCH=my.patch
#   make patchcheck KSRC=~/linux PATCH=v7.3..my-branch
#   make patchcheck ... PATCHCHECK_ARGS='-scenarios 500 -no-cost'
#
# PC_RESULTS (results/patchcheck/<patch name>), JOBS, NICE tune it.
# Not run by CI as a whole (two kernel builds); CI runs it on prebuilt
# mutants-config kernels only (see .ci/run).

PATCH           ?=
PATCHCHECK_ARGS ?=

.PHONY: patchcheck

patchcheck: build
	@[ -n '$(KSRC)' ] && [ -n '$(PATCH)' ] || { echo "make patchcheck: KSRC= and PATCH= are required" >&2; exit 2; }
	PC_RESULTS='$(PC_RESULTS)' sh scripts/patchcheck/patchcheck.sh '$(KSRC)' '$(PATCH)' -- $(PATCHCHECK_ARGS)
