# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# tmabpf — build, setup, demo and tests.  See README.md.
#   make deps   install every package (Debian 12 + bookworm-backports), idempotent
#   make        build build/tmabpf, test workloads, benches and unit tests
#   make demo   deps + build + profile the bundled OpenBLAS decoder
#   make test   deps + build + all tests (needs root)
#   make install / uninstall   PREFIX (/usr/local), DESTDIR; make man; make deb (build/deb/*.deb)
#   make ARCH=arm64   cross-build into build/arm64 (make deps-arm64 first)
#   make test-pmu     arm64 build + emulated-PMU tests in QEMU (docs/emulated-pmu.md)
HOST_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
ARCH ?= $(HOST_ARCH)
CLANG ?= clang-19
BPFTOOL ?= bpftool
# downloads kept between runs (arm64 packages, guest kernel); never under build/
TMABPF_CACHE ?= $(CURDIR)/.cache
ifeq ($(ARCH),$(HOST_ARCH))
O := build
else
O := build/$(ARCH)
endif
VMLINUX := vmlinux/$(ARCH)/vmlinux.h

CFLAGS ?= -O2 -g
CFLAGS += -Wall -Wextra -Wno-unused-parameter -std=gnu11 -fno-omit-frame-pointer -MMD -MP
CPPFLAGS += -I$(O) -Iuser -I. -D_GNU_SOURCE
LDLIBS_TMABPF := -lbpf -lelf -ldw -lz -lpfm -lncursesw -lmicrohttpd -ljson-c -lprotobuf-c -lstdc++ -lm -lpthread
# Capstone: the x86 probe placement's branch check (user/sym/probe_place.c)
LDLIBS_TMABPF += $(if $(filter x86,$(ARCH)),-lcapstone)
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I$(dir $(VMLINUX)) -Ibpf -Wall -Wno-unused-function

BPF_SRCS := $(wildcard bpf/*.bpf.c)
SKELS := $(patsubst bpf/%.bpf.c,$(O)/%.skel.h,$(BPF_SRCS))
# user/FOLDER/*.c: the folders and their layers are docs/design.md's (scripts/check-includes.py)
USER_SRCS := $(wildcard user/*/*.c)
# proto/NAME.proto: protobuf-c's NAME.pb-c.[ch], generated into $(O) like the skeletons
PROTOS := $(wildcard proto/*.proto)
PROTO_HDRS := $(patsubst proto/%.proto,$(O)/%.pb-c.h,$(PROTOS))
PROTO_OBJS := $(patsubst proto/%.proto,$(O)/proto/%.pb-c.o,$(PROTOS))
USER_OBJS := $(patsubst user/%.c,$(O)/user/%.o,$(USER_SRCS)) $(PROTO_OBJS)
LIB_OBJS := $(filter-out $(O)/user/cmd/main.o,$(USER_OBJS))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(O)/tests/%,$(UNIT_SRCS))
# run by tests/test_tma_perf.py with perf's own tables (not a self-contained unit program)
UNIT_BINS += $(O)/tests/tma_oracle
# the tests' and benches' workloads
WORKLOAD_SRCS := $(wildcard tests/workloads/*.c)
WORKLOAD_BINS := $(patsubst tests/workloads/%.c,$(O)/workloads/%,$(WORKLOAD_SRCS))
WORKLOAD_CXX_SRCS := $(wildcard tests/workloads/*.cc)
WORKLOAD_BINS += $(patsubst tests/workloads/%.cc,$(O)/workloads/%,$(WORKLOAD_CXX_SRCS))
BENCH_BPF := $(wildcard bench/*.bpf.c)
BENCH_SKELS := $(patsubst bench/%.bpf.c,$(O)/%.skel.h,$(BENCH_BPF))
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(patsubst bench/%.c,$(O)/bench/%,$(filter-out %.bpf.c,$(BENCH_SRCS)))
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(O)/fuzz/%,$(FUZZ_SRCS))
include mk/cross.mk

.PHONY: all deps demo test unit unit-san fuzz bench vmlinux clean check-deps man install uninstall deb deps-arm64 test-pmu
.DELETE_ON_ERROR:
# the skeletons and generated headers are kept: every object includes them, and make's default
# (deleting intermediates) rebuilt every object on the next make (make demo after make -j2)
.SECONDARY:
# the libraries' and the unit tests' prerequisites are computed per target ($$*)
.SECONDEXPANSION:

all: $(O)/tmabpf $(O)/libtmabpf-itt.so $(WORKLOAD_BINS) $(BENCH_BINS) $(UNIT_BINS)

deps:
	@scripts/install-deps.sh

check-deps:
	@scripts/install-deps.sh --check >/dev/null || { scripts/install-deps.sh --check; \
		echo "hint: run 'make deps' (as root) first"; exit 1; }

ifeq ($(ARCH),$(HOST_ARCH))
$(VMLINUX):
	@mkdir -p $(dir $@)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

vmlinux:
	@mkdir -p vmlinux/$(ARCH)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $(VMLINUX)
endif

$(O)/bpf/%.bpf.o: bpf/%.bpf.c bpf/*.h $(VMLINUX) | $(O)/bpf
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(O)/bench/%.bpf.o: bench/%.bpf.c bench/*.h bpf/*.h $(VMLINUX) | $(O)/bench
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(O)/%.skel.h: $(O)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

$(O)/%.skel.h: $(O)/bench/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

# each object waits only for the generated headers (skeletons, protobuf-c) it includes: -MMD's .d
# files name them after a first build; before it, $(O)/generated-deps.mk (the sources' #include
# lines of *.skel.h and *.pb-c.h) makes a fresh build generate them first
$(O)/user/%.o: user/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(O)/generated-deps.mk: $(USER_SRCS) $(wildcard user/*/) | $(O)
	@grep -H '^#include "[A-Za-z0-9_-]*\.\(skel\|pb-c\)\.h"' $(USER_SRCS) | \
		sed 's#^user/\(.*\)\.c:\#include "\(.*\)".*#$(O)/user/\1.o $(O)/fuzz/obj/\1.o: $(O)/\2#' > $@.tmp
	@mv -f $@.tmp $@
