# shellcheck shell=bash
# vm/lib.sh - functions shared by the vm/ scripts. Source it, do not run it.
#
# Main job: a PRIVATE apt configuration per extra Debian suite (sid,
# experimental, trixie, trixie-backports, ...). The machine's own apt only
# knows bookworm and must not be changed, so every suite gets its own source
# list, package lists and caches under a git-ignored directory, while reusing
# the mirror URI and keyring the system is already configured with.

if [[ -n "${_TRACEBENCH_VM_LIB:-}" ]]; then
	return 0
fi
_TRACEBENCH_VM_LIB=1

# Repo root = parent of the directory holding this file, so the scripts work
# from any working directory.
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Everything downloaded or generated lives here (git-ignored via .cache/).
# Made absolute: its paths are also used inside the guest, from another cwd.
CACHE="$(realpath -m "${TRACEBENCH_CACHE:-$REPO/.cache}")"
# Package lists older than this are refreshed; kernels move slowly enough.
APT_MAX_AGE_HOURS="${TRACEBENCH_APT_MAX_AGE_HOURS:-24}"
# System deb822 source file the mirror URI and keyring are read from.
SYSTEM_SOURCES="${TRACEBENCH_SYSTEM_SOURCES:-/etc/apt/sources.list.d/debian.sources}"

export PATH="/usr/local/go/bin:/usr/local/sbin:/usr/sbin:/sbin:$PATH"

log() { printf 'vm: %s\n' "$*" >&2; }
die() {
	printf 'vm: error: %s\n' "$*" >&2
	exit 1
}

# usage [STATUS]: print the running script's header comment (the comment
# lines after its #! line, without their "# ") on stderr and exit STATUS
# (default 2).
usage() {
	awk 'NR == 1 { next } !/^#/ { exit } { sub(/^# ?/, ""); print }' "$0" >&2
	exit "${1:-2}"
}

# fail MESSAGE: a guest runner's usage error (exit 125, as vm/run.sh documents).
fail() {
	printf 'vm: error: %s\n' "$*" >&2
	exit 125
}

