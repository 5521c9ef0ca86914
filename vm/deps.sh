#!/usr/bin/env bash
# vm/deps.sh [--build] [--arch ARCH]... - install the host packages needed to boot
# the test guest (and, with --build, to run `make generate`). Idempotent:
# packages that are already installed are skipped, and apt-get update runs at
# most once.
#
#   run deps:     qemu-system-x86 busybox-static udev kmod (the host's own suite)
#                 virtme-ng                             (from sid, private apt config)
#   --build:      clang-19 llvm-19 bpftool libbpf-dev   (the host's own suite)
#   --arch ARCH:  the QEMU of a guest of Debian architecture ARCH (repeatable,
#                 or comma-separated): arm64 qemu-system-arm (qemu-system-aarch64),
#                 ppc64el qemu-system-ppc (qemu-system-ppc64), riscv64 and s390x
#                 qemu-system-misc; amd64 needs nothing more
#
# udev matters: without it vng loses the guest's stdout and exits 255.
# When another apt or dpkg holds its lock (e.g. unattended-upgrades on a first
# boot), it waits up to TRACEBENCH_APT_LOCK_WAIT seconds (default 300) for it.
set -euo pipefail
# shellcheck source=vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RUN_PKGS=(qemu-system-x86 busybox-static udev kmod)
# The QEMU package of each guest architecture (Debian's names) that
# vm/run-initramfs.sh boots, from lib.sh's ARCH_TABLE; bookworm's (7.2)
# carry the firmware they need (opensbi for riscv64's virt machine, SLOF for
# ppc64el's pseries) in qemu-system-data.
declare -A ARCH_PKGS=()
arch_map ARCH_PKGS 1 4
BUILD_PKGS=(clang-19 llvm-19 bpftool libbpf-dev)
# virtme-ng is not in bookworm; sid's build is arch:all and installs there.
VNG_SUITE="${TRACEBENCH_VNG_SUITE:-sid}"

# Seconds to wait for another apt/dpkg's lock, and between two attempts.
APT_LOCK_WAIT="${TRACEBENCH_APT_LOCK_WAIT:-300}"
APT_LOCK_POLL=5

# missing_pkgs PKG...: print the packages that are not installed.
missing_pkgs() {
	local p
	for p in "$@"; do
		pkg_installed "$p" || printf '%s\n' "$p"
	done
}

# host_install PKG...: install PKGs from the host's suites if any is missing.
host_install() {
	local missing
	mapfile -t missing < <(missing_pkgs "$@")
	if ((${#missing[@]} == 0)); then
		log "already installed: $*"
		return 0
	fi
	[[ $EUID -eq 0 ]] || die "installing ${missing[*]} needs root"
	host_apt_update
	log "installing ${missing[*]}"
	apt_locked apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# host_apt_update: system apt-get update, once per invocation of this script.
HOST_UPDATED=0
host_apt_update() {
	((HOST_UPDATED)) && return 0
	log "apt-get update (host suites)"
	apt_locked apt-get update -q
	HOST_UPDATED=1
}

# install_vng: download virtme-ng from $VNG_SUITE through the private apt
# config and install the .deb with the host's apt (which pulls its
# dependencies from the host's suites).
install_vng() {
	if pkg_installed virtme-ng && command -v vng >/dev/null 2>&1; then
		log "already installed: virtme-ng $(dpkg-query -W -f='${Version}' virtme-ng)"
		return 0
	fi
	[[ $EUID -eq 0 ]] || die "installing virtme-ng needs root"
	local debs
	debs="$(apt_dir "$VNG_SUITE")/debs"
	mkdir -p "$debs"
	log "downloading virtme-ng from suite '$VNG_SUITE'"
	rm -f "$debs"/virtme-ng_*.deb
	(cd "$debs" && apt_suite "$VNG_SUITE" download -q virtme-ng >&2)
	host_apt_update
	log "installing $(cd "$debs" && echo virtme-ng_*.deb)"
	(cd "$debs" && apt_locked apt-get install -y -q --no-install-recommends ./virtme-ng_*.deb)
}

# apt_locked CMD...: run an apt-get command of the system's apt (output on
# stderr); while another apt or dpkg holds a lock it needs, say so and try
# again every APT_LOCK_POLL s, for up to APT_LOCK_WAIT s. apt's own
# DPkg::Lock::Timeout is not enough: apt-get update (apt 2.6) does not wait
# for the lists lock with it.
apt_locked() {
	local errs held waited start=$SECONDS
	errs="$(mktemp)"
	while :; do
		if DEBIAN_FRONTEND=noninteractive "$@" 2>"$errs" >&2; then
			cat "$errs" >&2
			rm -f "$errs"
			return 0
		fi
		held="$(grep -m1 -E 'Could not get lock|Unable to acquire the dpkg frontend lock' "$errs" || true)"
		if [[ -z $held ]]; then
			cat "$errs" >&2
			rm -f "$errs"
			die "$1 ${2:-} failed (see above)"
		fi
		waited=$((SECONDS - start))
		if ((waited >= APT_LOCK_WAIT)); then
			rm -f "$errs"
			die "gave up after ${waited} s waiting for another apt/dpkg to release its lock (${held#E: }); retry when it is done, or set TRACEBENCH_APT_LOCK_WAIT"
		fi
		log "another apt/dpkg holds its lock (${held#E: }); waited ${waited} s of ${APT_LOCK_WAIT} s, retrying in ${APT_LOCK_POLL} s"
		sleep "$APT_LOCK_POLL"
	done
}

# arch_pkgs ARCH[,ARCH...]: print the QEMU package of each ARCH; fail,
# naming it, for an architecture without one.
arch_pkgs() {
	local arch
	for arch in ${1//,/ }; do
		[[ -n "${ARCH_PKGS[$arch]:-}" ]] ||
			die "no QEMU known for architecture '$arch' (known: $(printf '%s\n' "${!ARCH_PKGS[@]}" | sort | paste -sd' '))"
		printf '%s\n' "${ARCH_PKGS[$arch]}"
	done
}

main() {
	local build=0 arches=()
	while (($#)); do
		case "$1" in
		--build) build=1 ;;
		--arch)
			[[ -n "${2:-}" ]] || die "--arch needs an architecture (e.g. arm64, ppc64el, riscv64, s390x)"
			arches+=("$2")
			shift
			;;
		--arch=*) arches+=("${1#*=}") ;;
		-h | --help) usage 0 ;;
		*)
			log "unknown argument '$1'"
			usage
			;;
		esac
		shift
	done
	local qemu=() arch pkgs
	for arch in "${arches[@]}"; do
		pkgs="$(arch_pkgs "$arch")" || exit
		mapfile -t -O "${#qemu[@]}" qemu <<<"$pkgs"
	done
	host_install "${RUN_PKGS[@]}"
	install_vng
	if ((${#qemu[@]})); then
		mapfile -t qemu < <(printf '%s\n' "${qemu[@]}" | sort -u)
		host_install "${qemu[@]}"
	fi
	if ((build)); then
		host_install "${BUILD_PKGS[@]}"
	fi
	log "deps ok"
}

# Sourcing defines the functions only (to exercise them, e.g. apt_locked).
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	main "$@"
fi
