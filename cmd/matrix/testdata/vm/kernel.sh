#!/bin/sh
# Fake vm/kernel.sh for cmd/matrix's tests: SUITE:VERSION names the
# behaviour (suite) and the ABI (version). "missing" fails to fetch.
set -e
suite=${1%%:*} abi=${1#*:}
if [ "$suite" = missing ]; then
	echo "vm: downloading nothing" >&2
	echo "vm: error: no complete amd64 kernel matching version '$abi' in suite '$suite'" >&2
	exit 1
fi
dir="$FAKE_CACHE/$abi"
mkdir -p "$dir"
printf 'ABI=%s\nPKG_VERSION=%s-1\nSUITE=%s\n' "$abi" "$abi" "$suite" >"$dir/tracebench-kernel.env"
echo "vm: kernel $abi ready" >&2
echo "$dir"
