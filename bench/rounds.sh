#!/usr/bin/env bash
# bench/rounds.sh BINARY OUT ROUNDS BENCHTIME PATTERN [TEST-BINARY-FLAGS...]
#
# Run the benchmark test binary BINARY (built from ./bench) ROUNDS times,
# each in a fresh process with -test.count 1 and the sub-benchmark order
# rotated by the round number, appending the -v output to OUT (and to
# stdout for progress). `go test -count N` would instead repeat each
# sub-benchmark N times in a row, so drift during the run would land on
# one mechanism; here every round visits every mechanism (A B C A B C ...).
# BENCHTIME is go test's -benchtime, e.g. 50000x, PATTERN its -bench
# (the benchmarks to run, e.g. '^BenchmarkPeers$'); further flags go to
# the binary (e.g. -tracebench.mechanisms=fsession,fentry-fexit).
# Runs wherever it is started: `go run ./cmd/bench run` starts it in the
# guest. A failing round does not stop the others (its failures are in OUT
# for the report); the exit status is then that of the last failing round.
set -euo pipefail

if (($# < 5)); then
	sed -n '2,15s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
	exit 2
fi
bin="$1" out="$2" rounds="$3" benchtime="$4" pattern="$5"
shift 5
[[ -x "$bin" ]] || { echo "bench: $bin is not an executable" >&2; exit 2; }
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "bench: rounds '$rounds' is not a positive integer" >&2; exit 2; }
[[ -n "$pattern" && "$pattern" != -* ]] || { echo "bench: '$pattern' is not a -test.bench pattern" >&2; exit 2; }

: >"$out"
status=0
for ((round = 0; round < rounds; round++)); do
	echo "bench: round $((round + 1))/$rounds started $(date -u +%FT%TZ)" >&2
	rc=0
	"$bin" -test.run '^$' -test.bench "$pattern" -test.benchtime "$benchtime" -test.count 1 -test.v \
		-tracebench.round "$round" "$@" | tee -a "$out" || rc=$?
	if ((rc != 0)); then
		echo "bench: round $((round + 1)) failed with status $rc" >&2
		status=$rc
	fi
done
exit "$status"
