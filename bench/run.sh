#!/usr/bin/env bash
# bench/run.sh: build the overhead benchmarks, run them, write results/<kernel>/.
#
# Builds ./bench into a static test binary on the host, runs it
# BENCH_ROUNDS times (bench/rounds.sh) in the Linux 7.x guest through
# vm/run.sh, or on this machine's kernel with BENCH_HOST=1 (root needed;
# mechanisms the kernel lacks are skipped with the reason), then moves the
# raw output and the run's metadata to results/<kernel>/ and generates the
# report there (bench/report.sh). A failed sub-benchmark makes the run fail;
# skipped ones do not, even if no mechanism could run on the kernel (the
# report then says so and lists why, with neither chart nor benchstat).
#
# Environment (the Makefile passes its variables of the same names):
#   BENCH_HOST=1          run on the host kernel instead of the guest
#   BENCH_CLOCK=C         the guest's clock: icount (default: QEMU -icount,
#                         1 ns of guest time per guest instruction, so ns/op
#                         counts instructions) or wall (TCG wall time); with
#                         BENCH_HOST=1 only wall (the default there)
#   BENCH_ROUNDS=N        rounds, one process each (default 12: benchstat
#                         needs >= 6 for an interval, the signed-rank test
#                         >= 6 for p < 0.05; the committed 12-round run took 465 s)
#   BENCH_BENCHTIME=Nx    read(2) calls per sub-benchmark and round (default 20000x)
#   BENCH_MECHANISMS=a,b  measure only these mechanisms (default: all registered)
#   BENCH_SUITE=S         overhead (default: BenchmarkVFSRead and BenchmarkBPFStats,
#                         into results/<kernel>/) or peers (BenchmarkPeers: the
#                         peer tools, whose start-up under TCG takes minutes per
#                         round, into results/<kernel>/peers/, with vm/peer-root.sh)
#   BENCH_SETTLE=D        idle D (a Go duration, e.g. 100ms) after a garbage
#                         collection before each timed loop (default 100ms; 0: none)
#   BENCH_CPUS=N          guest CPUs (default 2: with 1, the kernel's and Go's
#                         background work interrupts the loop's CPU, and rounds
#                         spread 2-9% under icount instead of 0.5%)
#   BENCH_QUIET_WAIT=S    first wait up to S seconds for other QEMU processes
#                         on the host to end (default 0); their count and the
#                         host load are recorded either way
#   BENCH_TIMEOUT=S       kill the guest after S seconds (default 3600; the committed
#                         runs took 465 s, and 878 s for the peers' 6 rounds)
#   BENCH_RESULTS=DIR     parent of the <kernel> directories (default results)
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
export PATH="/usr/local/go/bin:$PATH"

HOST="${BENCH_HOST:-0}"
CLOCK="${BENCH_CLOCK:-}"
ROUNDS="${BENCH_ROUNDS:-12}"
BENCHTIME="${BENCH_BENCHTIME:-20000x}"
QUIET_WAIT="${BENCH_QUIET_WAIT:-0}"
TIMEOUT="${BENCH_TIMEOUT:-3600}"
RESULTS="${BENCH_RESULTS:-results}"
MECHANISMS="${BENCH_MECHANISMS:-}"
SUITE="${BENCH_SUITE:-overhead}"
CPUS="${BENCH_CPUS:-2}"
SETTLE="${BENCH_SETTLE:-100ms}"
# Seconds between samples of the host's load while the benchmarks run.
SAMPLE_INTERVAL=15

log() { printf 'bench: %s\n' "$*" >&2; }
die() {
	log "error: $*"
	exit 1
}

[[ "$HOST" =~ ^[01]$ ]] || die "BENCH_HOST='$HOST' is not 0 or 1"
if [[ -z "$CLOCK" ]]; then
	CLOCK=icount
	((HOST)) && CLOCK=wall
