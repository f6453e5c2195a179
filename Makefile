# fsnsuite — build, run and test.
#
#   make            build every test binary and the runner into bin/ (static)
#   make check      run the suite (needs root): bin/fsnsuite, results in results/
#   make test       go vet + unit tests + the suite
#   make install    DESTDIR= PREFIX=/usr/local
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

TEST_DIRS := $(sort $(dir $(wildcard tests/*/*.go)))
TESTS     := $(notdir $(patsubst %/,%,$(TEST_DIRS)))

.PHONY: all build check test vet unit clean install
all: build

build:
	@mkdir -p $(BIN)
	$(GOBUILD) -o $(BIN)/ ./tests/... ./harness/cmd/fsnsuite

check: build
	$(BIN)/fsnsuite -results $(RESULTS) $(CHECK_ARGS)

vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

unit:
	$(GO) test -count=1 ./...

test: vet unit check

install: build
	install -d $(DESTDIR)$(LIBEXEC) $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(SHARE)/runtest
	install -m 0755 $(addprefix $(BIN)/,$(TESTS)) $(BIN)/fsnsuite $(DESTDIR)$(LIBEXEC)/
	ln -sf ../libexec/fsnsuite/fsnsuite $(DESTDIR)$(PREFIX)/bin/fsnsuite
	install -m 0644 runtest/fsnsuite $(DESTDIR)$(SHARE)/runtest/fsnsuite

clean:
	rm -rf $(BIN) results

# The qemu runner (make vmcheck KERNEL=debian-6.1) lives in its own file.
-include mk/vm.mk
# Kernel line coverage of fs/notify (make coverage KSRC= BASE=).
-include mk/coverage.mk
