# VM checks (included by the Makefile): boot a kernel under qemu and run the
# correctness suite inside it, with the same TAP, results and exit code as a
# native run.
#
#   make vmcheck KERNEL=debian-6.1      # debian-5.10, debian-6.12, debian-7.3, debian-7.2,
#                                       # debian-X.Y.Z (a point release), or a linux-image-* or
#                                       # linux-binary-* package: fetched into .cache/
#   make vmcheck KERNEL=path/to/bzImage MODULES=path/to/lib/modules/VERSION
#
# VM_CPUS, VM_MEM (MiB), VM_TIMEOUT (e.g. 30m), VM_RESULTS (default
# results/vm-<kernel>) and VMCHECK_ARGS (extra runner flags, e.g. -strict) tune it.
# VMCHECK_ARGS=-vm-icount: instruction count mode (qemu TCG -icount, perf
# binaries included, figures in instructions per operation; 1 vCPU unless
# VM_CPUS is given).
# VM_CPUS empty: the runner's default, 2 (1 with -vm-icount).

KERNEL       ?= debian-6.1
MODULES      ?=
VM_CPUS      ?=
VM_MEM       ?= 2048
VM_TIMEOUT   ?= 40m
VMCHECK_ARGS ?=

.PHONY: vmcheck vmdeps

vmdeps:
	@sh scripts/vm/deps.sh

vmcheck: vmdeps build
	@echo "sh scripts/vm/vmcheck.sh $(KERNEL) $(VMCHECK_ARGS)" >&2
	@MODULES=$(call q,$(MODULES)) VM_CPUS=$(call q,$(VM_CPUS)) VM_MEM=$(call q,$(VM_MEM)) VM_TIMEOUT=$(call q,$(VM_TIMEOUT)) \
	  sh scripts/vm/vmcheck.sh $(call q,$(KERNEL)) $(VMCHECK_ARGS)
