#!/usr/bin/env bash
# vm/run.sh [options] -- CMD [ARGS...]
#
# Boot a Debian kernel with virtme-ng (host / shared read-only over 9p,
# copy-on-write /etc /usr /var /tmp ...), run CMD as root in the guest in the
# current directory, stream its output, and exit with CMD's exit status.
#
#   --kernel DIR|FILE  kernel dir from vm/kernel.sh or a vmlinuz inside such a
#                      tree (default: $(vm/kernel.sh), env TRACEBENCH_KERNEL_DIR)
#   --accel auto|kvm|tcg  (env TRACEBENCH_ACCEL, default auto: a short KVM boot
#                      probe, result cached per kernel + machine)
#   --memory SIZE      guest RAM (env TRACEBENCH_VM_MEMORY, default 2G)
#   --cpus N           guest CPUs (env TRACEBENCH_VM_CPUS, default 2)
#   --timeout SECS     kill the guest after SECS (env TRACEBENCH_VM_TIMEOUT,
#                      default 0 = none); exit status 124 then.
#   --stdin            connect CMD's stdin to ours (default: /dev/null;
#                      on a terminal, do not combine with --timeout).
#   --verbose          show the guest's boot console on stderr (env
#                      TRACEBENCH_VM_VERBOSE=1); for boot failures.
#   --env NAME[=VALUE] pass NAME (its host value, or VALUE) to CMD; repeatable.
#   --rwdir DIR        make DIR writable from the guest; repeatable.
#   --ro               do not make the current directory writable.
#   --icount           guest clock = instruction count (QEMU -icount
#                      shift=0,sleep=on: 1 ns per guest instruction); TCG only
#                      (env TRACEBENCH_VM_ICOUNT=1).
#
# The guest sees: TRACEBENCH_ACCEL=kvm|tcg, TRACEBENCH_CLOCK=icount|wall,
# TRACEBENCH_KERNEL=<uname -r>, TRACEBENCH_IN_VM=1, the host PATH, and the
# host's TRACEBENCH_*, GO*, CGO_*, LANG, LC_*, TZ variables plus the names
# listed in TRACEBENCH_VM_ENV (space separated) and --env. virtme-ng itself
# passes no environment.
# Exit status: CMD's; 124 on timeout; 125 if the guest never reported one
# (boot failure, kernel panic, OOM) or on a usage error. A guest that dies
# before CMD starts is booted again (env TRACEBENCH_VM_BOOT_RETRIES, default 1);
# with --timeout, so is one that has not started CMD within
# TRACEBENCH_VM_BOOT_LIMIT seconds (default 300; 0: no limit): TCG boots
# took 20-40 s, and one hung in early boot until its timeout.
set -euo pipefail
# shellcheck source=vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

VM_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# Host variables whose names match this are passed to the guest command.
ENV_PATTERN='^(TRACEBENCH_[A-Z0-9_]*|GO[A-Z0-9_]*|CGO_[A-Z0-9_]*|LANG|LC_[A-Z]*|TZ)$'
# Seconds a KVM probe boot may take before KVM counts as unusable.
PROBE_TIMEOUT="${TRACEBENCH_KVM_PROBE_TIMEOUT:-30}"

# kernel_image DIR|FILE: the real path of the vmlinuz to boot. vng derives
# the modules directory from this path (it walks up to the first directory
# holding lib/modules or usr/lib/modules and uses <that>/lib/modules/<ver>,
# with <ver> read from the image), so it must be the file inside the
# unpacked tree, not a copy elsewhere.
kernel_image() {
	local k="$1" img=""
	if [[ -d "$k" ]]; then
		if [[ -e "$k/vmlinuz" ]]; then
			img="$k/vmlinuz"
		else
			img="$(find "$k/boot" "$k/usr/lib/modules" "$k/lib/modules" -maxdepth 2 \
				\( -name 'vmlinuz-*' -o -name vmlinuz \) -type f 2>/dev/null | head -n1)"
		fi
	elif [[ -f "$k" ]]; then
		img="$k"
	fi
	[[ -n "$img" && -f "$img" ]] || fail "no kernel image found at --kernel '$k' (expected a vm/kernel.sh directory or a vmlinuz file)"
	readlink -f "$img"
}

