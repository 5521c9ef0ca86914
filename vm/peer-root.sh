#!/usr/bin/env bash
# vm/peer-root.sh [--check] - print (stdout, one line) the directory of the
# peer root: a minimal Debian sid system holding the tracing tools operators
# run today (libbpf-tools, bpftrace, bpftool, perf, bcc with the headers of
# the suite's newest kernel, which bcc compiles against), which the guest enters
# with chroot to compare them with tracebench. Built once with debootstrap
# from the mirror of the system's apt sources into $TRACEBENCH_CACHE
# (default .cache/), about 1.3 GB; later calls only print the path.
#
#   --check   do not build: exit 1 with the reason if the root is not ready.
#
# The root's tracebench-peers.versions lists each tool's package version,
# one "package version" line each, for the reports. Failure is one line on
# stderr ("peer-root: error: ...") and exit status 1. Needs root to build.
set -euo pipefail
# shellcheck source=vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SUITE="${TRACEBENCH_PEER_SUITE:-sid}"
PACKAGES=(libbpf-tools bpftrace bpftool linux-perf bpfcc-tools "linux-headers-$(dpkg --print-architecture)")
ROOT="$CACHE/peer-root-$SUITE"
# Written last: its presence marks a complete root.
VERSIONS="$ROOT/tracebench-peers.versions"

fail() {
	printf 'peer-root: error: %s\n' "$*" >&2
	exit 1
}

# ensure_debootstrap: install bookworm's debootstrap if missing, waiting for
# another apt run's lock rather than failing on it.
ensure_debootstrap() {
	pkg_installed debootstrap && command -v debootstrap >/dev/null && return 0
	log "installing debootstrap"
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends \
		debootstrap >&2 || fail "cannot install debootstrap with apt-get (see the apt output above)"
}

# build: debootstrap into a temporary directory, record the versions, and
# move it into place, so an interrupted build leaves no half root at $ROOT.
build() {
	local uri key tmp logf
	uri="$(mirror_field URIs)"
	key="$(mirror_field Signed-By)"
	[[ -n "$uri" ]] || fail "no non-security 'URIs:' line in $SYSTEM_SOURCES to take the Debian mirror from"
	tmp="$ROOT.tmp"
	logf="$CACHE/peer-root-$SUITE.log"
	rm -rf "$tmp"
	mkdir -p "$tmp"
	log "building the peer root in $ROOT: debootstrap $SUITE from $uri with ${PACKAGES[*]} (a few minutes, ~1.3 GB; log $logf)"
	local opts=(--variant=minbase "--include=$(
		IFS=,
		echo "${PACKAGES[*]}"
	)")
	[[ -n "$key" && -r "$key" ]] && opts+=("--keyring=$key")
	debootstrap "${opts[@]}" "$SUITE" "$tmp" "$uri" >"$logf" 2>&1 ||
		fail "debootstrap $SUITE from $uri failed: $(grep -m1 -E '^(E|W):' "$logf" || tail -n1 "$logf") (log $logf)"
	chroot "$tmp" dpkg-query -W -f='${Package} ${Version}\n' "${PACKAGES[@]}" >"$tmp/tracebench-peers.versions.tmp" ||
		fail "the new root lacks one of ${PACKAGES[*]} (dpkg-query in $tmp)"
	mv -f "$tmp/tracebench-peers.versions.tmp" "$tmp/tracebench-peers.versions"
	rm -rf "$ROOT"
	mv "$tmp" "$ROOT"
	log "peer root ready: $(tr '\n' ' ' <"$VERSIONS")"
}

# complete: the root is built and holds every package of PACKAGES (a root
# built before one was added is built again).
complete() {
	local p
	[[ -s "$VERSIONS" ]] || return 1
	for p in "${PACKAGES[@]}"; do
		grep -q "^$p " "$VERSIONS" || return 1
	done
}

main() {
	local check=0
	case "${1:-}" in
	"") ;;
	--check) check=1 ;;
	-h | --help) usage 0 ;;
	*) fail "unknown argument '$1' (expected --check or nothing)" ;;
	esac
	check_suite "$SUITE"
	if ! complete; then
		((check)) && fail "no peer root at $ROOT holding ${PACKAGES[*]} (build it with vm/peer-root.sh or make peer-root)"
		[[ $EUID -eq 0 ]] || fail "building the peer root needs root (debootstrap, chroot); running as uid $EUID"
		mkdir -p "$CACHE"
		# One build at a time; a second caller waits for the first's root.
		exec 9>"$CACHE/peer-root-$SUITE.lock"
		flock 9
		complete || {
			ensure_debootstrap
			build
		}
	fi
	echo "$ROOT"
}

main "$@"
