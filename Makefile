# tracebench: see README.md. `make check` is the main job, `make test` runs
# every test; both set up what they need on a fresh machine.
SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin
GO ?= go
BIN := .cache/bin
# Upper bound for one guest run, seconds (the guest prints progress): an
# amd64 guest's, times the architecture's slowdown (matrix.Arch.Slowdown,
# which a host test holds equal; 1 where none is named).
SLOWDOWN_riscv64 := 6
VM_TIMEOUT ?= $(shell echo $$((2400 * $(or $(SLOWDOWN_$(ARCH)),1))))
# The architectures the guests run, as Debian names them; Go and Debian's
# kernel flavours name ppc64el otherwise (ppc64le, powerpc64le). The
# package matrix's Arches is the same list (a host test holds them equal).
ARCHES := amd64 arm64 ppc64el riscv64 s390x
goarch = $(subst ppc64el,ppc64le,$(1))
arch_flavour = $(subst ppc64el,powerpc64le,$(1))
# The guest's architecture, one of ARCHES: amd64 (default: virtme-ng,
# vm/run.sh) or another (sid's newest 7.x kernel of that architecture under
# its QEMU with vm/run-initramfs.sh, the test binaries built for it into
# $(BIN)/<arch>/).
ARCH ?= amd64
ifeq ($(filter $(ARCH),$(ARCHES)),)
$(error ARCH=$(ARCH) is none of $(ARCHES))
endif
TEST_BIN := $(if $(filter amd64,$(ARCH)),$(BIN),$(BIN)/$(ARCH))

.DEFAULT_GOAL := check
.PHONY: check test unit vm-test deps kernel generate vmlinux clean FORCE

## check: run every scenario for every mechanism in a Linux 7.x guest and print the outcome table
check: vm-test

## test: host unit tests, then the guest scenario run
test: unit vm-test

## unit: vet and test on the host (tracing tests skip there with the reason)
unit:
	@echo "== host unit tests (kernel $$(uname -r))"
	$(GO) vet ./...
	$(GO) test -count=1 ./...

# The guest runs the CLI's tests, then the scenarios (whose outcome table
# ends the output); it fails if either fails.
GUEST_TESTS := $(TEST_BIN)/tracebench.test -test.v -test.count=1; cli=$$?; \
	$(TEST_BIN)/scenarios.test -test.v -test.count=1; sc=$$?; \
	echo "guest: tracebench CLI tests exit $$cli, scenarios exit $$sc"; exit $$((cli || sc))

# Mechanisms the guest run takes out, as "name: reason; ..." (tracers'
# TRACEBENCH_DISABLE), e.g. while a kernel crashes with one. Empty: all run.
GUEST_DISABLE ?=

# The kernels.tsv row of the kernel vm-test boots (a vm/kernel.sh selector;
# e.g. sid:7:powerpc64le-64k with ARCH=ppc64el): the guest's outcomes must
# match its column (cmd/matrix -check), so a mechanism that skips where it
# must run, or runs where it must skip, fails.
TEST_KERNEL ?= $(if $(filter amd64,$(ARCH)),sid:7,sid:7:$(call arch_flavour,$(ARCH)))
# The guest's output, which the check reads.
GUEST_LOG := .cache/vm-test.log
# How vm-test boots TEST_KERNEL (its directory in $dir) and runs GUEST_TESTS.
ifeq ($(ARCH),amd64)
GUEST_BOOT = vm/run.sh --kernel "$$dir" --timeout $(VM_TIMEOUT) -- bash -c '$(GUEST_TESTS)'
else
GUEST_BOOT = vm/run-initramfs.sh --kernel "$$dir" --timeout $(VM_TIMEOUT) \
	--add $(TEST_BIN)/scenarios.test --add $(TEST_BIN)/tracebench.test -- sh -c '$(GUEST_TESTS)'
endif

## vm-test: the CLI tests and the scenarios as root inside the newest Debian 7.x kernel, checked against kernels.tsv
vm-test: deps kernel $(TEST_BIN)/scenarios.test $(TEST_BIN)/tracebench.test
	@echo "== CLI tests and scenarios in the $(ARCH) guest"
	dir="$$(vm/kernel.sh $(TEST_KERNEL))" || exit; \
	TRACEBENCH_DISABLE='$(GUEST_DISABLE)' TRACEBENCH_OUTCOMES_JSON=1 $(GUEST_BOOT) | tee $(GUEST_LOG); \
	guest=$${PIPESTATUS[0]}; \
	echo "== the outcomes against the $(TEST_KERNEL) column of matrix/kernels.tsv"; \
	$(GO) run ./cmd/matrix -check $(GUEST_LOG) -only $(TEST_KERNEL) -kernel-dir "$$dir"; check=$$?; \
	if [ $$guest -ne 0 ]; then exit $$guest; fi; exit $$check

# Static, so the host-built binaries run unchanged in the guest.
$(BIN)/scenarios.test: FORCE
	CGO_ENABLED=0 $(GO) test -c -o $@ ./scenarios
$(BIN)/tracebench.test: FORCE
	CGO_ENABLED=0 $(GO) test -c -o $@ ./cmd/tracebench
# Another architecture's, in $(BIN)/<arch>/.
$(BIN)/%/scenarios.test: FORCE
	CGO_ENABLED=0 GOARCH=$(call goarch,$*) $(GO) test -c -o $@ ./scenarios
$(BIN)/%/tracebench.test: FORCE
	CGO_ENABLED=0 GOARCH=$(call goarch,$*) $(GO) test -c -o $@ ./cmd/tracebench

## deps: host packages to boot the guest (QEMU, virtme-ng, udev, busybox; the QEMU of another ARCH)
# The QEMU of the guest's architecture, or of every architecture `make
# matrix` boots (global: make builds deps once, for whichever goal needs it
# first).
DEPS_FLAGS = $(foreach a,$(filter-out amd64,$(ARCH) $(if $(filter matrix,$(MAKECMDGOALS)),$(MATRIX_ARCHES))),--arch $(a))
deps:
	vm/deps.sh $(DEPS_FLAGS)

## kernel: fetch and unpack the newest Debian 7.x kernel into .cache/
kernel: deps
	vm/kernel.sh $(TEST_KERNEL) >/dev/null

## generate: rebuild the committed bpf2go output with clang-19 (every go:generate line: tracers/, bench/floors)
generate:
	vm/deps.sh --build
	$(GO) generate ./...

## vmlinux: regenerate bpf/vmlinux.h from the BTF of the cached 7.x kernel
vmlinux: kernel
	vm/deps.sh --build
	bpf/vmlinux.sh "$$(vm/kernel.sh)/vmlinuz"

## clean: remove built binaries (the kernel and package cache stay in .cache/)
clean:
	rm -rf $(BIN)

FORCE:

include bench.mk matrix.mk
