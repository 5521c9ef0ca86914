#!/bin/sh
# Fake vm/run.sh for cmd/matrix's tests: records its arguments, then acts
# as the kernel's suite says: ok prints an outcome line for fsession,
# noboot never reports a status, fail prints a failed cell and exits 1,
# silent exits 0 without an outcome line.
set -e
echo "$0 $*" >>"$FAKE_CACHE/args"
abi=$(sed -n 's/^ABI=//p' "$2/tracebench-kernel.env")
suite=$(sed -n 's/^SUITE=//p' "$2/tracebench-kernel.env")
echo "vm: kernel=$abi accel=tcg" >&2
line() {
	echo "=== RUN   TestScenarios"
	echo "--- $2: TestScenarios (1.00s)"
	printf 'tracebench-outcomes: {"kernel":"%s","accel":"tcg","mechanisms":["fsession"],"scenarios":["zero-threshold"],"status":{"fsession":{"zero-threshold":"%s"}},"reasons":{},"skip_all":""}\n' "$abi" "$1"
}
case $suite in
ok) line PASS PASS ;;
fail) line FAIL FAIL; exit 1 ;;
noboot) echo "vm: error: the guest did not boot to the command (vng exited 255 after 20s)" >&2; exit 125 ;;
silent) echo "PASS" ;;
esac
