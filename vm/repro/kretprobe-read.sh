#!/usr/bin/env bash
# vm/repro/kretprobe-read.sh [options] [-- GUEST-ARGS...]
#
# Reproduce, without BPF and without tracebench's tracers, the kernel panic
# tracebench's kprobe-kretprobe mechanism caused on Debian sid's 7.2.13
# ppc64el kernels ("stack-protector: Kernel stack is corrupted in:
# ksys_read+0x150/0x160", matrix/kernels.tsv): boot each kernel with
# vm/run-initramfs.sh and run vm/repro/kretprobe-read (a static Go
# program, built here for the kernel's architecture) in it. The program
# defines a tracefs kretprobe on vfs_read ("r:" in kprobe_events), enables
# it and, for a number of rounds, SIGKILLs a child whose threads sleep in
# read(2) of a pipe, wakes its own threads sleeping in read(2), and
# unregisters the probe while they sleep (its --help, or the comment in
# vm/repro/kretprobe-read/main.go, says more).
#
# Prints one verdict line per kernel: "survived" (with the rounds run and
# the probe's hit count), "PANIC" (with the console's panic, oops and call
# trace lines, or the start of a report after which the kernel rebooted,
# which ends the guest), "HUNG" (the timeout stopped the guest without a
# report on its console), "DIED" (the guest ended mid-run without one) or
# "ERROR". A panicked guest often spins instead of rebooting, so the
# script stops it 30 s after its console shows a panic or an oops, time
# for the call trace. Exit status: 0 if every kernel survived, 1 if one
# panicked, hung or died, else 2 on an error (usage, build, boot, the
# program's own).
#
#   --kernel SEL     a vm/kernel.sh selector; repeatable (default:
#                    sid:7:powerpc64le and sid:7:powerpc64le-64k)
#   --cpus N         guest CPUs (default 2)
#   --timeout SECS   stop a guest after SECS (default 900)
#   --keep DIR       keep each guest's output and console in DIR
#
# GUEST-ARGS go to the program, e.g. `-- -probe kprobe` (an entry probe
# instead), `-- -probe none` (no probe: the control), `-- -phases kill
# -iterations 1000`. Every guest boot counts against the host's guests:
# run it as `/work/bin/guest-slot vm/repro/kretprobe-read.sh` where the
# host has such a wrapper.
set -euo pipefail
# shellcheck source=vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

SELECTORS=() CPUS=2 TIMEOUT=900 KEEP=""

error() {
	log "error: $*"
	exit 2
}

