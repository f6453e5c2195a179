# Mutation analysis of fs/notify (included by the Makefile): plant one small
# fault at a time in fs/notify's C source (dnotify left out), build the
# kernel incrementally, run the correctness suite on it under qemu and count
# the mutants that make a leaf fail. Not run by CI as a whole (minutes per
# mutant under TCG); CI runs one chosen mutant (ID=, EXPECT=).
#
#   make mutants                            # N=15 SEED=1 on Debian's linux-source-6.1
#   make mutants N=40 SEED=7                # another sample
#   make mutants ID=0123456789 EXPECT=killed
#   make mutants KSRC=~/linux BASE=HEAD~1   # only the lines my patch changed
#   make mutants-list                       # every mutant's id, file:line, operator
#   make mutants N=0 SHARD=2/4 FILES=fs/notify/fsnotify.c  # one machine's part of a run
#   make mutants N=0 SHARD=2/4 RESUME=1     # go on where an interrupted run of that part stopped
#   make mutants N=0 FIRST_KILL=1           # stop each mutant at its first killing leaf (quicker, same score)
#   bin/fsnsuite mutants -merge -results results/mutants r1 r2 r3 r4   # the parts as one report
#
# MUT_RESULTS (results/mutants), COV_LINES (results/coverage/lines.json from
# make coverage), MUT_VM_TIMEOUT, VM_CPUS, VM_MEM, FSNSUITE_VM_LOCK and
# MUTANTS_ARGS (runner flags, e.g. -run REGEX) tune it. Details:
# scripts/vm/README.md.

KSRC         ?=
BASE         ?=
N            ?= 15
SEED         ?= 1
ID           ?=
EXPECT       ?=
SHARD        ?=
FILES        ?=
RESUME       ?=
FIRST_KILL   ?=
MUT_RESULTS  ?= results/mutants
MUTANTS_ARGS ?=

.PHONY: mutants mutants-list

mutants: build
	N=$(call q,$(N)) SEED=$(call q,$(SEED)) ID=$(call q,$(ID)) BASE=$(call q,$(BASE)) EXPECT=$(call q,$(EXPECT)) \
	  MUT_RESULTS=$(call q,$(call abs,$(MUT_RESULTS))) VM_CPUS=$(call q,$(VM_CPUS)) VM_MEM=$(call q,$(VM_MEM)) \
	  MUT_VM_TIMEOUT=$(call q,$(MUT_VM_TIMEOUT)) COV_LINES=$(call q,$(COV_LINES)) SHARD=$(call q,$(SHARD)) FILES=$(call q,$(FILES)) \
	  RESUME=$(call q,$(RESUME)) FIRST_KILL=$(call q,$(FIRST_KILL)) sh scripts/mutants/mutants.sh $(call q,$(KSRC)) -- $(MUTANTS_ARGS)

mutants-list: build
	ksrc=$(call q,$(KSRC)); [ -n "$$ksrc" ] || ksrc=$$(sh scripts/coverage/fetch-kernel-source.sh); \
	  $(call q,$(BIN)/fsnsuite) mutants -ksrc "$$ksrc" -list $(if $(BASE),-base $(call q,$(BASE))) $(if $(ID),-id $(call q,$(ID))) $(if $(SHARD),-shard $(call q,$(SHARD))) $(if $(FILES),-files $(call q,$(FILES)))
