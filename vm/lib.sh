# shellcheck shell=bash
# vm/lib.sh - functions shared by the vm/ scripts. Source it, do not run it.
#
# Besides logging and usage: the guest runners' options and exit protocol,
# kernel selectors, and a PRIVATE apt configuration per extra Debian suite
# (sid, experimental, trixie, trixie-backports, ...). The machine's own apt
# only knows bookworm and must not be changed, so every suite gets its own
# source list, package lists and caches under a git-ignored directory, while
# reusing the mirror URI and keyring the system is already configured with.

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

# no_option ARGS...: for a script without options of its own (see
# parse_runner_args, parse_kernel_args).
no_option() { return 1; }

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

# ---- The guest runners: vm/run.sh and vm/run-initramfs.sh ----

# Their exit statuses besides the guest command's own (vm/run.sh's header).
EXIT_TIMEOUT=124 EXIT_NO_STATUS=125 EXIT_USAGE=125

# fail MESSAGE: a guest runner's usage error.
fail() {
	printf 'vm: error: %s\n' "$*" >&2
	exit "$EXIT_USAGE"
}

# The options both runners take; a runner sets its defaults before
# parse_runner_args. ENV_ARGS are the names given with --env, COMMAND the
# words after --.
KERNEL="" MEMORY=2G CPUS=2 TIMEOUT=0 VERBOSE=0
ENV_ARGS=() COMMAND=()