fi
[[ "$CLOCK" =~ ^(icount|wall)$ ]] || die "BENCH_CLOCK='$CLOCK' is neither icount nor wall"
((HOST)) && [[ "$CLOCK" == icount ]] && die "BENCH_CLOCK=icount needs the guest; BENCH_HOST=1 measures wall time"
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "BENCH_ROUNDS='$ROUNDS' is not a positive integer"
[[ "$BENCHTIME" =~ ^[1-9][0-9]*x$ ]] || die "BENCH_BENCHTIME='$BENCHTIME' is not an iteration count like 40000x (a fixed count keeps the run's length predictable)"
[[ "$SETTLE" =~ ^(0|[0-9]+(ns|us|ms|s))$ ]] || die "BENCH_SETTLE='$SETTLE' is not 0 or a duration like 100ms"
[[ "$CPUS" =~ ^[1-9][0-9]*$ ]] || die "BENCH_CPUS='$CPUS' is not a positive integer"
[[ "$QUIET_WAIT" =~ ^[0-9]+$ ]] || die "BENCH_QUIET_WAIT='$QUIET_WAIT' is not a whole number of seconds"
[[ "$TIMEOUT" =~ ^[0-9]+$ ]] || die "BENCH_TIMEOUT='$TIMEOUT' is not a whole number of seconds"
case "$SUITE" in
overhead) PATTERN='^Benchmark(VFSRead|BPFStats)$' SUBDIR= ;;
peers) PATTERN='^BenchmarkPeers$' SUBDIR=/peers ;;
*) die "BENCH_SUITE='$SUITE' is neither overhead nor peers" ;;
esac

# ours PID: true if PID descends from this script (our own guest's QEMU).
ours() {
	local p="$1"
	while [[ -n "$p" && "$p" -gt 1 ]]; do
		[[ "$p" == "$$" ]] && return 0
		p="$(ps -o ppid= -p "$p" 2>/dev/null | tr -d ' ')" || return 1
	done
	return 1
}

# other_qemu: number of QEMU system emulators running that are not ours.
other_qemu() {
	local n=0 pid
	for pid in $(pgrep -f '^[^ ]*qemu-system' || true); do
		ours "$pid" || n=$((n + 1))
	done
	echo "$n"
}

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# wait_quiet: wait up to QUIET_WAIT seconds for other guests to end, since
# they share the host's CPUs with ours. Prints the seconds waited.
wait_quiet() {
	local start=$SECONDS
	while (($(other_qemu) > 0 && SECONDS - start < QUIET_WAIT)); do
		sleep 10 # polling the condition, bounded by QUIET_WAIT
	done
	echo $((SECONDS - start))
}

# sample_host FILE: append "<1-min load> <other QEMU count>" every
# SAMPLE_INTERVAL seconds until killed.
sample_host() {
	while true; do
		echo "$(cut -d' ' -f1 /proc/loadavg) $(other_qemu)" >>"$1"
		sleep "$SAMPLE_INTERVAL"
	done
}

# max_column FILE N: the largest value in column N of FILE.
max_column() { awk -v c="$2" 'NR == 1 || $c > m { m = $c } END { print m }' "$1"; }

# clock_desc: the clock the figures are in, for meta.txt.
clock_desc() {
	if [[ "$CLOCK" == icount ]]; then
		echo "icount (QEMU -icount shift=0,sleep=on: guest time advances 1 ns per executed guest instruction)"
	elif ((HOST)); then
		echo "wall (this machine's clock)"
	else
		echo "wall (the guest's clock under TCG emulation)"
	fi
}

