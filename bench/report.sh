#!/usr/bin/env bash
# bench/report.sh DIR...
#
# (Re)generate the report in each results directory DIR from its raw.txt
# and meta.txt: README.md and overhead.svg (cmd/benchreport), and
# benchstat's comparisons of every mechanism against baseline
# (benchstat-vs-baseline.txt) and against fentry-fexit
# (benchstat-vs-fentry-fexit.txt). Without an overhead to compare (e.g.
# every mechanism skipped on this kernel) README.md says why and there is
# neither chart nor benchstat file; that is no error. A run that dropped
# events is no comparison: its report is written in full and says so, and
# report.sh exits 3 after all DIRs (1 if a report could not be written).
# Runs on the host; needs only Go.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="/usr/local/go/bin:$PATH"

if (($# == 0)) || [[ "$1" == -h || "$1" == --help ]]; then
	sed -n '2,15s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
	(($# > 0)) && exit 0
	exit 2
fi

# Built once, not `go run`, whose exit status is 1 for any failure: 3
# (events dropped, report written) must be told apart.
BIN="$(mktemp -d)"
# shellcheck disable=SC2064 # expand BIN now
trap "rm -rf '$BIN'" EXIT
(cd "$REPO" && go build -o "$BIN/benchreport" ./cmd/benchreport)

# report DIR: write DIR's report; returns benchreport's status (0 or 3).
report() {
	local dir tmp rc=0
	dir="$(cd "$1" && pwd)"
	tmp="$(mktemp -d)"
	# shellcheck disable=SC2064 # expand tmp now
	trap "rm -rf '$tmp'" RETURN
	(cd "$REPO" && "$BIN/benchreport" -dir "$dir" -benchstat-dir "$tmp") || rc=$?
	((rc == 0 || rc == 3)) || exit "$rc"
	# benchreport writes benchstat's inputs only when there is an overhead
	# to compare (otherwise it removes old comparisons and says why).
	if [[ -f "$tmp/vs-baseline.txt" ]]; then
		# Rows are cases, columns mechanisms; benchstat compares each column
		# with the first, which the inputs put first. Only ns/op (benchstat's
		# sec/op) is compared with baseline: baseline has no events.
		(cd "$REPO" && go tool benchstat -filter '.name:VFSRead .unit:sec/op' -row /case -col /mechanism "$tmp/vs-baseline.txt") >"$dir/benchstat-vs-baseline.txt"
		(cd "$REPO" && go tool benchstat -row .name,/case -col /mechanism "$tmp/vs-fentry-fexit.txt") >"$dir/benchstat-vs-fentry-fexit.txt"
	fi
	echo "bench: report written to $dir" >&2
	return "$rc"
}

status=0
for d; do
	[[ -f "$d/raw.txt" ]] || { echo "bench: $d/raw.txt does not exist" >&2; exit 1; }
	report "$d" || status=$?
done
exit "$status"
