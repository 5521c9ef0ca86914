# bench.mk: the overhead benchmarks (bench/, bench/README.md). Included by
# the Makefile, which puts Go on PATH and defines `deps` and `kernel`.
#
#   make bench                run in the Linux 7.x guest, write results/<kernel>/
#                             (guest clock: QEMU icount, instructions)
#   make bench-peers          the peer tools (libbpf-tools, bpftrace, perf) beside
#                             tracebench, own guest run -> results/<kernel>/peers/
#   make bench-multi          many functions per tracer: the read path's functions
#                             traced at once, Start/Close/memory by number of
#                             functions, the peers' wildcards (bpftrace, bcc) beside them,
#                             own guests -> results/<kernel>/multi/
#   make bench BENCH_CLOCK=wall  the guest's TCG wall time instead
#   make bench BENCH_HOST=1   run on this machine's kernel instead (root)
#   make bench TEST_KERNEL=trixie-backports:6.18  boot that kernel (a vm/kernel.sh
#                             selector; one it cannot fetch whole is an error)
#   make peers-test           the agreement test of tracebench and the peer tools (guest, icount)
#   make peers-conformance    the peer tools and tracebench's mechanisms held to the conformance
#                             rows (guest, icount) -> results/<kernel>/peers/CONFORMANCE.md
#   make bench-report         regenerate every results/*/ report from its raw.txt
#                             (with BENCH_RESULTS=DIR: every DIR/*/ report)
#
# The variables below are passed to cmd/bench (`bench run`), whose --help
# documents them: go run ./cmd/bench run --help

BENCH_HOST ?= 0
# Empty: icount in the guest, wall with BENCH_HOST=1.
BENCH_CLOCK ?=
BENCH_ROUNDS ?= 12
# BenchmarkPeers' rounds: each starts bpftrace twice (~1.5 min under TCG).
BENCH_PEER_ROUNDS ?= 6
# BenchmarkMultiRead's rounds: each starts bpftrace three times; the first
# also builds the function sets. BenchmarkMultiStart runs beside them, a
# fresh guest per mechanism or peer. 12, as BENCH_ROUNDS: the paired
# interval then leaves out one disturbed round (bench/README.md).
BENCH_MULTI_ROUNDS ?= 12
# The function sets of BenchmarkMultiStart (empty: n1 ... n10000 and all).
BENCH_SIZES ?=
# bench-multi's limit of each of its guests, seconds.
BENCH_MULTI_TIMEOUT ?= 7200
# Guests side by side at most (empty: 2 under icount on 2 host CPUs or more).
BENCH_GUESTS ?=
BENCH_BENCHTIME ?= 20000x
BENCH_MECHANISMS ?=
# Guest CPUs (empty: the family's, GuestCPUs in bench/report/family.go).
BENCH_CPUS ?=
BENCH_SETTLE ?= 100ms
BENCH_QUIET_WAIT ?= 0
BENCH_TIMEOUT ?= 3600
BENCH_RESULTS ?= results

BENCH_ENV = BENCH_HOST=$(BENCH_HOST) BENCH_CLOCK=$(BENCH_CLOCK) BENCH_ROUNDS=$(BENCH_ROUNDS) \
	BENCH_BENCHTIME=$(BENCH_BENCHTIME) BENCH_MECHANISMS=$(BENCH_MECHANISMS) BENCH_SIZES=$(BENCH_SIZES) \
	BENCH_CPUS=$(BENCH_CPUS) BENCH_GUESTS=$(BENCH_GUESTS) BENCH_SETTLE=$(BENCH_SETTLE) \
	BENCH_QUIET_WAIT=$(BENCH_QUIET_WAIT) \
	BENCH_TIMEOUT=$(BENCH_TIMEOUT) BENCH_RESULTS=$(BENCH_RESULTS)

.PHONY: bench bench-peers bench-multi bench-report peer-root peers-test peers-conformance

# The guest targets below boot the kernel TEST_KERNEL selects (the
# Makefile's; vm/kernel.sh fails naming one it cannot fetch whole, such as
# an image-only one) and run amd64 guests only: a kernel named must be the
# kernel measured, or an error.
BENCH_GUEST_GOALS := bench bench-peers bench-multi peers-test peers-conformance
ifneq ($(filter $(BENCH_GUEST_GOALS),$(MAKECMDGOALS)),)
ifneq ($(ARCH),amd64)
$(error $(filter $(BENCH_GUEST_GOALS),$(MAKECMDGOALS)) runs on amd64 only, not ARCH=$(ARCH))
endif
endif
GUEST_KERNEL = $(if $(filter 1,$(BENCH_HOST)),,kdir="$$(vm/kernel.sh $(TEST_KERNEL))" \
	&& export TRACEBENCH_KERNEL_DIR="$$kdir" &&)

