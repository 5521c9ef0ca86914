#!/bin/sh
# Fake vm/run.sh for cmd/matrix's tests: records its arguments, then acts
# as the kernel's suite says: ok prints an outcome line for fsession and
# fentry-fexit, noboot never reports a status, fail prints a failed
# fsession cell and exits 1, silent exits 0 without an outcome line, crash
# crashes the kernel in an fsession test unless TRACEBENCH_DISABLE (passed
# with --env) takes fsession out, which then skips; warn prints a kernel
# WARNING on the console during an fsession test, then outcomes as ok.
# A command that runs the CLI's tests (sh -c, a guest of a divided run)
# prints the CLI's result lines first (failing with suite clifail); the
# outcome line holds the mechanisms -tracebench.mechanisms names, and the
# other tests' row (bad-config) unless -test.run leaves them out.
set -e
echo "$0 $*" >>"$FAKE_CACHE/args"
abi=$(sed -n 's/^ABI=//p' "$2/tracebench-kernel.env")
suite=$(sed -n 's/^SUITE=//p' "$2/tracebench-kernel.env")
disable= mechanisms="fsession fentry-fexit" other=1 cli=0 scenarios=1
for arg; do
	case $arg in
	TRACEBENCH_DISABLE=*) disable=${arg#TRACEBENCH_DISABLE=} ;;
	*"tracebench-cli: start"*)
		cli=1
		case $arg in *scenarios.test*) ;; *) scenarios=0 ;; esac
		case $arg in *-test.run=*) other=0 ;; esac
		case $arg in *-tracebench.mechanisms=*)
			mechanisms=$(echo "$arg" | sed 's/.*-tracebench.mechanisms=\([^'"'"']*\).*/\1/' | tr , ' ') ;;
		esac
		;;
	-test.run=*) other=0 ;;
	-tracebench.mechanisms=*) mechanisms=$(echo "${arg#-tracebench.mechanisms=}" | tr , ' ') ;;
	esac
done
echo "vm: kernel=$abi accel=tcg" >&2
# outcomes FSESSION_STATUS [REASONS]: the test binary's last lines;
# fentry-fexit passes, REASONS are the JSON object's members.
outcomes() {
	top=PASS
	case $1 in FAIL) top=FAIL ;; esac
	if [ $cli = 1 ]; then
		echo "tracebench-cli: start"
		echo "--- PASS: TestTraceText (3.00s)"
		if [ "$suite" = clifail ]; then
			echo "--- FAIL: TestTraceJSON (1.00s)"
			echo "tracebench-cli: exit 1"
		else
			echo "tracebench-cli: exit 0"
		fi
	fi
	[ $scenarios = 1 ] || return 0
	if [ $other = 1 ]; then
		echo "--- PASS: TestBadConfig (2.00s)"
	fi
	echo "=== RUN   TestScenarios"
	names= status= sep= rows='"zero-threshold"'
	[ $other = 1 ] && rows='"bad-config","zero-threshold"'
	for m in fsession fentry-fexit; do
		cells= s=PASS
		[ $m = fsession ] && s=$1
		[ $other = 1 ] && cells='"bad-config":"PASS"'
		case " $mechanisms " in *" $m "*)
			cells="$cells${cells:+,}\"zero-threshold\":\"$s\""
			echo "    --- PASS: TestScenarios/$m (5.00s)"
			;;
		esac
		[ -n "$cells" ] || continue
		names="$names$sep\"$m\"" status="$status$sep\"$m\":{$cells}" sep=,
	done
	echo "--- $top: TestScenarios (1.00s)"
	printf 'tracebench-outcomes: {"kernel":"%s","accel":"tcg","mechanisms":[%s],"scenarios":[%s],"status":{%s},"reasons":{%s},"skip_all":""}\n' "$abi" "$names" "$rows" "$status" "${2:-}"
}
crash() {
	echo "=== RUN   TestScenarios/fsession/zero-threshold"
	echo "[   30.620816] Oops: int3: 0000 [#1] SMP NOPTI" >&2
	echo "[   30.623161] RIP: 0010:__schedule+0x30c/0x1080" >&2
	echo "[   30.633161] Kernel panic - not syncing: Fatal exception in interrupt" >&2
	echo "vm: error: the guest died while running the command" >&2
	exit 125
}
case $suite in
ok | clifail) outcomes PASS ;;
warn)
	echo "=== RUN   TestScenarios/fsession/drops"
	echo "[   41.002000] WARNING: CPU: 1 PID: 212 at kernel/bpf/ringbuf.c:100 bpf_ringbuf_submit+0x10/0x20" >&2
	outcomes PASS
	;;
fail) outcomes FAIL; exit 1 ;;
noboot) echo "vm: error: the guest did not boot to the command (vng exited 255 after 20s)" >&2; exit 125 ;;
silent) echo "PASS" ;;
crash)
	case $disable in
	fsession:*) outcomes SKIP "\"fsession\":\"fsession disabled by TRACEBENCH_DISABLE: ${disable#fsession: }\"" ;;
	*) crash ;;
	esac
	;;
esac
