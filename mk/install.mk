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
	install -d $(DESTDIR)$(LIBEXEC) $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(SHARE)/runtest \
	  $(DESTDIR)$(KSFT_DIR)/fsnsuite $(DESTDIR)$(LTP_DIR)/runtest $(DESTDIR)$(LTP_DIR)/testcases/bin
	install -m 0755 $(addprefix $(BIN)/,$(TESTS)) $(BIN)/fsnsuite $(DESTDIR)$(LIBEXEC)/
	ln -sfn ../libexec/fsnsuite/fsnsuite $(DESTDIR)$(PREFIX)/bin/fsnsuite
	install -m 0644 runtest/fsnsuite $(DESTDIR)$(SHARE)/runtest/fsnsuite
	@# kselftest: one collection; run_kselftest.sh runs ./<name> in it.
	for t in $(TESTS); do ln -sfn ../../$$t $(DESTDIR)$(KSFT_DIR)/fsnsuite/$$t; done
	printf 'timeout=%s\n' $(KSFT_TIMEOUT) > $(DESTDIR)$(KSFT_DIR)/fsnsuite/settings
	for t in $(TESTS); do echo "fsnsuite:$$t"; done > $(DESTDIR)$(KSFT_DIR)/kselftest-list.txt
	@# LTP: kirk puts testcases/bin on PATH and runs the runtest commands.
	for t in $(TESTS); do ln -sfn ../../../$$t $(DESTDIR)$(LTP_DIR)/testcases/bin/$$t; done
	install -m 0644 runtest/fsnsuite $(DESTDIR)$(LTP_DIR)/runtest/fsnsuite

dist:
	rm -rf $(DIST)/stage
	$(MAKE) install DESTDIR=$(abspath $(DIST))/stage PREFIX=/fsnsuite
	tar -C $(DIST)/stage --owner=0 --group=0 -czf $(DIST)/fsnsuite.tar.gz fsnsuite
	rm -rf $(DIST)/stage
	@echo "dist: $(DIST)/fsnsuite.tar.gz (unpack anywhere; fsnsuite/bin/fsnsuite runs the suite)"
