# matrix.mk: the kernel matrix (matrix/README.md). Included by the Makefile,
# which puts Go on PATH and defines `deps`, BIN and $(BIN)/scenarios.test.
#
#   make matrix                              every kernel of matrix/kernels.tsv
#   make matrix MATRIX_KERNELS=trixie:6.12   a subset (comma-separated selectors):
#                                            replaces its columns, keeps the others
#   make matrix MATRIX_QUIET_WAIT=20m        first wait for other guests to end
#   make matrix MATRIX_GUESTS=2              each kernel over 2 guests side by side
#   make matrix MATRIX_KERNELS=sid:7 MATRIX_OUTCOMES=shard MATRIX_OUT=
#                                            one CI job: only shard/sid_7.json
#   make matrix-merge MATRIX_OUTCOMES=shards every job's outcome files -> results/matrix.md
#
# Not part of `make test`: it boots one guest per kernel in sequence (the
# README says how long the last runs took); CI runs only sid's newest 7.x kernel (vm/kernel.sh's
# default), through `make test`. Each kernel's outcomes go to its own file
# in MATRIX_OUTCOMES, and the report merges every file there. The exit
# status is 1 when a kernel run differs from matrix/kernels.tsv or could not
# be fetched or booted (matrix-merge: any kernel, or a missing outcome file).

MATRIX_KERNELS ?=
MATRIX_QUIET_WAIT ?= 0s
MATRIX_TIMEOUT ?= 20m
MATRIX_OUT ?= results/matrix.md
MATRIX_OUTCOMES ?= results/matrix
# Guests each kernel's run is divided over, side by side (at most the
# host's CPUs: each is a single-threaded emulator).
MATRIX_GUESTS ?= 1

# The architectures of the selected kernels (all rows' without
# MATRIX_KERNELS) other than the host's, whose scenario binaries the run
# needs; asked of cmd/matrix, which reads kernels.tsv, only for `make matrix`.
ifneq ($(filter matrix,$(MAKECMDGOALS)),)
MATRIX_ARCHES := $(shell $(GO) run ./cmd/matrix -arches -only '$(MATRIX_KERNELS)')
endif

.PHONY: matrix matrix-merge

## matrix: the scenarios in a guest per kernel of matrix/kernels.tsv -> results/matrix/*.json, results/matrix.md
matrix: deps $(BIN)/scenarios.test $(foreach a,$(MATRIX_ARCHES),$(BIN)/$(a)/scenarios.test)
	$(GO) run ./cmd/matrix -bin $(BIN)/scenarios.test -out '$(MATRIX_OUT)' -outcomes '$(MATRIX_OUTCOMES)' \
		-only '$(MATRIX_KERNELS)' -quiet-wait $(MATRIX_QUIET_WAIT) -timeout $(MATRIX_TIMEOUT) -guests $(MATRIX_GUESTS)

## matrix-merge: merge the outcome files below MATRIX_OUTCOMES (e.g. CI jobs' artifacts) -> results/matrix.md
matrix-merge:
	$(GO) run ./cmd/matrix -merge -outcomes '$(MATRIX_OUTCOMES)' -out '$(MATRIX_OUT)'