# parse_runner_args OWN_OPTION ARGS...: parse a runner's command line into
# the variables above. An option not shared goes to OWN_OPTION ARGS..., the
# runner's function, which sets TAKES to the number of words it used, or
# returns 1 for an option it does not know either.
# shellcheck disable=SC2034 # KERNEL, VERBOSE and COMMAND are the runners'
parse_runner_args() {
	local own="$1"
	shift
	while (($#)); do
		TAKES=1
		case "$1" in
		--kernel) need_value "$@"; KERNEL="$2"; TAKES=2 ;;
		--memory) need_value "$@"; MEMORY="$2"; TAKES=2 ;;
		--cpus) need_value "$@"; CPUS="$2"; TAKES=2 ;;
		--timeout) need_value "$@"; TIMEOUT="$2"; TAKES=2 ;;
		--env) need_value "$@"; env_arg "$2"; TAKES=2 ;;
		--verbose) VERBOSE=1 ;;
		-h | --help) usage 0 ;;
		--) shift; break ;;
		*) "$own" "$@" || { log "unexpected argument '$1' (the command goes after --)"; usage "$EXIT_USAGE"; } ;;
		esac
		shift "$TAKES"
	done
	COMMAND=("$@")
	(($#)) || { log "no command given (it goes after --)"; usage "$EXIT_USAGE"; }
	check_guest_size "$MEMORY" "$CPUS"
	[[ "$TIMEOUT" =~ ^[0-9]+$ ]] || fail "invalid timeout '$TIMEOUT' (whole seconds, 0 = none)"
}

# need_value OPTION [VALUE]: fail unless OPTION was given a non-empty VALUE.
need_value() {
	[[ $# -ge 2 && -n "$2" && "$2" != --* ]] || fail "$1 needs a value"
}

# env_arg NAME[=VALUE]: --env's argument: NAME goes to the guest command,
# set to VALUE if given. Fails unless NAME is a variable name.
env_arg() {
	local name="${1%%=*}"
	[[ "$name" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || fail "--env '$1': '$name' is not a variable name"
	if [[ "$1" == *=* ]]; then
		export "$name=${1#*=}"
	fi
	ENV_ARGS+=("$name")
}

# env_exports PATTERN NAME...: export lines for the guest's script, each
# value quoted for the shell: the host variables whose names match
# PATTERN, then the NAMEs.
env_exports() {
	local pattern="$1" name
	shift
	while IFS= read -r name; do
		[[ "$name" =~ $pattern ]] && printf 'export %s=%q\n' "$name" "${!name}"
	done < <(compgen -e)
	for name in "$@"; do
		printf 'export %s=%q\n' "$name" "${!name-}"
	done
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

# kernel_release IMAGE: the kernel's release (uname -r), from the image's
# header (an x86 bzImage carries it), else the ABI in the kernel marker
# beside the image (an arm64, riscv64 or s390x image has none, nor has
# ppc64el's ELF, whose "version 1" is the ELF's); empty if neither tells.
kernel_release() {
	local r marker
	r="$(file -bL "$1" | sed -nE 's/^Linux kernel .*[Vv]ersion ([^ ]+).*/\1/p')"
	marker="$(dirname "$1")/$KERNEL_MARKER"
	if [[ -z "$r" && -f "$marker" ]]; then
		r="$(sed -n 's/^ABI=//p' "$marker")"
	fi
	printf '%s\n' "$r"
}

# new_run_dir NAME: make RUN_DIR, a directory of one guest run under
# $CACHE/vm-run (not /tmp: the guest's /tmp may be an overlay whose writes
# never reach the host), removed at exit, on SIGINT and SIGTERM too.
new_run_dir() {
	mkdir -p "$CACHE/vm-run"
	# Leftovers of runs killed with SIGKILL; a day is longer than any run.
	find "$CACHE/vm-run" -mindepth 1 -maxdepth 1 -mmin +1440 -exec rm -rf {} + 2>/dev/null || true
	RUN_DIR="$(mktemp -d "$CACHE/vm-run/$1.XXXXXX")"
	# shellcheck disable=SC2064 # expand RUN_DIR now
	trap "rm -rf '$RUN_DIR'" EXIT
	# Without these, bash dies on INT/TERM without running the EXIT trap.
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

# with_timeout CMD...: run CMD, killed after TIMEOUT seconds (status 124)
# unless TIMEOUT is 0. timeout(1) runs CMD in a process group of its own,
# which a Ctrl-C or a signal to ours never reaches: SIGINT or SIGTERM to
# this shell is passed on to timeout, which passes it on to CMD (vng,
# QEMU), so no guest outlives the run; then the caller's traps run.
# With BOOT_MARK set, a guest that has not created that file within
# BOOT_LIMIT seconds is hung before its command: it is sent SIGTERM and
# BOOT_MARK.hung is created, so the caller can boot it again.
BOOT_MARK="" BOOT_LIMIT=0
with_timeout() {
	if ((TIMEOUT == 0)); then
		"$@"
		return
	fi
	local rc=0 traps
	traps="$(trap -p INT TERM)"
	WITH_TIMEOUT_PID="" WITH_TIMEOUT_SIGNALLED=0
	# Set before the start, so that no signal finds the default action.
	trap 'WITH_TIMEOUT_SIGNALLED=1; [[ -z "$WITH_TIMEOUT_PID" ]] || kill -TERM "$WITH_TIMEOUT_PID" 2>/dev/null' INT TERM
	timeout --kill-after=10 "$TIMEOUT" "$@" <&0 &
	WITH_TIMEOUT_PID=$!
	((WITH_TIMEOUT_SIGNALLED)) && kill -TERM "$WITH_TIMEOUT_PID" 2>/dev/null
	local watch=""
	if [[ -n "$BOOT_MARK" ]] && ((BOOT_LIMIT > 0)); then
		watch_boot "$WITH_TIMEOUT_PID" >/dev/null 2>&1 &
		watch=$!
	fi
	# A trapped signal ends wait early: wait again for timeout's status.
	while wait "$WITH_TIMEOUT_PID"; rc=$?; kill -0 "$WITH_TIMEOUT_PID" 2>/dev/null; do :; done
	if [[ -n "$watch" ]]; then
		kill "$watch" 2>/dev/null || true
		wait "$watch" 2>/dev/null || true
	fi
	trap - INT TERM
	eval "$traps"
	return "$rc"
}

# watch_boot PID: with_timeout's boot watchdog (see there) for timeout's PID.
watch_boot() {
	local deadline=$((SECONDS + BOOT_LIMIT))
	while kill -0 "$1" 2>/dev/null && [[ ! -e "$BOOT_MARK" ]]; do
		if ((SECONDS >= deadline)); then
			: >"$BOOT_MARK.hung"
			kill -TERM "$1"
			return
		fi
		sleep 1
	done
}

# exit_if_reported STATUS_FILE RC START LABEL: how a guest run ends, once
# the guest is gone and RC is with_timeout's status. Exits with the guest
# command's status if it is in STATUS_FILE, with 124 if the timeout killed
# the guest; else returns, and the runner says why (no_status) or boots
# again. LABEL (kernel=..., accel=...) ends each line.
exit_if_reported() {
	local file="$1" rc="$2" start="$3" label="$4" status=""
	if [[ -s "$file" ]]; then
		status="$(tr -dc '0-9' <"$file")"
	fi
	if [[ -n "$status" ]]; then
		log "guest command exited with status $status after $((SECONDS - start))s ($label)"
		exit "$status"
	fi
	if ((TIMEOUT > 0 && rc == EXIT_TIMEOUT)); then
		log "error: guest killed after the ${TIMEOUT}s timeout ($label)"
		exit "$EXIT_TIMEOUT"
	fi
}

# no_status WHY...: end a guest run that reported no status.
no_status() {
	log "error: $*"
	exit "$EXIT_NO_STATUS"
}

# ---- Kernel selection: vm/kernel.sh and vm/kernel-binary.sh ----

# A kernel selector is SUITE[:VERSION[:FLAVOUR]] (sid:7, trixie:6.12,
# sid:7:rt-amd64, sid:7:powerpc64le-64k), as matrix/kernels.tsv writes
# them, or the options --suite, --version, --flavour. Defaults: sid, 7,
# amd64, or the TRACEBENCH_KERNEL_{SUITE,VERSION,FLAVOUR} variables.
SEL_SUITE="${TRACEBENCH_KERNEL_SUITE:-sid}"
SEL_VERSION="${TRACEBENCH_KERNEL_VERSION:-7}"
SEL_FLAVOUR="${TRACEBENCH_KERNEL_FLAVOUR:-amd64}"
# Written last into a kernel directory: its presence marks it complete.
KERNEL_MARKER=tracebench-kernel.env

# parse_kernel_args OWN_OPTION ARGS...: a kernel script's command line into
# SEL_*, each part given once; then check_selection. An option not shared
# goes to OWN_OPTION ARGS..., the script's function, which sets TAKES to
# the number of words it used, or returns 1 for an option it does not know.
declare -A SEL_GIVEN=()
parse_kernel_args() {
	local own="$1" rest
	shift
	while (($#)); do
		TAKES=1
		case "$1" in
		--suite) choose SEL_SUITE suite "${2-}"; TAKES=2 ;;
		--suite=*) choose SEL_SUITE suite "${1#*=}" ;;
		--version) choose SEL_VERSION "version selector" "${2-}"; TAKES=2 ;;
		--version=*) choose SEL_VERSION "version selector" "${1#*=}" ;;
		--flavour) choose SEL_FLAVOUR flavour "${2-}"; TAKES=2 ;;
		--flavour=*) choose SEL_FLAVOUR flavour "${1#*=}" ;;
		-h | --help) usage 0 ;;
		-*) "$own" "$@" || { log "unknown option '$1'"; usage; } ;;
		*)
			choose SEL_SUITE suite "${1%%:*}"
			if [[ "$1" == *:* ]]; then
				rest="${1#*:}"
				choose SEL_VERSION "version selector" "${rest%%:*}"
				if [[ "$rest" == *:* ]]; then
					choose SEL_FLAVOUR flavour "${rest#*:}"
				fi
			fi
			;;
		esac
		shift "$TAKES"
	done
	check_selection
}

