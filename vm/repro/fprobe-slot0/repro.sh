#!/bin/bash
# Reproduces WARNING kernel/trace/fprobe.c:683 (fprobe_return:
# fgraph_retrieve_data() returns NULL) with tracefs alone, no BPF, no
# tracebench. Run as root on a freshly booted 7.2 kernel, e.g. in the
# project's guest from the repository's root:
#   vm/run.sh -- vm/repro/fprobe-slot0/repro.sh
# (results/7.2.13+deb14-amd64/repro/fprobe-slot0.log is such a run).
#
# Claim tested: fgraph sets bit 0 in every kept frame's bitmap
# (function_graph_enter_regs: "set_bitmap(current, offset, bitmap | BIT(0))"),
# and with two fgraph_ops registered the return path calls the retfunc of
# every set bit, so the fgraph_ops in slot 0 gets its retfunc called for
# frames it never reserved data in. fprobe_return then finds no data and
# WARNs. Step 1 puts fprobe in slot 0 (first fgraph user after boot) and adds
# a function_graph tracer; step 2 is the control: the same, with fprobe
# re-registered into another slot.
#
# Env: SECS (default 20) seconds each step watches; OUT result directory.
set -u
OUT="${OUT:-$(mktemp -d)}"
SECS="${SECS:-20}"
HERE="$(cd "$(dirname "$0")" && pwd)"
T=/sys/kernel/tracing
mountpoint -q $T || mount -t tracefs tracefs $T
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug

log() { echo "repro2[$(cut -d' ' -f1 /proc/uptime)]: $*"; }
warns() { dmesg | grep -c 'WARNING: kernel/trace/fprobe.c:683'; }
slots() { python3 "$HERE/fgidx.py" "$@"; }

log "kernel $(uname -r)"
FUNCS="vfs_read ksys_read rw_verify_area fput mutex_lock mutex_unlock anon_pipe_read"
n=0
for f in $FUNCS; do
	echo "f:fpr/r_${n} $f%return" >>$T/dynamic_events && n=$((n + 1))
done
log "$n fprobe %return events defined (not enabled): $FUNCS"
slots "before anything"

LOADPIDS=()
(exec dd if=/dev/zero of=/dev/null bs=1 count=2000000000 2>/dev/null) &
LOADPIDS+=($!)
(while :; do sleep 0.01; done) &
LOADPIDS+=($!)
log "load pids ${LOADPIDS[*]} (dd reading /dev/zero 1 byte at a time; a sleep loop)"

FG=$T/instances/repro_fg
fg_on() {
	mkdir -p $FG
	echo 0 >$FG/options/funcgraph-irqs
	echo 0 >$FG/options/function-fork
	echo 0 >$FG/tracing_on
	echo "${LOADPIDS[*]}" >$FG/set_ftrace_pid
	echo function_graph >$FG/current_tracer
	echo 1 >$FG/tracing_on
}
fg_off() {
	echo 0 >$FG/tracing_on
	echo nop >$FG/current_tracer
	rmdir $FG
}

# watch LABEL: for SECS seconds re-arm WARN_ONCE each 2 s and count the
# fprobe.c:683 warnings that appear.
watch() {
	local start end before hits=0 rounds=0
	start=$(warns)
	end=$(($(date +%s) + SECS))
	while (($(date +%s) < end)); do
		echo 1 >/sys/kernel/debug/clear_warn_once
		before=$(warns)
		sleep 2
		rounds=$((rounds + 1))
		(($(warns) > before)) && hits=$((hits + 1))
	done
	log "$1: $((  $(warns) - start )) fprobe.c:683 WARNINGs; re-armed $rounds times, warned again in $hits of them"
}

log "step 0: fprobe events alone"
echo 1 >$T/events/fpr/enable
slots "after enabling the fprobe events"
watch "step 0 (fprobe alone, direct mode)"

log "step 1: + function_graph in an instance, set_ftrace_pid = load"
fg_on
slots "fprobe + function_graph"
watch "step 1 (fprobe in the slot above + function_graph)"
fg_off

log "step 2 (control): fprobe re-registered into another slot, + function_graph"
echo 0 >$T/events/fpr/enable
echo 1 >$T/events/fpr/enable
fg_on
slots "fprobe re-registered + function_graph"
watch "step 2 (fprobe in the slot above + function_graph)"
fg_off

kill "${LOADPIDS[@]}" 2>/dev/null
wait 2>/dev/null
echo 0 >$T/events/fpr/enable
echo >$T/dynamic_events
log "first fprobe.c:683 WARNING of this boot:"
dmesg | grep -m1 -B1 -A45 'WARNING: kernel/trace/fprobe.c:683' | tee "$OUT/warning.txt"
log "all WARNING lines: "
dmesg | grep 'WARNING:' | sed 's/^\[[ 0-9.]*\] //' | sort | uniq -c
