#!/usr/bin/env bash
# vm/kernel-binary.sh [--suite SUITE] [--version SEL] [--flavour F] [SUITE[:SEL[:F]]]
#
# Print (stdout, one line) the directory of a Debian kernel image for which
# SUITE carries only linux-binary-<abi> (vmlinuz) and neither
# linux-modules-<abi> nor linux-base-<abi>, fetching it first if needed.
# vm/kernel.sh refuses such a kernel, since virtme-ng needs its modules
# (9p, overlay); boot it with vm/run-initramfs.sh, which needs none.
#
# The kernel is selected as by vm/kernel.sh, with the same defaults: SEL
# (e.g. 7.0) picks the newest matching ABI whose linux-binary package is
# downloadable, or an exact ABI name such as 7.0.13+deb13-amd64.
#
# The image is unpacked into $CACHE/kernels-binary-only/<abi>/, apart from
# vm/kernel.sh's complete kernels so that a later complete upload of the
# same ABI is not mistaken for this one.
set -euo pipefail
# shellcheck source=vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KERNELS="$CACHE/kernels-binary-only"

# binary_pkg SUITE ABI: print linux-binary-ABI if SUITE has it to download.
binary_pkg() {
	if available "$1" "linux-binary-$2"; then
		echo "linux-binary-$2"
	fi
}

# fetch SUITE ABI: download and unpack linux-binary-ABI, then the marker
# (vm/kernel.sh's fields but MODDIR, LAYOUT=binary-only); built in a temp
# dir renamed at the end, as vm/kernel.sh does.
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
	cat >"$tmp/root/$KERNEL_MARKER" <<EOF
ABI=$abi
PKG_VERSION=$(dpkg-deb -f "$deb" Version)
SUITE=$suite
ARCH=$SEL_ARCH
LAYOUT=binary-only
PACKAGES="linux-binary-$abi"
VMLINUZ=boot/vmlinuz-$abi
EOF
	rm -rf "${KERNELS:?}/$abi"
	mv "$tmp/root" "$KERNELS/$abi"
	rm -rf "$tmp"
}

main() {
	parse_kernel_args no_option "$@"
	need_cmd apt-get apt-cache dpkg-deb flock
	mkdir -p "$KERNELS"
	exec 9>"$KERNELS/.lock" # as vm/kernel.sh: the lists' update included
	flock 9
	apt_refresh "$SEL_SUITE"
	local abi
	abi="$(resolve_kernel "$SEL_SUITE" binary_pkg "$SEL_FLAVOUR kernel with a downloadable linux-binary package")"
	abi="${abi%% *}"
	if [[ -f "$KERNELS/$abi/$KERNEL_MARKER" ]]; then
		log "kernel $abi (binary only, suite $SEL_SUITE) cached in $KERNELS/$abi"
	else
		log "downloading linux-binary-$abi from suite '$SEL_SUITE' (the suite has no modules or config for it)"
		fetch "$SEL_SUITE" "$abi"
	fi
	echo "$KERNELS/$abi"
}

main "$@"
