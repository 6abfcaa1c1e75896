# make test-pmu: the emulated-PMU test tier (docs/emulated-pmu.md), included
# by the Makefile.  arm64 build of tmabpf + the ground-truth workload, Debian's
# arm64 kernel under QEMU with exact instruction counting; make test runs it
# through tests/test_pmu.py.
ARM64_O := $(if $(filter arm64,$(HOST_ARCH)),build,build/arm64)

ifeq ($(ARCH),arm64)
all: $(O)/pmu/gt_arm64
$(O)/pmu/gt_arm64: tests/pmu/gt_arm64.S
	@mkdir -p $(dir $@)
	$(CC) -nostdlib -static -Wl,--build-id=none $< -o $@
endif

test-pmu:
	@$(MAKE) --no-print-directory deps-arm64
	@$(MAKE) --no-print-directory ARCH=arm64 $(ARM64_O)/tmabpf $(ARM64_O)/pmu/gt_arm64
	tests/pmu/pmu_tier.py --build $(ARM64_O) --cache $(TMABPF_CACHE)/arm64
