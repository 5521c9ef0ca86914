#!/usr/bin/env python3
"""fgidx.py - print the fgraph slot state of the running kernel, read from
/proc/kcore: fprobe_graph_ops.idx (the fgraph_array index fprobe's fgraph_ops
holds), fgraph_array_bitmask and which slots hold which fgraph_ops.

The offset of idx in struct fgraph_ops (0xe8) is the one fprobe_return of
Debian's 7.2.13+deb14-amd64 loads (mov 0xe8(%rbp),%edi before calling
fgraph_retrieve_data); it is specific to that build."""
import struct
import sys

IDX_OFFSET = 0xE8


def symbols(names):
    found = {}
    with open("/proc/kallsyms") as f:
        for line in f:
            p = line.split()
            if len(p) >= 3 and p[2] in names and p[2] not in found:
                found[p[2]] = int(p[0], 16)
    return found


def loads():
    with open("/proc/kcore", "rb") as f:
        eh = f.read(64)
        phoff, = struct.unpack_from("<Q", eh, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", eh, 0x36)
        f.seek(phoff)
        out = []
        for _ in range(phnum):
            ph = f.read(phentsize)
            ptype, _flags, off, vaddr, _pa, filesz = struct.unpack_from("<IIQQQQ", ph, 0)
            if ptype == 1:
                out.append((vaddr, filesz, off))
        return out


def read(segs, addr, n):
    for vaddr, size, off in segs:
        if vaddr <= addr and addr + n <= vaddr + size:
            with open("/proc/kcore", "rb") as f:
                f.seek(off + addr - vaddr)
                return f.read(n)
    raise ValueError("address %#x not in /proc/kcore" % addr)


def main():
    want = ["fprobe_graph_ops", "fgraph_array", "fgraph_array_bitmask", "fgraph_stub"]
    s = symbols(set(want))
    segs = loads()
    idx, = struct.unpack("<i", read(segs, s["fprobe_graph_ops"] + IDX_OFFSET, 4))
    mask, = struct.unpack("<Q", read(segs, s["fgraph_array_bitmask"], 8))
    arr = struct.unpack("<16Q", read(segs, s["fgraph_array"], 16 * 8))
    names = {s["fprobe_graph_ops"]: "fprobe", s.get("fgraph_stub", -1): "stub", 0: "-"}
    slots = " ".join("%d:%s" % (i, names.get(p, "other")) for i, p in enumerate(arr) if names.get(p) not in ("stub", "-"))
    print("fgraph: fprobe_graph_ops.idx=%d bitmask=%#x slots[%s]%s" % (idx, mask, slots, " " + " ".join(sys.argv[1:]) if len(sys.argv) > 1 else ""))


main()
