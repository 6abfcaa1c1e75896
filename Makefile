# tmabpf — build, setup, demo and tests.  See README.md.
#   make deps   install every package (Debian 12 + bookworm-backports), idempotent
#   make        build build/tmabpf, tools, benches and unit tests
#   make demo   deps + build + profile the bundled OpenBLAS decoder
#   make test   deps + build + all tests (needs root)
ARCH ?= $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
CLANG ?= clang-19
BPFTOOL ?= bpftool
CC ?= gcc
O := build
VMLINUX := vmlinux/$(ARCH)/vmlinux.h

CFLAGS ?= -O2 -g
CFLAGS += -Wall -Wextra -Wno-unused-parameter -std=gnu11 -fno-omit-frame-pointer -MMD -MP
CPPFLAGS += -I$(O) -Iuser -Ibpf -D_GNU_SOURCE
LDLIBS_TMABPF := -lbpf -lelf -ldw -lz -lpfm -lncursesw -lmicrohttpd -ljson-c -lstdc++ -lm -lpthread
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I$(dir $(VMLINUX)) -Ibpf -Wall -Wno-unused-function

BPF_SRCS := $(wildcard bpf/*.bpf.c)
SKELS := $(patsubst bpf/%.bpf.c,$(O)/%.skel.h,$(BPF_SRCS))
USER_SRCS := $(wildcard user/*.c)
USER_OBJS := $(patsubst user/%.c,$(O)/user/%.o,$(USER_SRCS))
LIB_OBJS := $(filter-out $(O)/user/main.o,$(USER_OBJS))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(O)/tests/%,$(UNIT_SRCS))
TOOL_SRCS := $(wildcard tools/*.c)
TOOL_BINS := $(patsubst tools/%.c,$(O)/tools/%,$(TOOL_SRCS))
TOOL_CXX_SRCS := $(wildcard tools/*.cc)
TOOL_BINS += $(patsubst tools/%.cc,$(O)/tools/%,$(TOOL_CXX_SRCS))
BENCH_BPF := $(wildcard bench/*.bpf.c)
BENCH_SKELS := $(patsubst bench/%.bpf.c,$(O)/%.skel.h,$(BENCH_BPF))
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(patsubst bench/%.c,$(O)/bench/%,$(filter-out %.bpf.c,$(BENCH_SRCS)))
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(O)/fuzz/%,$(FUZZ_SRCS))

.PHONY: all deps demo test unit fuzz bench vmlinux clean check-deps
.DELETE_ON_ERROR:

all: $(O)/tmabpf $(TOOL_BINS) $(BENCH_BINS) $(UNIT_BINS)

deps:
	@tools/install-deps.sh

check-deps:
	@tools/install-deps.sh --check >/dev/null || { tools/install-deps.sh --check; \
		echo "hint: run 'make deps' (as root) first"; exit 1; }

$(VMLINUX):
	@mkdir -p $(dir $@)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

vmlinux:
	@mkdir -p vmlinux/$(ARCH)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $(VMLINUX)

$(O)/bpf/%.bpf.o: bpf/%.bpf.c bpf/*.h $(VMLINUX) | $(O)/bpf
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(O)/bench/%.bpf.o: bench/%.bpf.c bench/*.h bpf/*.h $(VMLINUX) | $(O)/bench
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(O)/%.skel.h: $(O)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

$(O)/%.skel.h: $(O)/bench/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

$(O)/user/%.o: user/%.c $(SKELS) | $(O)/user
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(O)/tmabpf: $(USER_OBJS)
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS_TMABPF)

$(O)/tests/%: tests/unit/%.c $(LIB_OBJS) | $(O)/tests
	$(CC) $(CPPFLAGS) $(CFLAGS) $< $(LIB_OBJS) -o $@ $(LDLIBS_TMABPF)

$(O)/tools/decoder: tools/decoder.c | $(O)/tools
	$(CC) $(CFLAGS) -pthread $< -o $@ -lopenblas -lm

# sampling tests check caller->callee chains: leaf functions keep their frame pointer too
# (gcc 12 drops it in leaves even with -mno-omit-leaf-frame-pointer; clang keeps it)
$(O)/tools/hotfuncs $(O)/tools/jitmap: CC = $(CLANG)
$(O)/tools/hotfuncs $(O)/tools/jitmap: CFLAGS += -mno-omit-leaf-frame-pointer

$(O)/tools/%: tools/%.cc | $(O)/tools
	$(CXX) -O2 -g -Wall -fno-omit-frame-pointer -pthread $< -o $@

$(O)/tools/%: tools/%.c | $(O)/tools
	$(CC) $(CFLAGS) -pthread $< -o $@ -lm

$(O)/bench/%: bench/%.c $(BENCH_SKELS) $(LIB_OBJS) | $(O)/bench
	$(CC) $(CPPFLAGS) $(CFLAGS) -pthread $< $(LIB_OBJS) -o $@ $(LDLIBS_TMABPF)

# fuzzers: the user sources built once with the sanitizers, linked into each target
FUZZ_FLAGS := -g -O1 -fsanitize=address,undefined
FUZZ_OBJS := $(patsubst user/%.c,$(O)/fuzz/obj/%.o,$(filter-out user/main.c,$(USER_SRCS)))

$(O)/fuzz/obj/%.o: user/%.c $(SKELS) | $(O)/fuzz/obj
	$(CLANG) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -MMD -MP $(CPPFLAGS) -c $< -o $@

$(O)/fuzz/%: tests/fuzz/%.c $(FUZZ_OBJS) | $(O)/fuzz
	$(CLANG) $(FUZZ_FLAGS) -fsanitize=fuzzer $(CPPFLAGS) $< $(FUZZ_OBJS) -o $@ $(LDLIBS_TMABPF)

$(O)/bpf $(O)/user $(O)/tests $(O)/tools $(O)/bench $(O)/fuzz $(O)/fuzz/obj:
	@mkdir -p $@

fuzz: $(FUZZ_BINS)

unit: $(UNIT_BINS)

demo:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory all
	tools/demo.sh

test:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory all fuzz
	tools/run-tests.sh

bench:
	@$(MAKE) --no-print-directory all
	tools/run-bench.sh

clean:
	rm -rf $(O)

-include $(wildcard $(O)/user/*.d $(O)/tests/*.d $(O)/tools/*.d $(O)/bench/*.d $(O)/fuzz/obj/*.d)