# choose VAR LABEL VALUE: set VAR from an argument; a second, different
# value for it is an error, not a silent override.
choose() {
	local prev="${SEL_GIVEN[$1]:-}"
	[[ -n "$3" && "$3" != -* ]] || die "no kernel $2 given (got '$3')"
	[[ -z "$prev" || "$prev" == "$3" ]] || die "conflicting kernel $2: '$prev' and '$3' (give it once)"
	SEL_GIVEN[$1]="$3"
	printf -v "$1" '%s' "$3"
}

# check_selection: refuse a bad suite, version selector or flavour, naming
# it; set SEL_ARCH to the flavour's Debian architecture and, if that is
# another than the host's, APT_ARCH too.
check_selection() {
	check_suite "$SEL_SUITE"
	[[ "$SEL_VERSION" =~ ^[0-9][0-9a-z.+~-]*$ ]] ||
		die "invalid kernel version selector '$SEL_VERSION' (expected e.g. 7, 7.2, 6.12, 7.2.13+deb14-amd64)"
	[[ "$SEL_FLAVOUR" =~ ^[a-z0-9]+(-[a-z0-9]+)*$ ]] ||
		die "invalid kernel flavour '$SEL_FLAVOUR' (expected e.g. amd64, rt-amd64, cloud-amd64, arm64, powerpc64le-64k)"
	flavour_arch "$SEL_FLAVOUR"
	SEL_ARCH="$FLAVOUR_ARCH"
	need_cmd dpkg
	if [[ "$SEL_ARCH" != "$(dpkg --print-architecture)" ]]; then
		APT_ARCH="$SEL_ARCH"
	fi
}

