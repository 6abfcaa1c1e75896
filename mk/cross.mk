# Cross-building for ARCH=arm64 on an x86 host, included by the Makefile.
# Debian's cross toolchain (make deps) and an arm64 sysroot of the libraries
# tmabpf links, fetched from Debian's archive with private apt state
# (make deps-arm64: the host's dpkg architectures are left alone).
.DEFAULT_GOAL := all
comma := ,
ARM64_SYSROOT ?= $(TMABPF_CACHE)/arm64/sysroot
# the arm64 -dev packages; the cross toolchain brings its own glibc and libstdc++
ARM64_DEV_PKGS := libbpf-dev/bookworm-backports linux-libc-dev/bookworm-backports libelf-dev libdw-dev \
	zlib1g-dev libzstd-dev libpfm4-dev libncurses-dev libmicrohttpd-dev libjson-c-dev libprotobuf-c-dev
ARM64_TOOLCHAIN_PKGS := libc6,libc6-dev,libgcc-s1,libstdc++6,gcc-12-base,libcrypt1
# the guest kernel of make test-pmu, and the BTF of vmlinux/arm64/vmlinux.h
ARM64_KERNEL_PKG := linux-image-6.12.*+deb12-arm64-unsigned
ARM64_KERNEL_DIR := $(TMABPF_CACHE)/arm64/kernel

ifneq ($(ARCH),$(HOST_ARCH))
ifneq ($(ARCH)-$(HOST_ARCH),arm64-x86)
$(error ARCH=$(ARCH) on $(HOST_ARCH): the only cross-build is ARCH=arm64 on x86)
endif
CROSS_COMPILE ?= aarch64-linux-gnu-
CC := $(CROSS_COMPILE)gcc
CXX := $(CROSS_COMPILE)g++
ARM64_LIBDIRS := $(ARM64_SYSROOT)/usr/lib/aarch64-linux-gnu $(ARM64_SYSROOT)/lib/aarch64-linux-gnu
# the sysroot first: the cross gcc would fall back to the host's /usr/include
# (x86 libbpf, json-c, ncurses) and the toolchain's 6.1 kernel headers lack uprobe_multi
CPPFLAGS += -I$(ARM64_SYSROOT)/usr/include/aarch64-linux-gnu -I$(ARM64_SYSROOT)/usr/include
LDFLAGS += $(addprefix -L,$(ARM64_LIBDIRS)) $(addprefix -Wl$(comma)-rpath-link$(comma),$(ARM64_LIBDIRS))
# not cross-built: OpenBLAS (decoder) is not in the sysroot; hotfuncs/jitmap build with the host's clang
# (and oneDNN, libiomp5: dnnlwork, ompbarrier)
WORKLOAD_BINS := $(filter-out $(O)/workloads/decoder $(O)/workloads/hotfuncs $(O)/workloads/jitmap \
	$(O)/workloads/dnnlwork $(O)/workloads/ompbarrier,$(WORKLOAD_BINS))
FUZZ_BINS :=
$(USER_OBJS) $(O)/tmabpf: | $(ARM64_SYSROOT)/.stamp
$(ARM64_SYSROOT)/.stamp:
	@echo "no arm64 sysroot in $(ARM64_SYSROOT): run 'make deps-arm64' first" >&2; exit 1

# vmlinux.h from the BTF inside Debian's arm64 kernel Image (no arm64 machine needed)
vmlinux: | $(O)
	rm -rf $(ARM64_KERNEL_DIR) && scripts/fetch_arm64.py --only ./boot $(TMABPF_CACHE)/arm64 $(ARM64_KERNEL_DIR) '$(ARM64_KERNEL_PKG)'
	scripts/btf_from_image.py $(ARM64_KERNEL_DIR)/boot/vmlinuz-* $(O)/vmlinux.btf
	@mkdir -p vmlinux/$(ARCH)
	$(BPFTOOL) btf dump file $(O)/vmlinux.btf format c > $(VMLINUX)
endif

deps-arm64:
	@scripts/install-deps.sh
	@if [ ! -f $(ARM64_SYSROOT)/.stamp ] || [ mk/cross.mk -nt $(ARM64_SYSROOT)/.stamp ]; then \
		echo "deps-arm64: fetching the arm64 sysroot into $(ARM64_SYSROOT)"; \
		rm -rf $(ARM64_SYSROOT) && mkdir -p $(ARM64_SYSROOT) && \
		scripts/fetch_arm64.py --closure --exclude $(ARM64_TOOLCHAIN_PKGS) $(TMABPF_CACHE)/arm64 \
			$(ARM64_SYSROOT) $(ARM64_DEV_PKGS) > $(ARM64_SYSROOT).list && mv $(ARM64_SYSROOT).list $(ARM64_SYSROOT)/.stamp; \
	else echo "deps-arm64: arm64 sysroot present ($(ARM64_SYSROOT))"; fi
