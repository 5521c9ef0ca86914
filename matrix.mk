# matrix.mk: the kernel matrix (matrix/README.md). Included by the Makefile,
# which puts Go on PATH and defines `deps`, BIN and $(BIN)/scenarios.test.
#
#   make matrix                              every kernel of matrix/kernels.tsv
#   make matrix MATRIX_KERNELS=trixie:6.12   a subset (comma-separated selectors)
#   make matrix MATRIX_QUIET_WAIT=20m        first wait for other guests to end
#
# Not part of `make test`: it boots one guest per kernel in sequence (20-25
# minutes under single-threaded TCG on an otherwise idle 2-core host); CI runs only sid's
# newest 7.x kernel (vm/kernel.sh's default), through `make test`. The exit
# status is 1 when a kernel differs from matrix/kernels.tsv or could not be
# fetched or booted.

MATRIX_KERNELS ?=
MATRIX_QUIET_WAIT ?= 0s
MATRIX_TIMEOUT ?= 20m
MATRIX_OUT ?= results/matrix.md

.PHONY: matrix

## matrix: the scenarios in a guest per kernel of matrix/kernels.tsv -> results/matrix.md
matrix: deps $(BIN)/scenarios.test
	$(GO) run ./cmd/matrix -bin $(BIN)/scenarios.test -out $(MATRIX_OUT) \
		-only '$(MATRIX_KERNELS)' -quiet-wait $(MATRIX_QUIET_WAIT) -timeout $(MATRIX_TIMEOUT)
