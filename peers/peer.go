package peers

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"tracebench/histogram"
	"tracebench/workload"
)

// Peer is one tool in one mode, e.g. funclatency-libbpf with kprobes.
type Peer struct {
	// Name is stable, e.g. "funclatency-kprobe"; benchmarks use it.
	Name string
	// Package is the Debian package of the tool, a key of Root.Versions.
	Package string
	// Design says in one line how the tool times a call.
	Design string
	// command returns the tool's command line, tracing process pid only.
	command func(pid int) []string
	// ready reports whether the output so far shows the tool attached.
	ready func(out []byte, pid int) (bool, error)
	// parse reads the histogram and the call count from the final output.
	parse func(out []byte) (Result, error)
	// probe, if set, says why the root's tool cannot run this mode.
	probe func(r *Root) error
	// after, if set, checks that the stopped tool left nothing behind.
	after func() error
	// dlopens are libraries the tool loads with dlopen (its ELF headers
	// do not name them), by soname, for Preload.
	dlopens []string
	// files, if set, are written to the root's /tmp, by name, before the
	// tool starts (e.g. a list of functions it reads).
	files map[string]string
	// observe reads from the kernel what the running tool (pid) attached;
	// nil: its BPF links, programs and maps (observeBPF).
	observe func(pid int) (Kernel, error)
	// observes, if set, says which of a process's reads the tool times
	// (fsslower: only reads of a file on its file system); nil: every
	// vfs_read call.
	observes func(workload.Op) bool
}

// All returns every peer mode the benchmarks run, in their order.
func All() []Peer {
	return []Peer{funclatencyFentry, funclatencyKprobe, bpftraceFentry, bpftraceKprobe, perfGraph, perfBPF}
}

// Conformance returns every peer mode the conformance rows hold: All's and
// those only they run (bpftrace without kprobe sessions, fsslower).
func Conformance() []Peer {
	return append(All(), bpftraceNoSession, fsslower)
}

