# tracebench: see README.md. `make check` is the main job, `make test` runs
# every test; both set up what they need on a fresh machine.
SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin
GO ?= go
BIN := .cache/bin
# One build for the host tests and the guests' static test binaries;
# -trimpath keeps paths out of the build, so that a clone elsewhere reuses
# the build cache instead of compiling every package again.
export CGO_ENABLED := 0
ifeq ($(filter -trimpath,$(GOFLAGS)),)
export GOFLAGS += -trimpath
endif
# The architectures the guests run, as Debian names them, from the one
# list (internal/arches/arches.tsv); Go and Debian's kernel flavours may
# name one otherwise (ppc64el: ppc64le, powerpc64le), column 3 and 2 of its
# row (arch_field N,ARCH).
ARCH_TABLE := internal/arches/arches.tsv
ARCHES := $(shell awk -F'\t' '!/^\#/ && NF { print $$1 }' $(ARCH_TABLE))
arch_field = $(shell awk -F'\t' '$$1 == "$(2)" { print $$$(1) }' $(ARCH_TABLE))
goarch = $(call arch_field,3,$(1))
arch_flavour = $(call arch_field,2,$(1))
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
.PHONY: check test test-record unit fetch vm-test docs cli-samples deps kernel generate vmlinux clean FORCE

## check: run every scenario for every mechanism in a Linux 7.x guest and print the outcome table
check: vm-test

## test: host unit tests (while the guest's packages and kernel download), then the guest run of `check`; its record in .cache/vm-test/make-test.txt
test:
	$(if $(MECHANISMS),$(error make test runs everything; MECHANISMS=$(MECHANISMS) is for make check))
	@mkdir -p $(TEST_OUT); start=$$(date +%s); record=$(TEST_OUT)/make-test.txt; \
	{ echo "started: $$(date -u +%FT%TZ)"; echo "commit: $$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"; \
	  echo "host: $$(nproc) CPUs, Linux $$(uname -r)"; echo "host-cpu: $$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1 | grep . || uname -m)"; echo "host-load-at-start: $$(cut -d' ' -f1-3 /proc/loadavg)"; \
	  echo "go-build-cache-mb-at-start: $$(du -sm "$$($(GO) env GOCACHE)" 2>/dev/null | cut -f1 | grep . || echo 0)"; \
	  echo "qemu-installed-at-start: $$(command -v qemu-system-x86_64 >/dev/null && echo yes || echo no)"; \
	  echo "kernels-cached-at-start: $$(ls $${TRACEBENCH_CACHE:-.cache}/kernels/*/tracebench-kernel.env 2>/dev/null | wc -l)"; } >$$record; \
	$(MAKE) --no-print-directory -j2 unit fetch; rc=$$?; host=$$(date +%s); \
	if [ $$rc -eq 0 ]; then $(MAKE) --no-print-directory vm-test; rc=$$?; fi; end=$$(date +%s); \
	{ echo "host-tests-and-fetch-s: $$((host - start))"; echo "guests-s: $$((end - host))"; \
	  echo "total-s: $$((end - start))"; echo "exit-status: $$rc"; \
	  echo "host-load-at-end: $$(cut -d' ' -f1-3 /proc/loadavg)"; echo "cache-mb-at-end: $$(du -sm $${TRACEBENCH_CACHE:-.cache} 2>/dev/null | cut -f1)"; } >>$$record; \
	echo "== make test: exit $$rc after $$((end - start)) s (record: $$record)"; exit $$rc

## unit: vet and test on the host (tracing tests skip there with the reason)
unit:
	@echo "== host unit tests (kernel $$(uname -r))"
	$(GO) vet ./...
	$(GO) test -count=1 ./...

# fetch: what the guest run downloads (QEMU, virtme-ng, the kernel).
fetch: kernel

# Mechanisms the guest run takes out, as "name: reason; ..." (tracers'
# TRACEBENCH_DISABLE), e.g. while a kernel crashes with one. Empty: all run.
GUEST_DISABLE ?=

# The kernels.tsv row of the kernel vm-test boots (a vm/kernel.sh selector;
# e.g. sid:7:powerpc64le-64k with ARCH=ppc64el): the guest's outcomes must
# match its column, as in `make matrix`, so a mechanism that skips where it
# must run, or runs where it must skip, fails.
TEST_KERNEL ?= $(if $(filter amd64,$(ARCH)),sid:7,sid:7:$(call arch_flavour,$(ARCH)))
# Guests the run is divided over, side by side: each is a single-threaded
# emulator, so one per host CPU, at most 4.
TEST_GUESTS ?= $(shell n=$$(nproc); echo $$((n < 4 ? n : 4)))
# Upper bound for one amd64 guest (cmd/matrix scales it by the
# architecture's matrix.Arch.Slowdown).
TEST_TIMEOUT ?= 20m
# Where the run's outcome file (with its units' durations, by which the
# next run divides them), its outcome table, each guest's full output and
# make test's record go; the committed record of a measured run, whose
# durations divide a first run.
TEST_OUT := .cache/vm-test
TEST_WEIGHTS := results/make-test

# The mechanisms vm-test runs alone, comma-separated (e.g.
# MECHANISMS=fsession,fentry-fexit): their scenario rows only, held to
# their cells of the column, without the CLI's tests or the other scenario
# tests: the loop while working on one mechanism. Empty: everything.
MECHANISMS ?=
VM_TEST_WHAT := $(if $(MECHANISMS),the scenario rows of $(MECHANISMS),CLI tests and scenarios)
VM_TEST_RUNS := $(if $(MECHANISMS),-mechanisms '$(MECHANISMS)',-cli $(BIN)/tracebench.test)