# value OPTION [VALUE]: fail unless OPTION was given a value.
value() {
	[[ $# -ge 2 && -n "$2" && "$2" != --* ]] || { log "$1 needs a value"; usage 2; }
}
# Lines of a guest's console that tell how it died: PANIC_RE the verdict
# and the watcher's trigger, FIRST_RE where the printed report starts,
# LATER_RE later lines worth printing.
PANIC_RE='Kernel panic|Oops:|BUG:|kernel BUG'
FIRST_RE="$PANIC_RE|corruption|cut here"
LATER_RE="$PANIC_RE|LOCKUP"

# descendants PID: the processes below PID, deepest last.
descendants() {
	local c
	for c in $(pgrep -P "$1" || true); do
		echo "$c"
		descendants "$c"
	done
}

# watch_guest RUNNER_PID: once the runner's QEMU has started, poll its
# console file; when it shows a panic or an oops (after which the guest
# may hang), wait for the call trace and stop that QEMU (the runner then
# reports no status).
watch_guest() {
	local runner="$1" qemu="" console="" p waited=0
	while kill -0 "$runner" 2>/dev/null; do
		if [[ -z "$qemu" ]]; then
			for p in $(descendants "$runner"); do
				if [[ "$(cat "/proc/$p/comm" 2>/dev/null)" == qemu-system-* ]]; then
					qemu="$p"
					console="$(tr '\0' '\n' <"/proc/$p/cmdline" | sed -n 's/^file:\(.*\/console\)$/\1/p' | head -n 1)"
				fi
			done
		elif [[ -n "$console" ]] && grep -aEq "$PANIC_RE" "$console" 2>/dev/null; then
			((waited++ < 30)) || {
				log "panic or oops on the console; stopping the guest (QEMU $qemu)"
				kill "$qemu" 2>/dev/null || true
				return
			}
		fi
		sleep 1
	done
}

# verdict LABEL OUT CONSOLE RC: print the verdict line for one guest and
# return 0 (survived), 1 (panicked or hung) or 2.
verdict() {
	local label="$1" out="$2" console="$3" rc="$4" last
	last="$(grep -a '^round ' "$out" | tail -n 1 || true)"
	if grep -aEq "$FIRST_RE" "$console"; then
		echo "$label: PANIC (last line of the program: ${last:-none}):"
		# The first report and what follows it, without register dumps, up
		# to the call trace's head; then every later panic, oops or lockup.
		awk -v first="$FIRST_RE" -v later="$LATER_RE" '
			!seen && $0 ~ first { seen = 1 }
			!seen || /GPR[0-9]+:/ { next }
			n < 30 { print "    " $0; n++; next }
			$0 ~ later { print "    " $0 }' "$console" | tr -d '\r'
		return 1
	fi
	if grep -aq '^RESULT: survived' "$out"; then
		echo "$label: survived: $(grep -a '^RESULT: survived' "$out" | sed 's/^RESULT: survived //'); $(grep -a '^profile: ' "$out" | tail -n 1)"
		return 0
	fi
	if ((rc == EXIT_TIMEOUT)); then
		echo "$label: HUNG: no panic on the console, stopped after ${TIMEOUT}s (last line of the program: ${last:-none}); console tail:"
		grep -av '^\s*$' "$console" | tail -n 15 | sed 's/^/    /' | tr -d '\r'
		return 1
	fi
	if ((rc == EXIT_NO_STATUS)) && [[ -n "$last" ]]; then
		echo "$label: DIED: the guest stopped in the middle of the run without a status or a kernel report on its console (last line of the program: $last)"
		return 1
	fi
	echo "$label: ERROR (runner status $rc; last line of the program: ${last:-none}): $(grep -a '^RESULT: error' "$out" || echo 'no result line')"
	return 2
}

main() {
	while (($#)); do
		case "$1" in
		--kernel) value "$@"; SELECTORS+=("$2"); shift ;;
		--cpus) value "$@"; CPUS="$2"; shift ;;
		--timeout) value "$@"; TIMEOUT="$2"; shift ;;
		--keep) value "$@"; KEEP="$2"; shift ;;
		-h | --help) usage 0 ;;
		--) shift; break ;;
		*) log "unexpected argument '$1'"; usage 2 ;;
		esac
		shift
	done
	((${#SELECTORS[@]})) || SELECTORS=(sid:7:powerpc64le sid:7:powerpc64le-64k)
	[[ "$TIMEOUT" =~ ^[1-9][0-9]*$ ]] || error "invalid timeout '$TIMEOUT'"
	[[ "$CPUS" =~ ^[1-9][0-9]*$ ]] || error "invalid CPU count '$CPUS'"
	need_cmd go pgrep
	cd "$REPO"
	local work sel dir arch goarch bin label rc status=0 v
	work="$(mktemp -d)"
	trap 'rm -rf "$work"' EXIT
	[[ -z "$KEEP" ]] || mkdir -p "$KEEP"
	for sel in "${SELECTORS[@]}"; do
		dir="$(vm/kernel.sh "$sel")" || error "no kernel for '$sel'"
		arch="$(sed -n 's/^ARCH=//p' "$dir/$KERNEL_MARKER")"
		case "$arch" in
		amd64 | arm64 | riscv64 | s390x) goarch="$arch" ;;
		ppc64el) goarch=ppc64le ;;
		*) error "kernel '$sel' is of architecture '$arch', which this script does not build for" ;;
		esac
		bin=".cache/bin/$arch/kretprobe-read"
		CGO_ENABLED=0 GOARCH="$goarch" go build -o "$bin" ./vm/repro/kretprobe-read || error "build for $goarch failed"
		label="$(basename "$dir") (cpus=$CPUS${*:+, $*})"
		log "$label: booting"
		rc=0
		vm/run-initramfs.sh --kernel "$dir" --cpus "$CPUS" --timeout "$TIMEOUT" --verbose -- "$bin" "$@" \
			>"$work/out" 2>"$work/console" &
		local runner=$!
		watch_guest "$runner" &
		local watcher=$!
		wait "$runner" || rc=$?
		wait "$watcher" || true
		v=0
		verdict "$label" "$work/out" "$work/console" "$rc" || v=$?
		# A panic or hang outweighs an error of another kernel.
		if ((v == 1 || (v == 2 && status == 0))); then
			status=$v
		fi
		if [[ -n "$KEEP" ]]; then
			cp "$work/out" "$KEEP/$(basename "$dir").out"
			cp "$work/console" "$KEEP/$(basename "$dir").console"
		fi
	done
	exit "$status"
}

main "$@"