// Lookup returns the peer called name.
func Lookup(name string) (Peer, error) {
	var names []string
	for _, p := range Conformance() {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Peer{}, fmt.Errorf("unknown peer %q (known: %s)", name, strings.Join(names, ", "))
}

// CommandLine is the tool's command line as a shell runs it, tracing the
// process in $PID; stdbuf, which only line-buffers the tool's stdout into
// the harness's file, is left out.
func (p Peer) CommandLine() string {
	args := p.command(0)
	if len(args) > 2 && args[0] == "stdbuf" {
		args = args[2:]
	}
	words := make([]string, len(args))
	for i, a := range args {
		switch {
		case i > 0 && args[i-1] == "-p":
			words[i] = "$PID"
		case strings.ContainsAny(a, " \t\n'\"$*?;&|<>(){}[]\\/=!#"):
			words[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		default:
			words[i] = a
		}
	}
	return strings.Join(words, " ")
}

// ErrUnavailable is wrapped by Start's error when the root's tool cannot
// run the mode at all (e.g. built without the feature).
var ErrUnavailable = errors.New("not available in the peer root")

// Bucket is one bar of a tool's log2 histogram: Count calls took from
// LowUS (included) to HighUS (excluded) microseconds; HighUS is
// math.MaxUint64 for an open-ended last bucket.
type Bucket struct {
	LowUS, HighUS uint64
	Count         uint64
}

// Result is what a stopped peer printed, parsed.
type Result struct {
	Buckets []Bucket
	// Calls is the tool's own count of timed calls (the sum of its
	// histogram where it prints no separate count).
	Calls uint64
	// Functions are the calls per traced function, for a peer tracing
	// many (Wildcard); Probes are the probes it said it attached.
	Functions map[string]uint64
	Probes    int
	// Lost are calls the tool timed but did not record: its own count of
	// them less what its histograms hold (bcc's funclatency), exact.
	Lost uint64
	// Output is the tool's whole output, for failure messages.
	Output string
	// Notices are the output's lines that tell the user calls were lost,
	// skipped or dropped.
	Notices []Notice
}

// Slots sums the buckets into tracebench's log2 slots (histogram.Log2:
// slot 0 is [0, 2) µs, slot i is [2^i, 2^(i+1)) µs). It fails if a bucket
// spans two slots, since its calls could not be placed.
func (r Result) Slots() (histogram.Log2, error) {
	var h histogram.Log2
	for _, b := range r.Buckets {
		s := histogram.SlotOf(b.LowUS)
		_, high := histogram.SlotRange(s)
		if b.HighUS != math.MaxUint64 && b.HighUS-1 > high ||
			b.HighUS == math.MaxUint64 && s != histogram.Slots-1 && b.Count > 0 {
			return h, fmt.Errorf("bucket [%d, %d) µs spans more than log2 slot %d", b.LowUS, b.HighUS, s)
		}
		h[s] += b.Count
	}
	return h, nil
}

// BucketsOf returns h's slots as buckets, so that tracebench's own
// histograms are classed as a peer's are.
func BucketsOf(h histogram.Log2) []Bucket {
	buckets := make([]Bucket, len(h))
	for i, n := range h {
		low, high := histogram.SlotRange(i)
		if high != math.MaxUint64 {
			high++
		}
		buckets[i] = Bucket{LowUS: low, HighUS: high, Count: n}
	}
	return buckets
}

// Timeouts bound how long a peer may take to attach and to stop. A tool
// that compiles its program (bpftrace) takes minutes under emulation on a
// loaded host.
var (
	StartTimeout = 10 * time.Minute
	StopTimeout  = 5 * time.Minute
)

// pollInterval is how often readiness is looked at.
const pollInterval = 20 * time.Millisecond

// Run is a started peer.
type Run struct {
	peer Peer
	cmd  *exec.Cmd
	dir  string // holds the output file
	out  string
	// readyLen is how much the tool had printed when it was attached.
	readyLen int
	done     chan error
}

// launch mounts what the tools need inside the root, in the private mount
// namespace the process was started in (so every mount ends with it),
// lays Preload's copies (in the directory given third, if any) over the
// root (one overlay mount: a mount per file cost more than it saved),
// copies the peer's files (in the directory given second) to the root's
// /tmp, and execs the tool there. bpftrace writes its program to /tmp,
// which must be writable (the root may be read-only, as over virtme-ng's
// 9p); it also needs /dev/fd: devtmpfs has it where udev or virtme-ng
// made it, otherwise the link is added there.
const launch = `set -e
r=$1 files=$2 preload=$3; shift 3
[ -z "$preload" ] || mount -t overlay overlay -o "lowerdir=$preload:$r" "$r"
mount -t proc proc "$r/proc"
mount -t sysfs sysfs "$r/sys"
mount -t tracefs tracefs "$r/sys/kernel/tracing"
mount -t debugfs debugfs "$r/sys/kernel/debug"
mount -t bpf bpf "$r/sys/fs/bpf"
mount -t devtmpfs devtmpfs "$r/dev"
mount -t tmpfs tmpfs "$r/tmp"
cp -R "$files/." "$r/tmp/"
[ -e "$r/dev/fd" ] || ln -s /proc/self/fd "$r/dev/fd"
exec chroot "$r" "$@"`

// ErrNotAttached: the tool did not show that it was attached in the time
// it was given (StartWithin's error wraps it).
var ErrNotAttached = errors.New("not attached in time")

// Start runs the peer in root, tracing the process pid only, and returns
// once the tool shows that it is attached, or fails after StartTimeout.
func (p Peer) Start(root *Root, pid int) (*Run, error) { return p.StartWithin(root, pid, StartTimeout) }

// StartWithin is Start failing after limit instead, the tool killed, with
// an error wrapping ErrNotAttached.
func (p Peer) StartWithin(root *Root, pid int, limit time.Duration) (_ *Run, err error) {
	if p.probe != nil {
		if err := p.probe(root); err != nil {
			return nil, err
		}
	}
	preload, err := root.preload(p.command(pid), p.dlopens)
	if err != nil {
		return nil, err
	}
	r := &Run{peer: p, done: make(chan error, 1)}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	if r.dir, err = os.MkdirTemp("", "tracebench-peer-"); err != nil {
		return nil, err
	}
	r.out = filepath.Join(r.dir, "output")
	files := filepath.Join(r.dir, "files")
	if err := p.writeFiles(files); err != nil {
		return nil, err
	}
	f, err := os.Create(r.out)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	args := append([]string{"-c", launch, "peer-launch", root.Dir, files, preload}, p.command(pid)...)
	r.cmd = exec.Command("/bin/sh", args...)
	r.cmd.Stdout, r.cmd.Stderr = f, f
	// CLONE_NEWNS: Go also makes / private (MS_REC|MS_PRIVATE) in the
	// child, so no mount of the launcher propagates out.
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", p.Name, err)
	}
	go func() { r.done <- r.cmd.Wait() }()
	if err := r.waitReady(pid, limit); err != nil {
		return nil, err
	}
	return r, nil
}

// writeFiles writes p's files into dir, which it creates.
func (p Peer) writeFiles(dir string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	for name, content := range p.files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Pid is the tool's process ID (the launcher execs it).
func (r *Run) Pid() int { return r.cmd.Process.Pid }

func (r *Run) waitReady(pid int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		out, err := os.ReadFile(r.out)
		if err != nil {
			return err
		}
		ok, err := r.peer.ready(out, pid)
		if err != nil {
			return fmt.Errorf("%s: %w; output: %s", r.peer.Name, err, tail(out))
		}
		if ok {
			r.readyLen = len(out)
			return nil
		}
		select {
		case err := <-r.done:
			r.done <- err
			out, _ := os.ReadFile(r.out)
			return fmt.Errorf("%s exited before it was attached (%v): %s", r.peer.Name, err, tail(out))
		case <-time.After(pollInterval):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s %w (%v); output: %s", r.peer.Name, ErrNotAttached, limit, tail(out))
		}
	}
}

// WaitQuiet waits until the tool's output has not grown for settle: it
// has printed what it had buffered (fsslower's events wait in a perf
// buffer and are dropped unread when it exits). It fails after timeout.
func (r *Run) WaitQuiet(settle, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	size, since := int64(-1), time.Now()
	for {
		st, err := os.Stat(r.out)
		if err != nil {
			return err
		}
		if st.Size() != size {
			size, since = st.Size(), time.Now()
		}
		switch {
		case time.Since(since) >= settle:
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("%s still printing after %v (%d bytes)", r.peer.Name, timeout, size)
		}
		time.Sleep(pollInterval)
	}
}

// Observe reads from the kernel what the running tool attached and the
// counters of those attachments.
func (r *Run) Observe() (Kernel, error) {
	observe := r.peer.observe
	if observe == nil {
		observe = observeBPF
	}
	k, err := observe(r.cmd.Process.Pid)
	if err != nil {
		return k, fmt.Errorf("%s: %w", r.peer.Name, err)
	}
	return k, nil
}

// Stop interrupts the tool (SIGINT, as Ctrl-C), waits for it to print its
// summary and exit, and parses that. It fails if the tool does not exit
// cleanly within StopTimeout, or left something behind.
func (r *Run) Stop() (Result, error) {
	// bpftrace -p exits by itself once the traced process has exited,
	// printing its maps as on SIGINT.
	if err := r.cmd.Process.Signal(os.Interrupt); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return Result{}, fmt.Errorf("interrupt %s: %w", r.peer.Name, err)
	}
	var waitErr error
	select {
	case waitErr = <-r.done:
		r.done <- waitErr
	case <-time.After(StopTimeout):
		r.Close()
		return Result{}, fmt.Errorf("%s did not exit within %v of SIGINT; killed", r.peer.Name, StopTimeout)
	}
	out, err := os.ReadFile(r.out)
	if err != nil {
		return Result{}, err
	}
	if waitErr != nil {
		return Result{}, fmt.Errorf("%s: %v; output: %s", r.peer.Name, waitErr, tail(out))
	}
	if r.peer.after != nil {
		if err := r.peer.after(); err != nil {
			return Result{}, fmt.Errorf("%s: %w", r.peer.Name, err)
		}
	}
	res, err := r.peer.result(out, r.readyLen)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w; output: %s", r.peer.Name, err, tail(out))
	}
	return res, nil
}

