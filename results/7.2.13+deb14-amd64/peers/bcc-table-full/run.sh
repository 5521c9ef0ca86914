#!/bin/sh
# run.sh: FINDINGS.md's bcc histogram-table reproduction, as it was run in
# the 7.2 guest: bcc's funclatency -F over the vfs_* functions for 15 s
# while find and cat walk sysfs and procfs, then the (function, log2 slot)
# pairs it printed, the calls in its histograms and its count: line.
#   TRACEBENCH_PEER_ROOT=$(vm/peer-root.sh) vm/run.sh --rwdir DIR -- DIR/run.sh
# (DIR: this directory). The peer root is mounted as peers/peer.go does.
set -eu
R=${TRACEBENCH_PEER_ROOT:?the peer root (vm/peer-root.sh)}
O=$(cd "$(dirname "$0")" && pwd)
rm -f "$O/out.txt"
unshare -m sh -c "set -e
mount -t proc proc $R/proc; mount -t sysfs sysfs $R/sys
mount -t tracefs tracefs $R/sys/kernel/tracing; mount -t debugfs debugfs $R/sys/kernel/debug
mount -t bpf bpf $R/sys/fs/bpf; mount -t devtmpfs devtmpfs $R/dev; mount -t tmpfs tmpfs $R/tmp
exec chroot $R env PYTHONUNBUFFERED=1 funclatency-bpfcc -F -r -d 15 'vfs_.*'" >"$O/out.txt" &
i=0
until grep -q '^Tracing' "$O/out.txt" 2>/dev/null; do
	i=$((i + 1)); [ $i -le 120 ] || { echo "funclatency did not attach in 120 s" >&2; exit 1; }
	sleep 1
done
for i in 1 2 3; do find /sys/kernel /proc/sys -ls >/dev/null 2>&1 || true; cat /proc/*/stat >/dev/null 2>&1 || true; done
wait
{
	echo "kernel: $(uname -r)"
	awk '$1 == "bpfcc-tools" { print $1 ": " $2 }' "$R/tracebench-peers.versions"
	awk '/^Tracing/ { f = $2 } /->/ { s += $5; if ($5 > 0) p++ } /count:/ { c = $NF }
		END { print "functions: " f; print "pairs: " p; print "in-histograms: " s; print "count: " c; print "in-no-histogram: " c - s }' "$O/out.txt"
} >"$O/summary.txt"
cat "$O/summary.txt"