ifeq ($(filter clean deps check-deps vmlinux,$(MAKECMDGOALS)),)
-include $(O)/generated-deps.mk
endif

# lib/, sym/, tma/ and model/ as static libraries, each named with the libraries it links against
# (bpftrace style): a unit test of a lower layer links only what it tests, so the linker proves
# that it does not reach pmu/, collect/ or libbpf (tests/test_build.py)
folder_objs = $(patsubst user/%.c,$(O)/user/%.o,$(wildcard user/$(1)/*.c))
$(O)/libtmabpf-%.a: $$(call folder_objs,$$*)
	@rm -f $@
	$(AR) rcs $@ $^
LINK_LIB := $(O)/libtmabpf-lib.a
LINK_SYM := $(O)/libtmabpf-sym.a $(LINK_LIB)
LINK_TMA := $(O)/libtmabpf-tma.a $(LINK_LIB) -lm -lpthread
LINK_MODEL := $(O)/libtmabpf-model.a $(O)/libtmabpf-sym.a $(O)/libtmabpf-tma.a $(LINK_LIB) -lm -lpthread
# what each such unit test links (the others link every object and every library)
UNIT_LINK_test_tma_expr := $(LINK_TMA)
UNIT_LINK_test_tma_cache := $(LINK_TMA)
UNIT_LINK_test_tma := $(O)/user/output/tma_output.o $(LINK_TMA)
UNIT_LINK_test_thread_table := $(LINK_MODEL)
UNIT_LINK_test_profile := $(LINK_MODEL)

$(O)/%.pb-c.c $(O)/%.pb-c.h: proto/%.proto | $(O)
	protoc-c --c_out=$(O) -Iproto $<

$(O)/proto/%.pb-c.o: $(O)/%.pb-c.c $(O)/%.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# what --version, the JSON report and /metrics say of the build; rewritten only when it changes, as
# make reads this file (a FORCE rule ran on every make: make -q never said "up to date", and make -n
# listed version.o, tmabpf and every unit test as rebuilt: tests/test_build.py)
TMABPF_GIT ?= $(shell git describe --always --dirty --tags 2>/dev/null || echo unknown)
VERSION_BUILD_H = printf '\#define TMABPF_GIT "%s"\n\#define TMABPF_BPF_CC "%s"\n\#define TMABPF_BPF_ARCH "%s"\n' \
	'$(TMABPF_GIT)' "$$($(CLANG) --version 2>/dev/null | head -1)" '$(ARCH)'
ifeq ($(filter clean deps check-deps vmlinux,$(MAKECMDGOALS)),)
$(shell mkdir -p $(O) && $(VERSION_BUILD_H) > $(O)/version_build.h.tmp && \
	{ cmp -s $(O)/version_build.h.tmp $(O)/version_build.h && rm -f $(O)/version_build.h.tmp || \
	mv -f $(O)/version_build.h.tmp $(O)/version_build.h; })
endif
# where it was not written above (make clean all)
$(O)/version_build.h: | $(O)
	@$(VERSION_BUILD_H) > $@
$(O)/user/lib/version.o $(O)/fuzz/obj/lib/version.o: $(O)/version_build.h

$(O)/tmabpf: $(USER_OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS_TMABPF)

# --itt's collector (itt/), loaded by the profiled program: nothing of tmabpf, no libbpf; its hooks
# start with a nop (emulated by the kernel's uprobes: docs/itt.md)
$(O)/libtmabpf-itt.so: itt/tmabpf_itt.c itt/itt_abi.h | $(O)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -shared -fvisibility=hidden $(if $(filter x86,$(ARCH)),-fcf-protection=none) $(LDFLAGS) $< -o $@ -lpthread

unit_link = $(or $(UNIT_LINK_$(1)),$(LIB_OBJS) $(LDLIBS_TMABPF))
unit_link_files = $(filter-out -l%,$(call unit_link,$(1)))
$(O)/tests/%: tests/unit/%.c $$(call unit_link_files,$$*) | $(O)/tests
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< $(call unit_link,$*) -o $@

$(O)/workloads/decoder: tests/workloads/decoder.c | $(O)/workloads
	$(CC) $(CFLAGS) -pthread $< -o $@ -lopenblas -lm

$(O)/workloads/dnnlwork: tests/workloads/dnnlwork.c | $(O)/workloads
	$(CC) $(CFLAGS) $< -o $@ -ldnnl

# OpenMP on libiomp5 (LLVM's libomp: Intel's ABI and ITT), not gcc's libgomp
$(O)/workloads/ompbarrier: tests/workloads/ompbarrier.c | $(O)/workloads
	$(CC) $(CFLAGS) -fopenmp -c $< -o $@.o
	$(CC) $(CFLAGS) $@.o -o $@ -liomp5 -lpthread
	rm -f $@.o

$(O)/workloads/gemmwork: tests/workloads/gemmwork.c | $(O)/workloads
	$(CC) $(CFLAGS) -I/usr/include/$(shell $(CC) -dumpmachine) $< -o $@ -lopenblas

# sampling tests check caller->callee chains: leaf functions keep their frame pointer too
# (gcc 12 drops it in leaves even with -mno-omit-leaf-frame-pointer; clang keeps it)
$(O)/workloads/hotfuncs $(O)/workloads/jitmap: CC = $(CLANG)
$(O)/workloads/hotfuncs $(O)/workloads/jitmap: CFLAGS += -mno-omit-leaf-frame-pointer

$(O)/workloads/%: tests/workloads/%.cc | $(O)/workloads
	$(CXX) -O2 -g -Wall -fno-omit-frame-pointer -pthread $< -o $@

$(O)/workloads/%: tests/workloads/%.c | $(O)/workloads
	$(CC) $(CFLAGS) -pthread $< -o $@ -lm

$(O)/bench/%: bench/%.c $(BENCH_SKELS) $(LIB_OBJS) | $(O)/bench
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -pthread $< $(LIB_OBJS) -o $@ $(LDLIBS_TMABPF)

# fuzzers: the user sources built once with the sanitizers, linked into each target
FUZZ_FLAGS := -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_OBJS := $(patsubst user/%.c,$(O)/fuzz/obj/%.o,$(filter-out user/cmd/main.c,$(USER_SRCS))) $(PROTO_OBJS)

$(O)/fuzz/obj/%.o: user/%.c
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -MMD -MP $(CPPFLAGS) -c $< -o $@

$(O)/fuzz/%: tests/fuzz/%.c $(FUZZ_OBJS) | $(O)/fuzz
	$(CLANG) $(FUZZ_FLAGS) -fsanitize=fuzzer $(CPPFLAGS) $< $(FUZZ_OBJS) -o $@ $(LDLIBS_TMABPF)

# the unit programs again, linked against the sanitized objects (tests/test_unit.py runs both)
UNIT_SAN_BINS := $(patsubst tests/unit/%.c,$(O)/unit-san/%,$(UNIT_SRCS))

$(O)/unit-san/%: tests/unit/%.c $(FUZZ_OBJS)
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -MMD -MP $(CPPFLAGS) $< $(FUZZ_OBJS) -o $@ $(LDLIBS_TMABPF)

$(O) $(O)/bpf $(O)/tests $(O)/workloads $(O)/bench $(O)/fuzz:
	@mkdir -p $@

fuzz: $(FUZZ_BINS)

unit-san: $(UNIT_SAN_BINS)

unit: $(UNIT_BINS)

demo:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory all
	scripts/demo.sh

test:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory all fuzz unit-san man
	scripts/run-tests.sh

bench:
	@$(MAKE) --no-print-directory all
	bench/run-bench.sh

clean:
	rm -rf $(O)

# ---- installing: binary, man pages, systemd unit, daemon config, bash completion, examples ----
VERSION := $(shell sed -n 's/^\#define TMABPF_VERSION "\([^"]*\)".*/\1/p' user/lib/version.h)
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
# --itt's collector: BINDIR/../lib/tmabpf, where tmabpf looks (run/itt_env.c)
ITTDIR ?= $(PREFIX)/lib/tmabpf
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/tmabpf
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
UNITDIR ?= $(if $(filter /usr,$(PREFIX)),/lib,$(PREFIX)/lib)/systemd/system
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
MAN_PAGES := $(patsubst man/%.md,$(O)/man/%,$(wildcard man/*.md))
EXAMPLES := deploy/kubernetes/tmabpf-daemonset.yaml deploy/prometheus/prometheus.yml \
	deploy/prometheus/tmabpf-rules.yml deploy/grafana/tmabpf-dashboard.json
# the documentation, as /usr/share/doc/tmabpf/NAME (the man pages point there)
DOCS := $(wildcard docs/*.md docs/*.json)
INSTALLED := $(BINDIR)/tmabpf $(ITTDIR)/libtmabpf-itt.so $(UNITDIR)/tmabpf.service $(COMPLETIONDIR)/tmabpf \
	$(patsubst $(O)/man/%,$(MANDIR)/man1/%,$(filter %.1,$(MAN_PAGES))) \
	$(patsubst $(O)/man/%,$(MANDIR)/man8/%,$(filter %.8,$(MAN_PAGES))) \
	$(addprefix $(DOCDIR)/examples/,$(notdir $(EXAMPLES))) $(addprefix $(DOCDIR)/,$(notdir $(DOCS)))

man: $(MAN_PAGES)

$(O)/man/%: man/%.md user/lib/version.h | $(O)/man
	@command -v go-md2man >/dev/null || { echo "man pages: go-md2man is missing (run: make deps)" >&2; exit 2; }
	sed 's/@VERSION@/$(VERSION)/' $< | go-md2man > $@

$(O)/man:
	@mkdir -p $@

install: $(O)/tmabpf $(O)/libtmabpf-itt.so man
	install -d $(addprefix $(DESTDIR),$(BINDIR) $(ITTDIR) $(MANDIR)/man1 $(MANDIR)/man8 $(UNITDIR) $(COMPLETIONDIR) \
		$(DOCDIR)/examples $(SYSCONFDIR)/tmabpf)
	install -m 755 $(O)/tmabpf $(DESTDIR)$(BINDIR)/tmabpf
	install -m 644 $(O)/libtmabpf-itt.so $(DESTDIR)$(ITTDIR)/libtmabpf-itt.so
	install -m 644 $(filter %.1,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(filter %.8,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man8/
	sed -e 's#/usr/bin/tmabpf#$(BINDIR)/tmabpf#' -e 's#/etc/tmabpf/#$(SYSCONFDIR)/tmabpf/#' \
		deploy/systemd/tmabpf.service > $(DESTDIR)$(UNITDIR)/tmabpf.service
	chmod 644 $(DESTDIR)$(UNITDIR)/tmabpf.service
	install -m 644 completions/tmabpf.bash $(DESTDIR)$(COMPLETIONDIR)/tmabpf
	install -m 644 $(EXAMPLES) $(DESTDIR)$(DOCDIR)/examples/
	install -m 644 $(DOCS) $(DESTDIR)$(DOCDIR)/
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/tmabpf/daemon.conf ]; then \
		echo "install: kept $(DESTDIR)$(SYSCONFDIR)/tmabpf/daemon.conf"; \
	else install -m 644 deploy/systemd/daemon.conf $(DESTDIR)$(SYSCONFDIR)/tmabpf/daemon.conf; fi

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	@if cmp -s deploy/systemd/daemon.conf $(DESTDIR)$(SYSCONFDIR)/tmabpf/daemon.conf; then \
		rm -f $(DESTDIR)$(SYSCONFDIR)/tmabpf/daemon.conf; \
	elif [ -e $(DESTDIR)$(SYSCONFDIR)/tmabpf/daemon.conf ]; then \
		echo "uninstall: kept the edited $(DESTDIR)$(SYSCONFDIR)/tmabpf/daemon.conf"; fi
	rmdir $(addprefix $(DESTDIR),$(DOCDIR)/examples $(DOCDIR) $(SYSCONFDIR)/tmabpf $(ITTDIR)) 2>/dev/null || true

deb:
	VERSION='$(VERSION)' TMABPF_GIT='$(TMABPF_GIT)' scripts/build-deb.sh

include mk/pmu.mk

-include $(wildcard $(O)/user/*/*.d $(O)/tests/*.d $(O)/workloads/*.d $(O)/bench/*.d $(O)/fuzz/obj/*/*.d $(O)/unit-san/*.d)