// result parses the whole output of a tool that printed readyLen bytes
// before it was attached. An output that ends inside a line was cut short.
func (p Peer) result(out []byte, readyLen int) (Result, error) {
	if len(out) > 0 && out[len(out)-1] != '\n' {
		return Result{}, fmt.Errorf("output cut short in a line")
	}
	res, err := p.parse(out)
	if err != nil {
		return Result{}, err
	}
	res.Output = string(out)
	res.Notices = lossNotices(out[min(readyLen, len(out)):])
	return res, nil
}

// Notice is a line of a tool's output that tells its user calls were
// lost.
type Notice struct {
	Line string
	// Calls is how many calls the line accounts for; 0 when it says calls
	// were lost without how many.
	Calls uint64
}

// lossWords mark a line of a tool's output that tells its user calls were
// lost, e.g. libbpf-tools' "lost N events on CPU #C".
var lossWords = []string{"lost", "drop", "miss", "full", "skip", "overflow", "overrun"}

// lostEvents is the count of "lost N events" (libbpf-tools' perf buffer
// callback).
var lostEvents = regexp.MustCompile(`(?i)lost (\d+) events`)

// lossNotices returns the lines of out that tell of lost calls: bpftrace's
// JSON messages of a failed helper call (one call's state each: a
// map_update_elem of its start time failing with E2BIG is bpftrace's "Map
// full") and of lost events, and any line with a lossWords word. Pass the
// output printed once the tool was attached: what bpftrace says while
// compiling the script is not about calls.
func lossNotices(out []byte) []Notice {
	var notices []Notice
	for line := range strings.Lines(string(out)) {
		line = strings.TrimSpace(line)
		var msg struct {
			Type string `json:"type"`
			Data struct {
				Events uint64 `json:"events"`
			} `json:"data"`
		}
		lower := strings.ToLower(line)
		switch {
		case json.Unmarshal([]byte(line), &msg) == nil && msg.Type == "helper_error":
			notices = append(notices, Notice{Line: line, Calls: 1})
		case msg.Type == "lost_events":
			notices = append(notices, Notice{Line: line, Calls: msg.Data.Events})
		case lostEvents.MatchString(line):
			n, _ := strconv.ParseUint(lostEvents.FindStringSubmatch(line)[1], 10, 64)
			notices = append(notices, Notice{Line: line, Calls: n})
		case msg.Type == "" && slices.ContainsFunc(lossWords, func(w string) bool { return strings.Contains(lower, w) }):
			notices = append(notices, Notice{Line: line})
		}
	}
	return notices
}

