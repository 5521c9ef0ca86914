#!/usr/bin/env python3
"""A conformance row as a standalone workload, for a tool's maintainer.

    python3 repro.py ROW & PID=$!     # then attach the tool to $PID

It waits WAIT seconds (default 8) for the tool to attach, makes the row's
read(2) calls (each one vfs_read call), prints how many to stderr, and
lingers 2 s so the tool can print before the process exits (the
interpreter may add a short read of its own). Python threads
take turns on the GIL outside read(2): the rows with many threads at once
(recursion-preemption) are gentler than tracebench's, which spins on
locked OS threads. distinct-threads-over-map needs
`sysctl kernel.pid_max=4194304` (systemd's default) so that no thread ID
repeats; pid-namespace runs under `unshare --pid --fork`, and the tool
needs the reader's PID outside the namespace. The data file goes to TMPDIR
(default /tmp; on ext4 for fsslower -t ext4).
"""
import os
import signal
import sys
import threading
import time

threading.stack_size(256 << 10)
calls = 0
lock = threading.Lock()


def count(n):
    global calls
    with lock:
        calls += n


# The file the rows read, 4 KiB, written before the tool attaches, in
# TMPDIR (fsslower -t ext4 needs it on ext4).
DATA = os.path.join(os.environ.get("TMPDIR", "/tmp"), "tracebench-repro.%d" % os.getpid())


def file_reads(n, size):
    fd = os.open(DATA, os.O_RDONLY)
    for _ in range(n):
        os.pread(fd, size, 0)
    os.close(fd)
    count(n)


def blocked_reads(threads, delay, waves=1):
    """threads readers blocked in a pipe read at once, answered delay
    seconds later one byte at a time; waves times on the same threads."""
    r, w = os.pipe()
    go = threading.Barrier(threads + 1)

    def reader():
        for _ in range(waves):
            go.wait()
            os.read(r, 1)

    ts = [threading.Thread(target=reader) for _ in range(threads)]
    for t in ts:
        t.start()
    for _ in range(waves):
        go.wait()
        # A moment for every reader to block, then the caller's delay.
        time.sleep(0.05 + threads * 0.0005 + delay)
        for _ in range(threads):
            os.write(w, b"x")
    for t in ts:
        t.join()
    count(threads * waves)


def interrupted_reads(n, delay):
    class Interrupted(Exception):
        pass

    def raise_(*_):
        raise Interrupted

    signal.signal(signal.SIGALRM, raise_)
    r, _w = os.pipe()
    for _ in range(n):
        signal.setitimer(signal.ITIMER_REAL, delay)
        try:
            os.read(r, 1)  # EINTR once the handler raises
        except Interrupted:
            pass
    count(n)


def killed_readers(threads, delay):
    r, _w = os.pipe()
    for _ in range(threads):
        threading.Thread(target=os.read, args=(r, 1)).start()
    time.sleep(delay)
    print("%d vfs_read calls, blocked when SIGKILLed" % threads, file=sys.stderr)
    os.kill(os.getpid(), signal.SIGKILL)


def on_threads(threads, work, early=None):
    """work on threads started at once; early, a Barrier, makes them exist
    before the wait (the tool attaches to a process that has them)."""
    ts = [threading.Thread(target=lambda: (early and early.wait(), work())) for _ in range(threads)]
    return ts


def fresh_threads(n, size):
    for _ in range(n):
        t = threading.Thread(target=file_reads, args=(1, size))
        t.start()
        t.join()


def mixed_reads():
    sibling = os.fork()  # an untraced process reading meanwhile
    if sibling == 0:
        file_reads(2000, 64)
        os._exit(0)
    file_reads(200, 4096)
    d = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
    r, _w = os.pipe()
    os.set_blocking(r, False)
    for fd in (d, d, d, r, r, r):
        try:
            os.read(fd, 64)  # EISDIR, EAGAIN
        except OSError:
            pass
    count(6)
    blocked_reads(1, 0.045)
    os.waitpid(sibling, 0)


def spinning_reads(n, size, gap):
    fd = os.open(DATA, os.O_RDONLY)
    for _ in range(n):
        os.pread(fd, size, 0)
        end = time.perf_counter() + gap
        while time.perf_counter() < end:
            pass
    count(n)


def run_threads(ts):
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def main(row):
    with open(DATA, "wb") as f:
        f.write(b"x" * 4096)
    wait = float(os.environ.get("WAIT", "8"))
    ncpu = os.cpu_count()
    over = max(10, 2 * ncpu) + 2  # beyond a kretprobe's default maxactive
    early, ts = None, []
    if row == "threads":
        early = threading.Barrier(9)
        ts = on_threads(8, lambda: file_reads(50, 4096), early)
        for t in ts:
            t.start()
    if row == "pid-namespace":
        early = threading.Barrier(5)
        ts = on_threads(4, lambda: file_reads(20, 4096), early)
        for t in ts:
            t.start()
    rows = {
        "calls-per-tgid": mixed_reads,
        "threads": lambda: [t.join() for t in ts],
        "late-threads": lambda: run_threads(on_threads(8, lambda: file_reads(50, 4096))),
        "killed-reader": lambda: killed_readers(8, 0.05),
        "interrupted-read": lambda: interrupted_reads(3, 0.05),
        "blocked-over-map": lambda: blocked_reads(4200, 0.1),
        "distinct-threads-over-map": lambda: fresh_threads(103400, 64),
        "missed-returns-second-wave": lambda: blocked_reads(over, 0.05, waves=2),
        "kretprobe-maxactive": lambda: blocked_reads(over, 0.05),
        "recursion-preemption": lambda: run_threads(on_threads(64, lambda: spinning_reads(500, 64, 0.0005))),
        "long-read": lambda: blocked_reads(1, 4.5),
        "pid-namespace": lambda: (file_reads(50, 4096), [t.join() for t in ts], blocked_reads(1, 0.045)),
    }
    if row not in rows:
        sys.exit("unknown row %r (rows: %s)" % (row, ", ".join(rows)))
    print("reader pid %d (WAIT %gs)" % (os.getpid(), wait), file=sys.stderr)
    time.sleep(wait)
    if early:
        early.wait()
    rows[row]()
    os.unlink(DATA)
    print("%d vfs_read calls" % calls, file=sys.stderr)
    time.sleep(2)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