# vng_base IMG: the vng options shared by the probe and the real run.
# --force-9p: bookworm's virtiofsd cannot serve the root, 9p can.
# UNUSED_MODULES: what udev would load for QEMU's devices that no command
# run here uses (disks, CD-ROM, watchdogs, input, nested KVM, AES-NI):
# loading them took 7 of a 31 s TCG boot (7.2.13).
UNUSED_MODULES=sr_mod,cdrom,sg,scsi_mod,ahci,libahci,libata,kvm,kvm_amd,kvm_intel,ccp,iTCO_wdt,i6300esb,
UNUSED_MODULES+=intel_pmc_bxt,lpc_ich,i2c_i801,i2c_smbus,psmouse,serio_raw,evdev,pcspkr,button,aesni_intel
VNG_BASE=()
# max_ports=2: vng gives each of its six virtio-serial devices one port
# (id 1; 0 is the console's), but the default 31 makes 64 queues each,
# whose ioeventfds QEMU's main loop polls about 1000 times a second: 391
# fds, ~20% of a host CPU per guest, taken from the other TCG guest.
vng_base() {
	VNG_BASE=(vng --force-9p --run "$1" --memory "$MEMORY" --cpus "$CPUS" --append "module_blacklist=$UNUSED_MODULES"
		"--qemu-opts=-global virtio-serial-device.max_ports=2")
	# vng runs the command as the invoking user; the tests need root.
	if [[ $EUID -ne 0 ]]; then
		VNG_BASE+=(--user root)
	fi
}

# machine_key: identifies this host for the KVM probe cache. A different
# host kernel, CPU, QEMU or machine gets a fresh probe.
machine_key() {
	{
		cat /etc/machine-id 2>/dev/null || hostname
		uname -r
		grep -m1 '^model name' /proc/cpuinfo || true
		qemu-system-x86_64 --version | head -n1
	} | sha256sum | cut -c1-16
}

# probe_kvm: boot the kernel under KVM once and run a trivial command.
# Known failure modes are fast (QEMU aborts setting an MSR) or hang (KVM
# "emulation failure" pauses the VM), hence the timeout. Prints kvm or tcg.
probe_kvm() {
	local out rc=0
	log "probing KVM with a short boot (once per kernel and machine, up to ${PROBE_TIMEOUT}s)"
	out="$(timeout --kill-after=5 "$PROBE_TIMEOUT" "${VNG_BASE[@]}" --exec 'echo tracebench-kvm-ok' </dev/null 2>&1)" || rc=$?
	if ((rc == 0)) && grep -q tracebench-kvm-ok <<<"$out"; then
		echo kvm
	else
		log "KVM probe failed (status $rc): $(grep -m1 -iE 'error|fail' <<<"$out" || echo "${out:0:200}")"
		echo tcg
	fi
}

# choose_accel REQUESTED RELEASE: resolve auto to kvm or tcg.
choose_accel() {
	local want="$1" release="$2" cache accel
	case "$want" in
	kvm | tcg)
		echo "$want"
		return 0
		;;
	auto) ;;
	*) fail "invalid accel '$want' (expected auto, kvm or tcg; from --accel or TRACEBENCH_ACCEL)" ;;
	esac
	if [[ ! -r /dev/kvm || ! -w /dev/kvm ]]; then
		echo tcg
		return 0
	fi
	cache="$CACHE/accel/$release.$(machine_key)"
	if [[ -s "$cache" ]]; then
		cat "$cache"
		return 0
	fi
	mkdir -p "$CACHE/accel"
	accel="$(probe_kvm)"
	replace_file "$cache" <<<"$accel"
	cat "$cache"
}