// Close stops the tool if it still runs: SIGINT first, as the tools undo
// their kernel settings on it (perf killed outright leaves its tracefs
// instance tracing vfs_read), SIGKILL after StopTimeout. It then checks
// what the tool must leave behind and removes its output. It may be called
// more than once and after Stop.
func (r *Run) Close() error {
	var errs []error
	if r.cmd != nil && r.cmd.Process != nil {
		select {
		case err := <-r.done:
			r.done <- err
		default:
			r.cmd.Process.Signal(os.Interrupt)
			select {
			case err := <-r.done:
				r.done <- err
			case <-time.After(StopTimeout):
				r.cmd.Process.Kill()
				r.done <- <-r.done
				errs = append(errs, fmt.Errorf("%s ignored SIGINT for %v; killed", r.peer.Name, StopTimeout))
			}
		}
		if r.peer.after != nil {
			errs = append(errs, r.peer.after())
		}
	}
	if r.dir != "" {
		errs = append(errs, os.RemoveAll(r.dir))
	}
	return errors.Join(errs...)
}

// tail returns the end of a tool's output for an error message.
func tail(out []byte) string {
	const keep = 2000
	s := strings.TrimSpace(string(out))
	if len(s) > keep {
		s = "..." + s[len(s)-keep:]
	}
	return s
}
