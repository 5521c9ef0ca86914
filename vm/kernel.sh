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
#          a prefix such as 7, 7.2, 6.12 picks the newest matching kernel;
#          a full ABI name such as 7.2.13+deb14-amd64 picks exactly that one.
#   F      kernel flavour (default amd64, env TRACEBENCH_KERNEL_FLAVOUR):
#          e.g. rt-amd64, cloud-amd64, arm64. Its last part is the Debian
#          architecture; another than the host's is listed through a
#          private apt configuration with APT::Architecture set to it.
#   --list print the kernels available in SUITE (newest first) and exit.
#
# The chosen kernel is reported on stderr. Two package layouts exist:
#   split  (Debian >= 7.2 era): linux-binary-<abi> (vmlinuz),
#          linux-modules-<abi> (.ko.xz, no modules.dep), linux-base-<abi> (config)
#   single (older): linux-image-<abi>[-unsigned] with everything inside.
set -euo pipefail
# shellcheck source=vm/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FLAVOUR="${TRACEBENCH_KERNEL_FLAVOUR:-amd64}"
KERNELS="$CACHE/kernels"
# Written last into a kernel directory: its presence means "complete".
MARKER=tracebench-kernel.env

# list_abis SUITE: ABI names (e.g. 7.2.13+deb14-amd64, 6.1.0-47-amd64) of
# FLAVOUR kernels named in SUITE's lists, newest first. Other flavours
# (cloud-, rt-) and -dbg/-unsigned helper packages do not match the pattern.
list_abis() {
	local suite="$1"
	apt_cache_suite "$suite" pkgnames linux- |
		sed -nE "s/^linux-(binary|image)-([0-9][0-9a-z.+~]*(-[0-9][0-9a-z.+~]*)?-${FLAVOUR})(-unsigned)?\$/\\2/p" |
		sort -u -V -r
}

# matches SEL ABI: true if ABI is SEL or starts with SEL followed by a
# separator, so "7.2" matches 7.2.13+deb14-amd64 but not 7.20.1-amd64.
matches() {
	local sel="$1" abi="$2"
	[[ "$abi" == "$sel" || "$abi" == "$sel".* || "$abi" == "$sel"+* || "$abi" == "$sel"-* || "$abi" == "$sel"~* ]]
}

# available SUITE PKG: true if PKG has a downloadable version in SUITE
# (pkgnames also lists names that only exist as dependencies).
# The record is captured first: "apt-cache | grep -q" can kill apt-cache
# with SIGPIPE, which pipefail turns into a false "not available".
available() {
	local rec
	rec="$(pkg_record "$1" "$2")"
	[[ "$rec" == *$'\n'Filename:* ]]
}

# pkg_record SUITE PKG: the candidate's apt-cache record (empty if none).
pkg_record() {
	apt-cache -c "$(apt_dir "$1")/apt.conf" show --no-all-versions "$2" 2>/dev/null || true
}

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

# resolve SUITE SEL: print "<abi> <layout> <pkg>..." of the newest complete
# kernel in SUITE matching SEL.
resolve() {
	local suite="$1" sel="$2" abi set
	while read -r abi; do
		matches "$sel" "$abi" || continue
		set="$(layout_pkgs "$suite" "$abi")"
		if [[ -n "$set" ]]; then
			echo "$abi $set"
			return 0
		fi
		log "skipping $abi: suite '$suite' lacks some of its packages"
	done < <(list_abis "$suite")
	die "no complete $FLAVOUR kernel matching version '$sel' in suite '$suite' (try: vm/kernel.sh --list $suite)"
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
	cat >"$tmp/root/$MARKER" <<EOF
ABI=$abi
PKG_VERSION=$pkgver
SUITE=$suite
ARCH=${FLAVOUR##*-}
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

# choose VAR LABEL VALUE: set VAR (suite, sel, FLAVOUR) from an argument;
# a second, different value for it is an error, not a silent override.
declare -A CHOSEN=()
choose() {
	local prev="${CHOSEN[$1]:-}"
	[[ -n "$3" && "$3" != -* ]] || die "no kernel $2 given (got '$3')"
	[[ -z "$prev" || "$prev" == "$3" ]] || die "conflicting kernel $2: '$prev' and '$3' (give it once)"
	CHOSEN[$1]="$3"
	printf -v "$1" '%s' "$3"
}

main() {
	local suite="${TRACEBENCH_KERNEL_SUITE:-sid}" sel="${TRACEBENCH_KERNEL_VERSION:-7}" list=0 rest
	while (($#)); do
		case "$1" in
		--suite) choose suite suite "${2-}"; shift ;;
		--suite=*) choose suite suite "${1#*=}" ;;
		--version) choose sel "version selector" "${2-}"; shift ;;
		--version=*) choose sel "version selector" "${1#*=}" ;;
		--flavour) choose FLAVOUR flavour "${2-}"; shift ;;
		--flavour=*) choose FLAVOUR flavour "${1#*=}" ;;
		--list) list=1 ;;
		-h | --help) usage 0 ;;
		-*) log "unknown option '$1'"; usage ;;
		*)
			choose suite suite "${1%%:*}"
			if [[ "$1" == *:* ]]; then
				rest="${1#*:}"
				choose sel "version selector" "${rest%%:*}"
				[[ "$rest" == *:* ]] && choose FLAVOUR flavour "${rest#*:}"
			fi
			;;
		esac
		shift
	done
	check_suite "$suite"
	[[ "$sel" =~ ^[0-9][0-9a-z.+~-]*$ ]] || die "invalid kernel version selector '$sel' (expected e.g. 7, 7.2, 6.12, 7.2.13+deb14-amd64)"
	[[ "$FLAVOUR" =~ ^([a-z0-9]+-)?[a-z0-9]+$ ]] || die "invalid kernel flavour '$FLAVOUR' (expected e.g. amd64, rt-amd64, cloud-amd64, arm64)"
	need_cmd apt-get apt-cache dpkg dpkg-deb depmod flock
	if [[ "${FLAVOUR##*-}" != "$(dpkg --print-architecture)" ]]; then
		APT_ARCH="${FLAVOUR##*-}"
	fi

	apt_refresh "$suite"
	if ((list)); then
		list_abis "$suite"
		return 0
	fi

	mkdir -p "$KERNELS"
	# Serialise concurrent callers (parallel test jobs) on the cache.
	exec 9>"$KERNELS/.lock"
	flock 9

	local resolved abi layout pkgs
	# Separate assignment so a failing resolve stops the script (set -e).
	resolved="$(resolve "$suite" "$sel")"
	read -r abi layout pkgs <<<"$resolved"
	if [[ -f "$KERNELS/$abi/$MARKER" ]]; then
		log "kernel $abi ($layout layout, suite $suite) cached in $KERNELS/$abi"
	else
		# shellcheck disable=SC2086 # pkgs is a space-separated package list
		fetch "$suite" "$abi" "$layout" $pkgs
		log "kernel $abi ($layout layout, suite $suite) ready in $KERNELS/$abi"
	fi
	echo "$KERNELS/$abi"
}

main "$@"