# The runner and report writer, built, not `go run`: its exit status tells a
# run that dropped events (3) from a failure (1).
$(BIN)/bench: FORCE
	$(GO) build -o $@ ./cmd/bench

## peer-root: build the Debian root with the peer tools (funclatency, bpftrace, perf) into .cache/ once
peer-root:
	vm/peer-root.sh >/dev/null

## bench: overhead benchmarks in the Linux 7.x guest (BENCH_HOST=1: this kernel) -> results/<kernel>/
# The guest needs vm/deps.sh's tools and the kernel; the host run neither.
bench: $(if $(filter 1,$(BENCH_HOST)),,deps kernel) $(BIN)/bench
	$(GUEST_KERNEL) $(BENCH_ENV) $(BIN)/bench run

## bench-peers: the peer tools beside tracebench's mechanisms in the guest -> results/<kernel>/peers/
bench-peers: $(if $(filter 1,$(BENCH_HOST)),,deps kernel) peer-root $(BIN)/bench
	$(GUEST_KERNEL) $(BENCH_ENV) BENCH_SUITE=peers BENCH_ROUNDS=$(BENCH_PEER_ROUNDS) $(BIN)/bench run

## bench-multi: many functions per tracer in the guest, the peers' wildcards (bpftrace, bcc) beside them -> results/<kernel>/multi/
bench-multi: $(if $(filter 1,$(BENCH_HOST)),,deps kernel) peer-root $(BIN)/bench
	$(GUEST_KERNEL) $(BENCH_ENV) BENCH_SUITE=multi BENCH_ROUNDS=$(BENCH_MULTI_ROUNDS) BENCH_TIMEOUT=$(BENCH_MULTI_TIMEOUT) $(BIN)/bench run

# Every report: results/<kernel>/ and each family's directory below it,
# the perf matrix's (results/perf-matrix/<kernel>/growth/) too.
BENCH_RAW = $(wildcard $(BENCH_RESULTS)/*/raw.txt $(BENCH_RESULTS)/*/*/raw.txt $(BENCH_RESULTS)/*/*/*/raw.txt)

## bench-report: regenerate every results/<kernel>/ report from its raw.txt and meta.txt
bench-report: $(BIN)/bench
	$(if $(BENCH_RAW),$(BIN)/bench report $(patsubst %/,%,$(dir $(BENCH_RAW))),@echo "bench-report: no $(BENCH_RESULTS)/*/raw.txt; run make bench first" >&2; exit 1)

## peers-test: tracebench and the peer tools agree on one workload (guest, icount clock)
peers-test: deps kernel peer-root
	CGO_ENABLED=0 $(GO) test -c -o $(BIN)/peers.test ./peers
	$(GUEST_KERNEL) TRACEBENCH_PEER_ROOT="$$(vm/peer-root.sh)" vm/run.sh --icount --timeout 2700 -- \
		$(BIN)/peers.test -test.run TestAgreement -test.v -test.timeout 40m

## peers-conformance: every peer mode and tracebench's mechanisms on the conformance rows (guest, icount) -> results/<kernel>/peers/CONFORMANCE.md
# 3G: the row of 103400 threads made one after another peaks at 650 MiB in
# its helper. The test prints each row's progress and time.
peers-conformance: deps kernel peer-root
	CGO_ENABLED=0 $(GO) test -c -o $(BIN)/peers.test ./peers
	$(GUEST_KERNEL) TRACEBENCH_PEER_ROOT="$$(vm/peer-root.sh)" vm/run.sh --icount --memory 3G --timeout 3600 -- \
		$(BIN)/peers.test -test.run TestConformance -test.v -test.timeout 55m \
		-peers.conformance.results $(BENCH_RESULTS)