## vm-test: the CLI tests and the scenarios (MECHANISMS=a,b: those mechanisms' rows alone) as root inside the newest Debian 7.x kernel, divided over TEST_GUESTS guests, checked against kernels.tsv
vm-test: deps kernel $(TEST_BIN)/scenarios.test $(TEST_BIN)/tracebench.test
	@echo "== $(VM_TEST_WHAT) in up to $(TEST_GUESTS) $(ARCH) guests, checked against the $(TEST_KERNEL) column of matrix/kernels.tsv"
	TRACEBENCH_DISABLE='$(GUEST_DISABLE)' $(GO) run ./cmd/matrix -only $(TEST_KERNEL) -guests $(TEST_GUESTS) \
		-bin $(BIN)/scenarios.test $(VM_TEST_RUNS) -timeout $(TEST_TIMEOUT) \
		-out '' -outcomes $(TEST_OUT) -logs $(TEST_OUT)/logs -weights $(TEST_WEIGHTS) -table

## test-record: keep the last make test's record and outcome file (with its durations) in results/make-test/, if it passed
test-record:
	grep -qx 'exit-status: 0' $(TEST_OUT)/make-test.txt
	mkdir -p $(TEST_WEIGHTS) && cp $(TEST_OUT)/make-test.txt $(TEST_OUT)/*.json $(TEST_WEIGHTS)/

# Static, so the host-built binaries run unchanged in the guest.
$(BIN)/scenarios.test: FORCE
	$(GO) test -c -o $@ ./scenarios
$(BIN)/tracebench.test: FORCE
	$(GO) test -c -o $@ ./cmd/tracebench
# Another architecture's, in $(BIN)/<arch>/.
$(BIN)/%/scenarios.test: FORCE
	GOARCH=$(call goarch,$*) $(GO) test -c -o $@ ./scenarios
$(BIN)/%/tracebench.test: FORCE
	GOARCH=$(call goarch,$*) $(GO) test -c -o $@ ./cmd/tracebench

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

## docs: render every document from results/: the benchmark reports, the perf matrix, the kernel matrix, the peers' conformance, the CLI's samples this host can capture (cmd/tracebench/testdata/) and every docs/templates/ template
docs: bench-report
	@# Its mismatches (a column no committed run has proven yet) are the report's
	@# content here, listed at its end; make matrix fails on them.
	-$(GO) run ./cmd/matrix -merge -outcomes results/matrix -out results/matrix.md
	$(GO) test -count=1 ./peers -run TestCommittedConformance -peers.conformance.update
	$(GO) test -count=1 -run '^TestGoldenTranscripts$$' ./cmd/tracebench -update
	$(BIN)/bench kernels '$(bench_kernels_dir)' '$(bench_kernels_dir).md'
	$(GO) run ./cmd/docs

# The CLI's guest tests whose runs cmd/tracebench/README.md shows.
CLI_SAMPLES_TESTS := ^(TestListAsRoot|TestTraceText|TestTraceJSONAuto|TestTraceDurationEnds|TestTraceFunctions|TestTraceFunctionsRefused)$$
CLI_SAMPLES_CPUS := 2

## cli-samples: run the CLI's guest tests in TEST_KERNEL's amd64 guest (TCG), their CLI runs' transcripts and a meta.txt into results/<kernel>/cli/ (the README's samples)
cli-samples: deps kernel $(BIN)/tracebench.test
	@kdir="$$(vm/kernel.sh $(TEST_KERNEL))" && out="results/$$(basename "$$kdir")/cli" && \
	commit="$$(git rev-parse --short=12 HEAD)$$(git diff --quiet HEAD -- . ":(exclude)$$out" || echo -dirty)" && \
	rm -rf "$$out" && mkdir -p "$$out" && start=$$(date -u +%FT%TZ) && load=$$(cut -d' ' -f1-3 /proc/loadavg) && \
	vm/run.sh --kernel "$$kdir" --accel tcg --cpus $(CLI_SAMPLES_CPUS) --timeout 2400 -- $(BIN)/tracebench.test -test.v -test.count=1 \
		-test.timeout 35m -test.run '$(CLI_SAMPLES_TESTS)' -transcripts "$$out" >"$$out/test.log" 2>&1; rc=$$?; \
	{ echo "kernel: $$(basename "$$kdir")"; echo "date-start: $$start"; echo "host-load-start: $$load"; echo "date-end: $$(date -u +%FT%TZ)"; \
	  echo "emulation: QEMU TCG"; echo "guest-cpus: $(CLI_SAMPLES_CPUS)"; echo "host-cpus: $$(nproc)"; \
	  echo "host-load-end: $$(cut -d' ' -f1-3 /proc/loadavg)"; echo "clock: wall (no icount)"; \
	  echo "commit: $$commit"; \
	  echo "tests: $(CLI_SAMPLES_TESTS)"; echo "exit-status: $$rc"; } >"$$out/meta.txt"; \
	echo "== CLI samples in $$out (exit $$rc; test.log holds the tests' output)"; exit $$rc

## generate: rebuild the committed bpf2go output with clang-19 (every go:generate line: tracers/, bench/floors)
generate:
	vm/deps.sh --build
	$(GO) generate ./...

## vmlinux: regenerate bpf/vmlinux.h from the BTF of TEST_KERNEL's kernel (default: sid's newest 7.x)
vmlinux: kernel
	vm/deps.sh --build
	kdir="$$(vm/kernel.sh $(TEST_KERNEL))" && bpf/vmlinux.sh "$$kdir/vmlinuz"

## clean: remove built binaries (the kernel and package cache stay in .cache/)
clean:
	rm -rf $(BIN)

FORCE:

include bench.mk matrix.mk
