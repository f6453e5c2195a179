# fsnsuite — build, run and test.
#
#   make            build every test binary and the runner into bin/ (static)
#   make check      install what is missing (scripts/deps.sh), run the suite (root)
#   make test       go vet + unit tests + the suite
#   make hostile    the binaries under hostile conditions (harness/hostile)
#   make spec-coverage  the man-page rules (harness/spec) no case checks
#   make install    DESTDIR= PREFIX=/usr/local (also kselftest and LTP trees)
#   make dist       dist/fsnsuite.tar.gz, relocatable
#   make clean

GO        ?= go
PREFIX    ?= /usr/local
DESTDIR   ?=
BIN       := bin
LIBEXEC   := $(PREFIX)/libexec/fsnsuite
SHARE     := $(PREFIX)/share/fsnsuite
# Arguments for the runner in `make check`, e.g. CHECK_ARGS='-strict -run fanotify'.
CHECK_ARGS ?=
RESULTS   ?= results/latest

export CGO_ENABLED := 0
GOBUILD := $(GO) build -trimpath -ldflags='-s -w'

# Paths may hold spaces (a checkout in "~/My Projects", RESULTS="results/a b",
# DESTDIR="/srv/dest dir"). Make splits words on spaces, so such a path is
# never a target, a prerequisite or the argument of a make function that
# takes a list (abspath, addprefix, dir): it only appears in recipes, quoted
# for sh by $(call q,...): 'it'\''s' for it's.
q = '$(subst ','\'',$(1))'
# $(call abs,PATH): PATH made absolute against the top directory, as text
# (make's abspath would split it at its spaces).
abs = $(if $(filter /%,$(firstword $(1))),$(1),$(CURDIR)/$(1))

TEST_DIRS := $(sort $(dir $(wildcard tests/*/*.go)))
TESTS     := $(notdir $(patsubst %/,%,$(TEST_DIRS)))

.PHONY: all build check test vet unit clean hostile deps spec-coverage
all: build

# Recipes whose output can be a TAP stream (check, vmcheck) say their
# commands on stderr, so that `make check > out.tap` holds TAP only.
build:
	@mkdir -p $(call q,$(BIN))
	@echo $(call q,$(GOBUILD) -o $(BIN)/ ./tests/... ./harness/cmd/fsnsuite) >&2
	@$(GOBUILD) -o $(call q,$(BIN)/) ./tests/... ./harness/cmd/fsnsuite

# What the suite needs from the distribution (mkfs.ext4/xfs/btrfs, debugfs;
# scripts/deps.sh: apt, as root, only what is missing). NODEPS=1 leaves the
# machine as it is; a failed install is said and the suite runs anyway (the
# cases that need what is missing skip, naming it).
NODEPS ?=
deps:
	@[ -n "$(NODEPS)" ] || bash scripts/deps.sh >&2 || echo "make: scripts/deps.sh failed: cases that need what it installs will skip, naming it" >&2

# CHECK_ARGS is a list of flags, split at its spaces as sh splits words.
check: deps build
	@echo $(call q,$(BIN)/fsnsuite -results $(RESULTS) $(CHECK_ARGS)) >&2
	@$(call q,$(BIN)/fsnsuite) -results $(call q,$(RESULTS)) $(CHECK_ARGS)

# go mod download first: on an empty module cache the go command prints a
# "go: downloading MODULE VERSION" line per module on stderr, which is not a
# finding of vet's; afterwards vet's output holds findings only. go.mod must
# be tidy (a direct import marked // indirect, or a stale line, fails here).
vet:
	@$(GO) mod download
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum not tidy: run 'go mod tidy' (the diff above)"; exit 1; }
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags hostile ./harness/hostile/

unit:
	$(GO) test -count=1 ./...

test: deps vet unit check

# The built binaries under hostile conditions (root): see harness/hostile.
# It lowers global limits for a few seconds each and restores them.
# COND=regex runs only the matching conditions.
# The man-page rules no case checks (harness/spec): needs no root.
spec-coverage: build
	@$(call q,$(BIN)/fsnsuite) spec-coverage -dir $(call q,$(BIN))

hostile: build
	$(GO) test -tags hostile -count=1 -timeout 10m -v -run TestHostile ./harness/hostile/ -args -bin $(call q,$(call abs,$(BIN))) $(if $(COND),-cond $(call q,$(COND)))

clean:
	rm -rf $(call q,$(BIN)) results $(call q,$(DIST))

# The qemu runner (make vmcheck KERNEL=debian-6.1) lives in its own file.
-include mk/vm.mk

# The perf engine's self-checks (make perf-engine-check, make perfcheck).
-include mk/perf.mk
# make install (with the kselftest and LTP trees) and make dist.
include mk/install.mk
# Kernel line coverage of fs/notify (make coverage KSRC= BASE=).
-include mk/coverage.mk
# Mutation analysis of fs/notify (make mutants N= SEED= ID= KSRC= BASE=).
-include mk/mutants.mk
# From a patch to a verdict: both kernels built and compared (make patchcheck KSRC= PATCH=).
-include mk/patchcheck.mk
# The sharing profile's qemu plugin (make sharing-plugin).
-include mk/sharing.mk