# write_guest_script DIR CMD...: write DIR/guest.sh, the script the guest
# runs. It marks DIR/started (so a failed boot can be told from a failed
# command), restores the environment, enters the working directory, runs CMD
# and records its status in DIR/status on the writable host directory DIR,
# so the status does not depend on vng's own reporting (which maps a crash
# to 255, the same value a command may legitimately return).
write_guest_script() {
	local dir="$1"
	shift
	{
		echo '#!/bin/bash'
		echo '# generated by vm/run.sh'
		printf ': >%q\n' "$dir/started"
		env_exports "$ENV_PATTERN" PATH "${ENV_NAMES[@]}"
		printf 'export TRACEBENCH_ACCEL=%q TRACEBENCH_CLOCK=%q TRACEBENCH_IN_VM=1\n' "$ACCEL" "$CLOCK"
		# shellcheck disable=SC2016 # expanded in the guest
		echo 'export TRACEBENCH_KERNEL="$(uname -r)"'
		printf 'cd %q || exit 125\n' "$PWD"
		printf '%q ' "$@"
		echo
		printf 'echo $? >%q\n' "$dir/status"
	} >"$dir/guest.sh"
	chmod 0700 "$dir/guest.sh"
}

# boot RUN_DIR STDIN VNG_CMD...: run vng once; its status is returned.
# QEMU opens the guest's stdout/stderr as files via /proc/self/fd/1 and
# /proc/self/fd/2 with O_TRUNC and its own offsets: if those are regular
# files (make >log), earlier content is truncated and later writes
# overwrite each other. Pipes through cat avoid both. vng also needs to open
# fds 0-2 read-write through /proc or it silently drops the command's stderr
# (closed stdin as in CI, sockets): /dev/null is always fine.
boot() {
	local dir="$1" in="$2"
	shift 2
	rm -f "$dir/started" "$dir/started.hung" "$dir/status"
	{ "$@" <"$in" 2>&1 1>&3 3>&- | cat >&2; exit "${PIPESTATUS[0]}"; } 3>&1 | cat
	return "${PIPESTATUS[0]}"
}

# ENV_NAMES: the variables passed to the guest besides ENV_PATTERN's and
# PATH: those named in TRACEBENCH_VM_ENV, then --env's.
ENV_NAMES=()
collect_env() {
	local n
	for n in ${TRACEBENCH_VM_ENV:-}; do
		[[ "$n" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || fail "invalid environment variable name '$n' (from TRACEBENCH_VM_ENV)"
		ENV_NAMES+=("$n")
	done
	ENV_NAMES+=("${ENV_ARGS[@]}")
}

# run_option ARGS...: the options only vm/run.sh takes (parse_runner_args).
ACCEL_REQ="${TRACEBENCH_ACCEL:-auto}" ICOUNT="${TRACEBENCH_VM_ICOUNT:-0}" CWD_RW=1 STDIN=0
RWDIRS=()
run_option() {
	case "$1" in
	--accel) need_value "$@"; ACCEL_REQ="$2"; TAKES=2 ;;
	--rwdir) need_value "$@"; RWDIRS+=("$(readlink -f "$2")"); TAKES=2 ;;
	--ro) CWD_RW=0 ;;
	--stdin) STDIN=1 ;;
	--icount) ICOUNT=1 ;;
	*) return 1 ;;
	esac
}

