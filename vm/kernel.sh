#!/usr/bin/env bash
# vm/kernel.sh [--suite SUITE] [--version SEL] [--flavour F] [--list] [SUITE[:SEL[:F]]]
#
# Print (stdout, one line) the directory of a ready-to-boot Debian kernel,
# fetching and unpacking it into $CACHE/kernels/<abi>/ first if needed.
#
#   SUITE  Debian suite to take the kernel from (default: sid, env
#          TRACEBENCH_KERNEL_SUITE). E.g. sid, experimental, trixie,
#          trixie-backports.
#   SEL    version selector (default: 7, env TRACEBENCH_KERNEL_VERSION):
#          a prefix such as 7, 7.2, 6.12 picks the newest matching kernel
#          (a prefix ends at a separator . + - ~: 7.2 is not 7.20.1);
#          a full ABI name such as 7.2.13+deb14-amd64 picks exactly that one.
#   F      Debian's kernel flavour, the end of its packages' names
#          (default amd64, env TRACEBENCH_KERNEL_FLAVOUR): e.g. rt-amd64,
#          cloud-amd64, arm64, riscv64, s390x, powerpc64le, powerpc64le-64k.
#          The part of it naming an architecture gives the Debian
#          architecture (ppc64el for powerpc64le); another than the host's
#          is listed through a private apt configuration with
#          APT::Architecture set to it.
#   --list print the kernels available in SUITE (newest first) and exit.
#
# The chosen kernel is reported on stderr. Two package layouts exist:
#   split  (Debian >= 7.2 era): linux-binary-<abi> (vmlinuz),
#          linux-modules-<abi> (.ko.xz, no modules.dep), linux-base-<abi> (config)
#   single (older): linux-image-<abi>[-unsigned] with everything inside.
set -euo pipefail
# shellcheck source=vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KERNELS="$CACHE/kernels"

# layout_pkgs SUITE ABI: print "<layout> <pkg>..." for ABI, or nothing if
# the suite does not carry a complete set for it.
layout_pkgs() {
	local suite="$1" abi="$2" p
	local split=("linux-binary-$abi" "linux-modules-$abi" "linux-base-$abi")
	if available "$suite" "linux-binary-$abi"; then
		for p in "${split[@]:1}"; do
			available "$suite" "$p" || return 0
		done
		echo "split ${split[*]}"
		return 0
	fi
	# Old layout: the signed and the unsigned image carry the same tree. In
	# the split era linux-image-<abi> is only a metapackage over the three
	# split packages: never take that one for a full image.
	for p in "linux-image-$abi-unsigned" "linux-image-$abi"; do
		if available "$suite" "$p" && ! depends_on_binary "$suite" "$p"; then
			echo "single $p"
			return 0
		fi
	done
}

# depends_on_binary SUITE PKG: true if PKG depends on a linux-binary-* package.
depends_on_binary() {
	local rec
	rec="$(pkg_record "$1" "$2")"
	[[ "$rec" =~ (^|$'\n')Depends:[^$'\n']*linux-binary- ]]
}

