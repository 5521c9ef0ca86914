#!/usr/bin/env bash
# Writes bpf/vmlinux.h from the BTF of a kernel image (a bzImage "vmlinuz"
# with a zstd payload, as Debian's 7.x kernels ship), so that the BPF
# sources compile against the types of the kernel they trace.
# Usage: bpf/vmlinux.sh VMLINUZ [OUT]
set -euo pipefail

vmlinuz=${1:?usage: $0 VMLINUZ [OUT]}
out=${2:-$(dirname "$0")/vmlinux.h}
[ -r "$vmlinuz" ] || { echo "vmlinux.sh: cannot read kernel image $vmlinuz" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The compressed ELF starts at the first zstd frame magic (28 b5 2f fd).
offset=$(LC_ALL=C grep -aobP '\x28\xb5\x2f\xfd' "$vmlinuz" | head -n 1 | cut -d: -f1)
[ -n "$offset" ] || { echo "vmlinux.sh: no zstd payload in $vmlinuz" >&2; exit 1; }
# zstd stops with an error at the trailing non-zstd bytes; the ELF is whole by then.
tail -c +"$((offset + 1))" "$vmlinuz" | zstd -dcq > "$tmp/vmlinux" 2>/dev/null || true
bpftool btf dump file "$tmp/vmlinux" format c > "$tmp/vmlinux.h"
mv "$tmp/vmlinux.h" "$out"
echo "vmlinux.sh: wrote $out from $vmlinuz" >&2