main() {
	KERNEL="${TRACEBENCH_KERNEL_DIR:-}" MEMORY="${TRACEBENCH_VM_MEMORY:-2G}" CPUS="${TRACEBENCH_VM_CPUS:-2}"
	TIMEOUT="${TRACEBENCH_VM_TIMEOUT:-0}" VERBOSE="${TRACEBENCH_VM_VERBOSE:-0}"
	parse_runner_args run_option "$@"
	local d
	for d in "${RWDIRS[@]}"; do
		[[ -d "$d" && "$d" != / ]] || fail "--rwdir '$d' is not a directory other than /"
	done
	[[ "$ICOUNT" =~ ^[01]$ ]] || fail "invalid TRACEBENCH_VM_ICOUNT '$ICOUNT' (expected 0 or 1)"
	((ICOUNT)) && [[ "$ACCEL_REQ" == kvm ]] && fail "--icount needs TCG, not --accel kvm"
	((ICOUNT)) && ACCEL_REQ=tcg
	[[ "$ACCEL_REQ" =~ ^(auto|kvm|tcg)$ ]] || fail "invalid accel '$ACCEL_REQ' (expected auto, kvm or tcg; from --accel or TRACEBENCH_ACCEL)"
	need_cmd vng qemu-system-x86_64 file timeout udevadm

	if [[ -z "$KERNEL" ]]; then
		KERNEL="$("$VM_DIR/kernel.sh")"
	fi
	local img release
	img="$(kernel_image "$KERNEL")"
	release="$(kernel_release "$img")"
	[[ -n "$release" ]] || fail "cannot read the kernel version from '$img' (is it a bzImage?)"
	vng_base "$img"

	ACCEL="$(choose_accel "$ACCEL_REQ" "$release")"
	CLOCK=wall
	((ICOUNT)) && CLOCK=icount
	log "kernel=$release accel=$ACCEL clock=$CLOCK memory=$MEMORY cpus=$CPUS"
	local vng_cmd=("${VNG_BASE[@]}")
	# One host thread for all vCPUs: under multi-threaded TCG, a kernel
	# patching __schedule's sched_switch tracepoint call (function_graph
	# and fprobe register a probe there) while the other vCPU runs it dies
	# on a stale int3 ("Oops: int3" in __schedule, 4 of 4 boots of the
	# kprobe-session and ftrace-graph tests on 7.2); single-threaded TCG
	# showed none in 4 boots. See vm/README.md.
	[[ "$ACCEL" == tcg ]] && vng_cmd+=(--disable-kvm "--qemu-opts=-accel tcg,thread=single")
	# Guest time advances 2^shift = 1 ns per executed guest instruction, of
	# every vCPU; sleep=on lets an idle guest's clock follow real time.
	[[ "$CLOCK" == icount ]] && vng_cmd+=("--qemu-opts=-icount shift=0,sleep=on")

	# The guest script and the status file.
	new_run_dir run
	collect_env
	write_guest_script "$RUN_DIR" "${COMMAND[@]}"

	vng_cmd+=(--rwdir "$RUN_DIR")
	if ((CWD_RW)); then
		if [[ "$PWD" == / ]]; then
			log "warning: not making / writable; use --rwdir for specific directories"
		else
			vng_cmd+=(--rwdir "$PWD")
		fi
	fi
	for d in "${RWDIRS[@]}"; do
		vng_cmd+=(--rwdir "$d")
	done
	[[ "$VERBOSE" == 1 ]] && vng_cmd+=(--verbose)
	vng_cmd+=(--exec "$RUN_DIR/guest.sh")

	# A guest that dies before the command starts (seen rarely under TCG on a
	# loaded host) is booted again: nothing has run yet, so that is safe.
	local retries="${TRACEBENCH_VM_BOOT_RETRIES:-1}" attempt=0 start vng_rc in=/dev/null
	local label="kernel=$release accel=$ACCEL"
	[[ "$retries" =~ ^[0-9]+$ ]] || fail "invalid TRACEBENCH_VM_BOOT_RETRIES '$retries'"
	BOOT_LIMIT="${TRACEBENCH_VM_BOOT_LIMIT:-300}" BOOT_MARK="$RUN_DIR/started"
	[[ "$BOOT_LIMIT" =~ ^[0-9]+$ ]] || fail "invalid TRACEBENCH_VM_BOOT_LIMIT '$BOOT_LIMIT'"
	if ((STDIN)); then
		in=/dev/stdin
		retries=0
	fi
	while :; do
		start=$SECONDS
		vng_rc=0
		boot "$RUN_DIR" "$in" with_timeout "${vng_cmd[@]}" || vng_rc=$?
		exit_if_reported "$RUN_DIR/status" "$vng_rc" "$start" "$label"
		if [[ -e "$RUN_DIR/started" ]]; then
			no_status "the guest died while running the command (vng exited $vng_rc after $((SECONDS - start))s):" \
				"kernel panic or OOM? Re-run with --verbose to see the console ($label)"
		fi
		if [[ -e "$BOOT_MARK.hung" ]]; then
			log "warning: the guest had not started the command after ${BOOT_LIMIT}s (TRACEBENCH_VM_BOOT_LIMIT): ended"
		fi
		if ((attempt >= retries)); then
			no_status "the guest did not boot to the command (vng exited $vng_rc after $((SECONDS - start))s)." \
				"Re-run with --verbose to see the console ($label)"
		fi
		attempt=$((attempt + 1))
		log "warning: the guest did not boot to the command (vng exited $vng_rc after $((SECONDS - start))s); booting again ($attempt/$retries)"
	done
}

main "$@"