main() {
	if ((HOST)) && [[ $EUID -ne 0 ]]; then
		die "BENCH_HOST=1 needs root to load BPF programs"
	fi
	local stage
	mkdir -p .cache/bench
	stage="$(mktemp -d "$REPO/.cache/bench/run.XXXXXX")"
	log "building the benchmark binary in $stage"
	CGO_ENABLED=0 go test -c -o "$stage/bench.test" ./bench

	local waited
	if ((QUIET_WAIT > 0)); then
		log "waiting up to ${QUIET_WAIT}s for other QEMU processes to end ($(other_qemu) running)"
	fi
	waited="$(wait_quiet)"

	local meta="$stage/meta.txt" where=guest
	((HOST)) && where="host ($(uname -r))"
	{
		echo "where: $where"
		echo "clock: $(clock_desc)"
		echo "date-start: $(date -u +%FT%TZ)"
		echo "suite: $SUITE ($PATTERN)"
		echo "rounds: $ROUNDS"
		echo "benchtime: $BENCHTIME"
		echo "mechanisms: ${MECHANISMS:-all registered}"
		((HOST)) || echo "guest-cpus: $CPUS"
		echo "settle: $SETTLE"
		echo "host-cpus: $(nproc)"
		echo "host-load-start: $(loadavg)"
		echo "other-qemu-start: $(other_qemu)"
		echo "quiet-wait-s: $waited"
	} >"$meta"

	if [[ "$SUITE" == peers ]]; then
		# The peer tools' root (vm/peer-root.sh); without it the peers skip with the reason.
		TRACEBENCH_PEER_ROOT="$(vm/peer-root.sh)" && export TRACEBENCH_PEER_ROOT || log "warning: no peer root; the peer rows are skipped"
	fi
	local rounds=(bench/rounds.sh "$stage/bench.test" "$stage/raw.txt" "$ROUNDS" "$BENCHTIME" "$PATTERN")
	[[ -n "$MECHANISMS" ]] && rounds+=("-tracebench.mechanisms=$MECHANISMS")
	rounds+=("-tracebench.settle=$SETTLE")
	sample_host "$stage/samples" &
	local sampler=$! start=$SECONDS rc=0
	if ((HOST)); then
		"${rounds[@]}" || rc=$?
	else
		local vm=(vm/run.sh --timeout "$TIMEOUT" --cpus "$CPUS")
		[[ "$CLOCK" == icount ]] && vm+=(--icount)
		"${vm[@]}" -- "${rounds[@]}" || rc=$?
	fi
	kill "$sampler"
	wait "$sampler" 2>/dev/null || true
	{
		echo "date-end: $(date -u +%FT%TZ)"
		echo "duration-s: $((SECONDS - start))"
		echo "host-load-end: $(loadavg)"
		echo "other-qemu-end: $(other_qemu)"
		echo "host-load-1min-max: $(max_column "$stage/samples" 1) (sampled every ${SAMPLE_INTERVAL}s)"
		echo "other-qemu-max: $(max_column "$stage/samples" 2) (sampled every ${SAMPLE_INTERVAL}s)"
	} >>"$meta"
	echo "exit-status: $rc" >>"$meta"

	local kernel dest
	kernel="$(sed -n 's/^tracebench-kernel: //p' "$stage/raw.txt" 2>/dev/null | head -n1)"
	[[ -n "$kernel" && "$kernel" != */* ]] || die "the run (status $rc) left no tracebench-kernel line in $stage/raw.txt"
	dest="$RESULTS/$kernel$SUBDIR"
	mkdir -p "$dest"
	mv -f "$stage/raw.txt" "$stage/meta.txt" "$dest/"
	rm -rf "$stage"
	local report_rc=0
	bench/report.sh "$dest" || report_rc=$?
	log "report: $dest/README.md"
	# Failed sub-benchmarks are listed in the report; the run still fails.
	((rc == 0)) || die "the benchmark run failed with status $rc (see Failed in $dest/README.md)"
	((report_rc != 3)) || die "events were dropped, so the run is no comparison (see the top of $dest/README.md)"
	((report_rc == 0)) || die "writing the report failed with status $report_rc"
}

case "${1:-}" in
"") main ;;
-h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}" ;;
*)
	log "unexpected argument '$1' (bench/run.sh takes none; see --help)"
	exit 2
	;;
esac