# The kernels `make bench-kernels` measures: every row of
# matrix/kernels.tsv whose guest bench run boots under icount (`bench
# kernels --list`, asked once: "full" rows, less those known to hang at
# boot); a comma-separated list of vm/kernel.sh selectors replaces it.
# Each kernel's run goes to BENCH_KERNELS_RESULTS/<uname -r>/, replacing an
# earlier run of that release only (a newer release of a row adds a
# directory: remove the old one), so a CI job per kernel
# (BENCH_KERNELS=<one>) and a merge of their directories make the same
# report.
BENCH_KERNELS ?= $(eval BENCH_KERNELS := $$(shell $(GO) run ./cmd/bench kernels --list))$(BENCH_KERNELS)
BENCH_KERNELS_RESULTS ?= results/perf-matrix
# Rounds per kernel: under icount rounds agree within 1%, and 6 is the
# fewest with an exact 95% signed-rank interval.
BENCH_KERNELS_ROUNDS ?= 6
# The families each kernel runs: overhead (per call) and growth (the multi
# family reduced: read path, Start and Close at n1 ... n10000).
BENCH_KERNELS_SUITES ?= overhead growth
# Kernels measured side by side (one guest each, icount).
BENCH_KERNELS_JOBS ?= $(shell n=$$(nproc); echo $$((n < 2 ? 1 : 2)))
bench_kernel_list = $(strip $(subst $(comma), ,$(BENCH_KERNELS)))
bench_kernels_dir = $(patsubst %/,%,$(BENCH_KERNELS_RESULTS))
comma := ,

.PHONY: bench-kernels bench-kernel bench-kernels-merge

## bench-kernels: the overhead and growth families on every kernel of BENCH_KERNELS (icount, one guest per kernel, BENCH_KERNELS_JOBS side by side) -> results/perf-matrix/<kernel>/, then results/perf-matrix.md
bench-kernels: deps $(BIN)/bench
	@[ -n "$(bench_kernel_list)" ] || { echo "bench-kernels: no kernel to measure: BENCH_KERNELS is empty (bench kernels --list failed?)" >&2; exit 2; }
	@echo "== bench-kernels: $(words $(bench_kernel_list)) kernels, $(BENCH_KERNELS_ROUNDS) rounds each, $(BENCH_KERNELS_JOBS) at a time: $(bench_kernel_list)"
	@for k in $(bench_kernel_list); do vm/kernel.sh "$$k" >/dev/null || exit 1; done
	@start=$$(date +%s); printf '%s\n' $(bench_kernel_list) | \
		xargs -P $(BENCH_KERNELS_JOBS) -I{} $(MAKE) --no-print-directory bench-kernel BENCH_KERNEL={} BENCH_KERNELS_BUILT=1; rc=$$?; \
	echo "== bench-kernels: the kernels' runs ended with status $$rc after $$(( $$(date +%s) - start )) s"; \
	$(MAKE) --no-print-directory bench-kernels-merge BENCH_KERNELS_BUILT=1 || rc=1; exit $$rc

# bench-kernel: one kernel's run (BENCH_KERNEL, a selector) of each family
# of BENCH_KERNELS_SUITES, a failed one not stopping the next (status 1
# then), its output lines prefixed with the selector and family; under
# bench-kernels, with the binary it built once (BENCH_KERNELS_BUILT), not
# rebuilt while another runs it.
bench-kernel: $(if $(BENCH_KERNELS_BUILT),,$(BIN)/bench)
	@[ -n "$(BENCH_KERNEL)" ] || { echo "bench-kernel: BENCH_KERNEL (a vm/kernel.sh selector) is empty" >&2; exit 2; }
	@set -o pipefail; kdir="$$(vm/kernel.sh '$(BENCH_KERNEL)')" && export TRACEBENCH_KERNEL_DIR="$$kdir" && rc=0 && \
	for suite in $(BENCH_KERNELS_SUITES); do \
		$(BENCH_ENV) BENCH_SUITE=$$suite BENCH_CLOCK=icount BENCH_GUESTS=1 BENCH_ROUNDS=$(BENCH_KERNELS_ROUNDS) \
		BENCH_RESULTS='$(bench_kernels_dir)' $(BIN)/bench run 2>&1 | sed -u "s|^|[$(BENCH_KERNEL) $$suite] |" || rc=1; done; exit $$rc

## bench-kernels-merge: results/perf-matrix.md from every run below BENCH_KERNELS_RESULTS (e.g. CI jobs' artifacts)
bench-kernels-merge: $(if $(BENCH_KERNELS_BUILT),,$(BIN)/bench)
	$(BIN)/bench kernels '$(bench_kernels_dir)' '$(bench_kernels_dir).md'
