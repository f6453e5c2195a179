# Installs and the distribution tarball (included by the Makefile).
#
#   make install DESTDIR= PREFIX=/usr/local
#     $(PREFIX)/libexec/fsnsuite/        every test binary and the runner
#     $(PREFIX)/bin/fsnsuite             the runner (symlink)
#     $(PREFIX)/share/fsnsuite/runtest/  the LTP runtest file
#     $(PREFIX)/libexec/fsnsuite/kselftest/   a kselftest install tree: the
#         collection fsnsuite/ (binaries, settings with the per-binary timeout)
#         and kselftest-list.txt, the list run_kselftest.sh -c fsnsuite reads
#     $(PREFIX)/libexec/fsnsuite/ltp/    an LTP tree for kirk: runtest/fsnsuite,
#         testcases/bin/ (LTPROOT=<this dir> kirk --run-suite fsnsuite)
#   make dist    dist/fsnsuite.tar.gz: the same tree, relocatable (every link
#                in it is relative), unpacked anywhere and run from there
#
# The kselftest and LTP trees link to the binaries in libexec/fsnsuite
# (relative symlinks), so they cost no space. KSFT_TIMEOUT is the settings
# timeout, in seconds, that run_kselftest.sh gives each binary.

KSFT_TIMEOUT ?= 300
KSFT_DIR     := $(LIBEXEC)/kselftest
LTP_DIR      := $(LIBEXEC)/ltp
DIST         ?= dist

.PHONY: install dist

install: build
	install -d $(call q,$(DESTDIR)$(LIBEXEC)) $(call q,$(DESTDIR)$(PREFIX)/bin) $(call q,$(DESTDIR)$(SHARE)/runtest) \
	  $(call q,$(DESTDIR)$(KSFT_DIR)/fsnsuite) $(call q,$(DESTDIR)$(LTP_DIR)/runtest) $(call q,$(DESTDIR)$(LTP_DIR)/testcases/bin)
	for t in $(TESTS) fsnsuite; do install -m 0755 $(call q,$(BIN))/"$$t" $(call q,$(DESTDIR)$(LIBEXEC))/ || exit 1; done
	ln -sfn ../libexec/fsnsuite/fsnsuite $(call q,$(DESTDIR)$(PREFIX)/bin/fsnsuite)
	install -m 0644 runtest/fsnsuite $(call q,$(DESTDIR)$(SHARE)/runtest/fsnsuite)
	@# kselftest: one collection; run_kselftest.sh runs ./<name> in it.
	for t in $(TESTS); do ln -sfn ../../"$$t" $(call q,$(DESTDIR)$(KSFT_DIR)/fsnsuite)/"$$t" || exit 1; done
	printf 'timeout=%s\n' $(call q,$(KSFT_TIMEOUT)) > $(call q,$(DESTDIR)$(KSFT_DIR)/fsnsuite/settings)
	for t in $(TESTS); do echo "fsnsuite:$$t"; done > $(call q,$(DESTDIR)$(KSFT_DIR)/kselftest-list.txt)
	@# LTP: kirk puts testcases/bin on PATH and runs the runtest commands.
	for t in $(TESTS); do ln -sfn ../../../"$$t" $(call q,$(DESTDIR)$(LTP_DIR)/testcases/bin)/"$$t" || exit 1; done
	install -m 0644 runtest/fsnsuite $(call q,$(DESTDIR)$(LTP_DIR)/runtest/fsnsuite)

# The stage is DIST/stage made absolute by the shell (never by make's
# abspath, which splits a path at its spaces) and handed to the sub-make as
# one word: whatever the path, the install lands in it and nowhere else.
dist:
	@[ -n $(call q,$(DIST)) ] || { echo "make dist: DIST is empty" >&2; exit 2; }
	mkdir -p $(call q,$(DIST))
	stage="$$(cd $(call q,$(DIST)) && pwd)/stage" && rm -rf "$$stage" && \
	  $(MAKE) install DESTDIR="$$stage" PREFIX=/fsnsuite && \
	  tar -C "$$stage" --owner=0 --group=0 -czf $(call q,$(DIST)/fsnsuite.tar.gz) fsnsuite && \
	  rm -rf "$$stage"
	@echo "dist: "$(call q,$(DIST)/fsnsuite.tar.gz)" (unpack anywhere; fsnsuite/bin/fsnsuite runs the suite)"