# fetch SUITE ABI LAYOUT PKG...: download and unpack into $KERNELS/<abi>,
# run depmod, then write the marker. Work happens in a temp dir that is
# renamed at the end, so an interrupted run never leaves a half kernel.
fetch() {
	local suite="$1" abi="$2" layout="$3"
	shift 3
	local dest="$KERNELS/$abi" tmp="$KERNELS/.tmp-$abi" deb debs pkgver
	rm -rf "$tmp"
	mkdir -p "$tmp/debs" "$tmp/root"
	log "downloading $* from suite '$suite'"
	(cd "$tmp/debs" && apt_suite "$suite" download -q "$@" >&2)
	debs=("$tmp"/debs/*.deb)
	[[ -f "${debs[0]}" ]] || die "apt-get download of $* left no .deb in $tmp/debs"
	for deb in "${debs[@]}"; do
		log "unpacking $(basename "$deb")"
		dpkg-deb -x "$deb" "$tmp/root"
	done
	pkgver="$(dpkg-deb -f "${debs[0]}" Version)"

	local vmlinuz moddir base
	vmlinuz="$(find_vmlinuz "$tmp/root" "$abi")"
	moddir="$(find_moddir "$tmp/root" "$abi")"
	# depmod -b wants the directory that contains lib/modules/<abi>.
	base="${moddir%/lib/modules/"$abi"}"
	log "running depmod for $abi"
	depmod -a -b "$base" "$abi" || die "depmod -b $base $abi failed"
	[[ -s "$moddir/modules.dep" ]] || die "depmod did not produce $moddir/modules.dep"

	# A stable name for run.sh and for humans; the real file stays in place
	# because vng derives the module directory from the image's path.
	ln -sfn "${vmlinuz#"$tmp/root/"}" "$tmp/root/vmlinuz"
	cat >"$tmp/root/$KERNEL_MARKER" <<EOF
ABI=$abi
PKG_VERSION=$pkgver
SUITE=$suite
ARCH=$SEL_ARCH
LAYOUT=$layout
PACKAGES="$*"
VMLINUZ=${vmlinuz#"$tmp/root/"}
MODDIR=${moddir#"$tmp/root/"}
EOF
	rm -rf "$dest"
	mv "$tmp/root" "$dest"
	rm -rf "$tmp"
}

# find_vmlinuz ROOT ABI: path of the kernel image inside an unpacked tree.
find_vmlinuz() {
	local f
	for f in "$1/boot/vmlinuz-$2" "$1/usr/lib/modules/$2/vmlinuz" "$1/lib/modules/$2/vmlinuz"; do
		if [[ -f "$f" ]]; then
			echo "$f"
			return 0
		fi
	done
	die "no vmlinuz for $2 found in the unpacked packages ($1)"
}

# find_moddir ROOT ABI: the modules directory inside an unpacked tree.
find_moddir() {
	local d
	for d in "$1/usr/lib/modules/$2" "$1/lib/modules/$2"; do
		if [[ -d "$d/kernel" ]]; then
			echo "$d"
			return 0
		fi
	done
	die "no modules directory for $2 found in the unpacked packages ($1)"
}

# list_option ARGS...: --list, the option only vm/kernel.sh takes
# (parse_kernel_args).
LIST=0
list_option() {
	[[ "$1" == --list ]] && LIST=1
}

main() {
	parse_kernel_args list_option "$@"
	need_cmd apt-get apt-cache dpkg-deb depmod flock
	mkdir -p "$KERNELS"
	# Serialise concurrent callers (parallel test jobs, bench's guests) on
	# the cache, the package lists' update included.
	exec 9>"$KERNELS/.lock"
	flock 9
	apt_refresh "$SEL_SUITE"
	if ((LIST)); then
		list_abis "$SEL_SUITE"
		return 0
	fi

	local resolved abi layout pkgs
	# Separate assignment so a failing resolve stops the script (set -e).
	resolved="$(resolve_kernel "$SEL_SUITE" layout_pkgs "complete $SEL_FLAVOUR kernel (image, modules and config; an image-only one, which vm/kernel-binary.sh fetches, boots in the matrix alone)")"
	read -r abi layout pkgs <<<"$resolved"
	if [[ -f "$KERNELS/$abi/$KERNEL_MARKER" ]]; then
		log "kernel $abi ($layout layout, suite $SEL_SUITE) cached in $KERNELS/$abi"
	else
		# shellcheck disable=SC2086 # pkgs is a space-separated package list
		fetch "$SEL_SUITE" "$abi" "$layout" $pkgs
		log "kernel $abi ($layout layout, suite $SEL_SUITE) ready in $KERNELS/$abi"
	fi
	echo "$KERNELS/$abi"
}

main "$@"