# need_value OPTION [VALUE]: fail unless OPTION was given a non-empty VALUE.
need_value() {
	[[ $# -ge 2 && -n "$2" && "$2" != --* ]] || fail "$1 needs a value"
}

# env_name NAME[=VALUE]: fail unless NAME is a valid environment variable name.
env_name() {
	[[ "${1%%=*}" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || fail "--env '$1': '${1%%=*}' is not a variable name"
}

# Guest size bounds: below 512 MiB the kernel and the Go test binaries do
# not fit; QEMU's x86 and arm64 virt machines take at most 255 vCPUs here.
GUEST_MIN_MIB=512
GUEST_MAX_CPUS=255

# check_guest_size MEMORY CPUS: fail unless MEMORY (QEMU's -m: a number of
# MiB, or with a K/M/G/T suffix) is at least GUEST_MIN_MIB and at most 4x
# this host's RAM + swap (QEMU takes guest memory as the guest touches it,
# so a guest a little larger than a small host still boots; above RAM + swap
# it only warns) and CPUS is between 1 and GUEST_MAX_CPUS.
check_guest_size() {
	local memory="$1" cpus="$2" mib host_mib
	[[ "$memory" =~ ^([0-9]{1,9})([KMGT]?)$ ]] || fail "invalid memory size '$memory' (expected e.g. 2G or 2048M)"
	mib=$((10#${BASH_REMATCH[1]}))
	case "${BASH_REMATCH[2]}" in
	K) mib=$((mib / 1024)) ;;
	G) mib=$((mib * 1024)) ;;
	T) mib=$((mib * 1024 * 1024)) ;;
	esac
	host_mib=$(($(awk '/^(MemTotal|SwapTotal):/ {kb += $2} END {print kb}' /proc/meminfo) / 1024))
	((mib >= GUEST_MIN_MIB)) || fail "memory size '$memory' is below the guest's minimum of ${GUEST_MIN_MIB}M"
	((mib <= 4 * host_mib)) || fail "memory size '$memory' is more than 4x this host's ${host_mib}M of RAM + swap"
	((mib <= host_mib)) || log "warning: memory size '$memory' is more than this host's ${host_mib}M of RAM + swap"
	[[ "$cpus" =~ ^[1-9][0-9]{0,2}$ ]] && ((cpus <= GUEST_MAX_CPUS)) ||
		fail "invalid CPU count '$cpus' (expected 1 to $GUEST_MAX_CPUS)"
}

need_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || die "required command '$c' not found (run vm/deps.sh?)"
	done
}

# Suite names end up in paths and apt options: accept only plain names.
check_suite() {
	[[ "$1" =~ ^[a-z][a-z0-9-]*$ ]] || die "invalid Debian suite name '$1' (expected e.g. sid, experimental, trixie-backports)"
}

# mirror_field FIELD: value of FIELD (URIs or Signed-By) in the first stanza of
# the system's deb822 sources whose URI is not a security mirror (security
# mirrors do not carry sid/experimental/backports).
mirror_field() {
	local field="$1"
	[[ -r "$SYSTEM_SOURCES" ]] || die "cannot read $SYSTEM_SOURCES to find the Debian mirror (set TRACEBENCH_SYSTEM_SOURCES)"
	awk -v want="$field" '
		function flush() {
			if (uri != "" && uri !~ /-security/ && !done) { print (want == "URIs" ? uri : key); done = 1 }
			uri = ""; key = ""
		}
		/^[[:space:]]*$/ { flush(); next }
		/^URIs:/ { uri = $2 }
		/^Signed-By:/ { key = $2 }
		END { flush() }
	' "$SYSTEM_SOURCES"
}

# APT_ARCH: the Debian architecture the private apt configurations list
# (e.g. arm64 for an arm64 guest kernel); empty means the host's. It only
# sets APT::Architecture in the private configuration: the system's dpkg
# architectures are not changed.
APT_ARCH="${APT_ARCH:-}"

# apt_dir SUITE: root of the private apt state for SUITE (and APT_ARCH).
apt_dir() {
	if [[ -n "$APT_ARCH" ]]; then
		printf '%s/apt-%s-%s' "$CACHE" "$1" "$APT_ARCH"
	else
		printf '%s/apt-%s' "$CACHE" "$1"
	fi
}

# apt_arch_conf: the private configuration's architecture lines, if any.
apt_arch_conf() {
	[[ -n "$APT_ARCH" ]] || return 0
	[[ "$APT_ARCH" =~ ^[a-z0-9]+$ ]] || die "invalid Debian architecture '$APT_ARCH' (expected e.g. amd64, arm64)"
	printf 'APT::Architecture "%s";\nAPT::Architectures { "%s"; };\n' "$APT_ARCH" "$APT_ARCH"
}

# apt_setup SUITE: (re)write the private sources + apt.conf for SUITE.
# Cheap and idempotent; rewritten each time so a changed mirror is picked up.
apt_setup() {
	local suite="$1" dir uri key
	check_suite "$suite"
	dir="$(apt_dir "$suite")"
	uri="$(mirror_field URIs)"
	key="$(mirror_field Signed-By)"
	[[ -n "$uri" ]] || die "no non-security 'URIs:' line found in $SYSTEM_SOURCES"
	[[ -n "$key" && -r "$key" ]] || die "keyring '$key' from $SYSTEM_SOURCES is missing or unreadable"
	mkdir -p "$dir/sources.list.d" "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/debs"
	cat >"$dir/sources.list.d/$suite.sources.tmp" <<EOF
Types: deb
URIs: $uri
Suites: $suite
Components: main
Signed-By: $key
Targets: Packages
EOF
	mv -f "$dir/sources.list.d/$suite.sources.tmp" "$dir/sources.list.d/$suite.sources"
	# SourceList points at a non-existent file so only SourceParts (our one
	# deb822 file) is read; "Targets: Packages" skips the host's extra index
	# targets (appstream metadata, icons) that we never use. Sandbox user
	# root: _apt may not be able to write into a cache dir below a root-owned
	# work tree. No translations needed. The package cache is re-enabled
	# (container images often turn it off) because each apt-cache call
	# otherwise re-parses the lists (~0.7 s).
	cat >"$dir/apt.conf.tmp" <<EOF
Dir::Etc::SourceList "$dir/sources.list.none";
Dir::Etc::SourceParts "$dir/sources.list.d";
Dir::State::Lists "$dir/lists";
Dir::Cache "$dir/cache";
Dir::Cache::archives "$dir/cache/archives";
Dir::Cache::pkgcache "pkgcache.bin";
Dir::Cache::srcpkgcache "";
APT::Sandbox::User "root";
Acquire::Languages "none";
APT::Get::List-Cleanup "true";
EOF
	apt_arch_conf >>"$dir/apt.conf.tmp"
	mv -f "$dir/apt.conf.tmp" "$dir/apt.conf"
}

# apt_refresh SUITE: apt-get update for SUITE unless the lists are younger
# than APT_MAX_AGE_HOURS. TRACEBENCH_APT_REFRESH=1 forces an update.
APT_REFRESHED=" "
apt_refresh() {
	local suite="$1" dir stamp
	# Once per script run. Call it from the main shell before any $(...) or
	# <(...) query: a failure inside those cannot stop the script.
	[[ "$APT_REFRESHED" == *" $(apt_dir "$suite") "* ]] && return 0
	[[ "$APT_MAX_AGE_HOURS" =~ ^[0-9]+$ ]] || die "TRACEBENCH_APT_MAX_AGE_HOURS='$APT_MAX_AGE_HOURS' is not a whole number of hours"
	apt_setup "$suite"
	dir="$(apt_dir "$suite")"
	stamp="$dir/lists/.tracebench-updated"
	if [[ "${TRACEBENCH_APT_REFRESH:-0}" != 1 && -e "$stamp" ]] &&
		[[ -n "$(find "$stamp" -mmin "-$((APT_MAX_AGE_HOURS * 60))" 2>/dev/null)" ]]; then
		APT_REFRESHED+="$dir "
		return 0
	fi
	log "updating package lists for suite '$suite' (private apt config in $dir)"
	if ! apt-get -c "$dir/apt.conf" -q update >&2; then
		# Offline or mirror hiccup: stale lists still resolve cached kernels.
		if [[ -e "$stamp" ]]; then
			log "warning: apt-get update for suite '$suite' failed; using the lists from $(date -r "$stamp" '+%F %R')"
			APT_REFRESHED+="$dir "
			return 0
		fi
		die "apt-get update for suite '$suite' failed (does the suite exist on the mirror?)"
	fi
	touch "$stamp"
	APT_REFRESHED+="$dir "
}

# apt_suite SUITE ARGS...: apt-get with SUITE's private configuration.
# Lists are refreshed first if stale. Useful: download, install ./x.deb.
apt_suite() {
	local suite="$1"
	shift
	apt_refresh "$suite"
	apt-get -c "$(apt_dir "$suite")/apt.conf" "$@"
}

# apt_cache_suite SUITE ARGS...: apt-cache with SUITE's private configuration.
apt_cache_suite() {
	local suite="$1"
	shift
	apt_refresh "$suite"
	apt-cache -c "$(apt_dir "$suite")/apt.conf" "$@"
}

# pkg_installed PKG: true if dpkg reports PKG as installed on the host.
pkg_installed() {
	[[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" == installed ]]
}