# A kernel flavour is Debian's: the end of its packages' names
# (linux-binary-7.2.13+deb14-<flavour>), [VARIANT-]KERNEL_ARCH[-PAGES]:
# rt-amd64, cloud-arm64, powerpc64le-64k. The part that names an
# architecture gives the Debian architecture its packages are built for,
# which is that part's own name but for the powerpc64le kernels of ppc64el.
# Only the architectures tracebench runs on are known: those of ARCH_TABLE.
ARCH_TABLE="$REPO/internal/arches/arches.tsv"

# arch_map NAME KEY VALUE: fill the associative array NAME with column KEY
# of each row of ARCH_TABLE (1-based, tab-separated; # comments skipped)
# mapped to its column VALUE; fail, naming the file, when it is unreadable.
arch_map() {
	local -n map="$1"
	local rows key value
	rows="$(awk -F'\t' -v k="$2" -v v="$3" '!/^#/ && NF { print $k "\t" $v }' "$ARCH_TABLE")" ||
		die "cannot read the architectures' table $ARCH_TABLE"
	while IFS=$'\t' read -r key value; do
		map[$key]="$value"
	done <<<"$rows"
}

# FLAVOUR_ARCHES: the part of a flavour that names an architecture, to its
# Debian architecture (powerpc64le: ppc64el).
declare -A FLAVOUR_ARCHES=()
arch_map FLAVOUR_ARCHES 2 1

# flavour_arch FLAVOUR: set FLAVOUR_ARCH to FLAVOUR's Debian architecture;
# fail, naming FLAVOUR, unless exactly one of its parts names one.
flavour_arch() {
	local part found=()
	for part in ${1//-/ }; do
		if [[ -n "${FLAVOUR_ARCHES[$part]:-}" ]]; then
			found+=("${FLAVOUR_ARCHES[$part]}")
		fi
	done
	case ${#found[@]} in
	1) FLAVOUR_ARCH="${found[0]}" ;;
	0) die "kernel flavour '$1' names no architecture tracebench runs on (known: $(known_flavour_arches))" ;;
	*) die "kernel flavour '$1' names more than one architecture (${found[*]})" ;;
	esac
}

# known_flavour_arches: FLAVOUR_ARCHES' words, sorted, each followed by
# its architecture where that is another name.
known_flavour_arches() {
	local word known=()
	for word in $(printf '%s\n' "${!FLAVOUR_ARCHES[@]}" | sort); do
		if [[ "$word" == "${FLAVOUR_ARCHES[$word]}" ]]; then
			known+=("$word")
		else
			known+=("$word (${FLAVOUR_ARCHES[$word]})")
		fi
	done
	local IFS=,
	printf '%s\n' "${known[*]}" | sed 's/,/, /g'
}

