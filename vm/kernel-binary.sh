#!/usr/bin/env bash
# vm/kernel-binary.sh SUITE[:SEL]
#
# Print (stdout, one line) the directory of a Debian kernel image for which
# SUITE carries only linux-binary-<abi> (vmlinuz) and neither
# linux-modules-<abi> nor linux-base-<abi>, fetching it first if needed.
# vm/kernel.sh refuses such a kernel, since virtme-ng needs its modules
# (9p, overlay); boot it with vm/run-initramfs.sh, which needs none.
#
#   SEL  version prefix (7.0 picks the newest 7.0.x whose linux-binary
#        package is downloadable) or an exact ABI name such as
#        7.0.13+deb13-amd64.
#
# The image is unpacked into $CACHE/kernels-binary-only/<abi>/, apart from
# vm/kernel.sh's complete kernels so that a later complete upload of the
# same ABI is not mistaken for this one.
set -euo pipefail
# shellcheck source=vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

VM_DIR="$(dirname "${BASH_SOURCE[0]}")"
KERNELS="$CACHE/kernels-binary-only"
# Written last: its presence marks a complete directory (same name and
# fields as vm/kernel.sh's marker, LAYOUT=binary-only).
MARKER=tracebench-kernel.env

# downloadable SUITE PKG: true if PKG has a version with a .deb in SUITE.
downloadable() {
	local rec
	rec="$(apt_cache_suite "$1" show --no-all-versions "$2" 2>/dev/null || true)"
	[[ "$rec" == *$'\n'Filename:* ]]
}

# resolve SUITE SEL: the newest ABI matching SEL with a downloadable
# linux-binary package. vm/kernel.sh --list gives the suite's ABIs.
resolve() {
	local suite="$1" sel="$2" abi
	while read -r abi; do
		[[ "$abi" == "$sel" || "$abi" == "$sel".* || "$abi" == "$sel"+* ]] || continue
		if downloadable "$suite" "linux-binary-$abi"; then
			echo "$abi"
			return 0
		fi
	done < <("$VM_DIR/kernel.sh" --list "$suite")
	die "no downloadable linux-binary package matching '$sel' in suite '$suite'"
}

# fetch SUITE ABI: download and unpack linux-binary-ABI, then the marker;
# built in a temp dir renamed at the end, as vm/kernel.sh does.
fetch() {
	local suite="$1" abi="$2" tmp="$KERNELS/.tmp-$2" deb
	rm -rf "$tmp"
	mkdir -p "$tmp/debs" "$tmp/root"
	(cd "$tmp/debs" && apt_suite "$suite" download -q "linux-binary-$abi" >&2)
	deb="$(echo "$tmp"/debs/*.deb)"
	[[ -f "$deb" ]] || die "apt-get download of linux-binary-$abi left no .deb"
	dpkg-deb -x "$deb" "$tmp/root"
	[[ -f "$tmp/root/boot/vmlinuz-$abi" ]] || die "linux-binary-$abi has no boot/vmlinuz-$abi"
	ln -s "boot/vmlinuz-$abi" "$tmp/root/vmlinuz"
	cat >"$tmp/root/$MARKER" <<EOF
ABI=$abi
PKG_VERSION=$(dpkg-deb -f "$deb" Version)
SUITE=$suite
LAYOUT=binary-only
PACKAGES="linux-binary-$abi"
VMLINUZ=boot/vmlinuz-$abi
EOF
	rm -rf "${KERNELS:?}/$abi"
	mv "$tmp/root" "$KERNELS/$abi"
	rm -rf "$tmp"
}

main() {
	[[ "${1:-}" == -h || "${1:-}" == --help ]] && usage 0
	[[ $# -eq 1 && "$1" != -* ]] || usage 2
	local suite="${1%%:*}" sel=7.0 abi
	[[ "$1" == *:* ]] && sel="${1#*:}"
	check_suite "$suite"
	need_cmd apt-get apt-cache dpkg-deb flock
	mkdir -p "$KERNELS"
	exec 9>"$KERNELS/.lock"
	flock 9
	abi="$(resolve "$suite" "$sel")"
	if [[ -f "$KERNELS/$abi/$MARKER" ]]; then
		log "kernel $abi (binary only, suite $suite) cached in $KERNELS/$abi"
	else
		log "downloading linux-binary-$abi from suite '$suite' (the suite has no modules or config for it)"
		fetch "$suite" "$abi"
	fi
	echo "$KERNELS/$abi"
}

main "$@"