# version_matches VERSION ABI: true if ABI is VERSION, or starts with it
# followed by a separator (. + - ~): 7.2 matches 7.2.13+deb14-amd64 and
# 7.2~rc3-amd64 but not 7.20.1-amd64; 6.1.0 matches 6.1.0-47-amd64.
version_matches() {
	local v="$1" abi="$2"
	[[ "$abi" == "$v" || "$abi" == "$v".* || "$abi" == "$v"+* || "$abi" == "$v"-* || "$abi" == "$v"~* ]]
}

# list_abis SUITE: ABI names (e.g. 7.2.13+deb14-amd64, 6.1.0-47-amd64) of
# SEL_FLAVOUR kernels named in SUITE's lists, newest first. Other flavours
# (cloud-, rt-) and -dbg/-unsigned helper packages do not match the pattern.
list_abis() {
	apt_cache_suite "$1" pkgnames linux- |
		sed -nE "s/^linux-(binary|image)-([0-9][0-9a-z.+~]*(-[0-9][0-9a-z.+~]*)?-${SEL_FLAVOUR})(-unsigned)?\$/\\2/p" |
		sort -u -V -r
}

# resolve_kernel SUITE PACKAGES WHAT: print "<abi> <what PACKAGES SUITE ABI
# printed>" for the newest ABI of SUITE that SEL_VERSION matches and for
# which the function PACKAGES prints the packages to fetch (it prints
# nothing where SUITE lacks some); else fail, naming WHAT was looked for.
resolve_kernel() {
	local suite="$1" packages="$2" what="$3" abi set
	while read -r abi; do
		version_matches "$SEL_VERSION" "$abi" || continue
		set="$("$packages" "$suite" "$abi")"
		if [[ -n "$set" ]]; then
			echo "$abi $set"
			return 0
		fi
		log "skipping $abi: suite '$suite' lacks some of its packages"
	done < <(list_abis "$suite")
	die "no $what matching version '$SEL_VERSION' in suite '$suite' (try: vm/kernel.sh --list --flavour $SEL_FLAVOUR $suite)"
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

# ---- Private apt configurations, one per extra Debian suite ----

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

# replace_file DEST [DIR]: write stdin to a file of its own in DIR (default
# DEST's directory, the same filesystem) and rename it onto DEST, so that
# callers running side by side (bench's guests) never see, or move, each
# other's half-written file.
replace_file() {
	local dest="$1" dir="${2:-$(dirname "$1")}" tmp
	tmp="$(mktemp "$dir/.${dest##*/}.XXXXXX")"
	cat >"$tmp"
	chmod 644 "$tmp"
	mv -f "$tmp" "$dest"
}

# apt_setup SUITE: (re)write the private sources + apt.conf for SUITE.
# Cheap and idempotent; rewritten each time so a changed mirror is picked up.
apt_setup() {
	local suite="$1" dir uri key arch
	check_suite "$suite"
	dir="$(apt_dir "$suite")"
	uri="$(mirror_field URIs)"
	key="$(mirror_field Signed-By)"
	[[ -n "$uri" ]] || die "no non-security 'URIs:' line found in $SYSTEM_SOURCES"
	[[ -n "$key" && -r "$key" ]] || die "keyring '$key' from $SYSTEM_SOURCES is missing or unreadable"
	mkdir -p "$dir/sources.list.d" "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/debs"
	# Its temporary file outside sources.list.d, which apt reads.
	replace_file "$dir/sources.list.d/$suite.sources" "$dir" <<EOF
Types: deb
URIs: $uri
Suites: $suite
Components: main
Signed-By: $key
Targets: Packages
EOF
	# SourceList points at a non-existent file so only SourceParts (our one
	# deb822 file) is read; "Targets: Packages" skips the host's extra index
	# targets (appstream metadata, icons) that we never use. Sandbox user
	# root: _apt may not be able to write into a cache dir below a root-owned
	# work tree. No translations needed. The package cache is re-enabled
	# (container images often turn it off) because each apt-cache call
	# otherwise re-parses the lists (~0.7 s).
	arch="$(apt_arch_conf)"
	replace_file "$dir/apt.conf" <<EOF
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
$arch
EOF
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
