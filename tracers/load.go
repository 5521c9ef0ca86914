package tracers

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"golang.org/x/sys/unix"

	"tracebench/internal/kernelbtf"
)

// tracer is the Tracer of every mechanism: they differ only in how their
// programs are loaded and attached.
type tracer struct {
	objects  *ebpf.Collection // the maps; programs are in programs
	programs []*ebpf.Program
	links    []link.Link
	events   *ringbuf.Reader
	record   ringbuf.Record
	deadline time.Time // the ring's read deadline as last set
	cfg      Config    // as started: says which aggregates are counted
	// pendingIter is the object's task iterator counting pending calls,
	// if it has one (see pendingIterName).
	pendingIter *ebpf.Program
	// missedDetached keeps the links' missed counts read at Detach, since
	// a closed link cannot be asked any more.
	missedDetached uint64
	// missedUnknown: a link detached without a missed count (linkMissed).
	missedUnknown bool
}

// Start loads and attaches m with cfg. It returns an error wrapping
// ErrUnsupported, naming the missing feature, when the kernel cannot run
// m, and an error naming m and the bad value when cfg is invalid or asks
// what m.Can says m cannot do (a threshold finer than its resolution,
// aggregates of a mechanism that does not count every call), before
// probing the kernel. On error nothing stays loaded.
func (m Mechanism) Start(cfg Config) (_ Tracer, err error) {
	if err := cmp.Or(cfg.Validate(), m.Can.refuse(cfg)); err != nil {
		return nil, fmt.Errorf("%s: %w", m.Name, err)
	}
	if err := m.Probe(); err != nil {
		return nil, err
	}
	if err := removeMemlock(); err != nil {
		return nil, fmt.Errorf("%s: %w", m.Name, err)
	}
	if m.start != nil {
		return m.start(m, cfg)
	}
	spec, err := m.object()
	if err != nil {
		return nil, err
	}
	if err := configure(spec, cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", m.Name, err)
	}

	t := &tracer{cfg: cfg}
	defer func() {
		if err != nil {
			t.Close()
		}
	}()
	if err := t.load(spec, m.loadProgram); err != nil {
		return nil, m.classify(fmt.Errorf("%s: load: %w", m.Name, err))
	}
	progs := t.byName(spec)
	t.pendingIter = progs[pendingIterName]
	if t.links, err = m.attach(progs, cfg); err != nil {
		return nil, m.classify(fmt.Errorf("%s: attach: %w", m.Name, err))
	}
	if t.events, err = ringbuf.NewReader(t.objects.Maps["events"]); err != nil {
		return nil, fmt.Errorf("%s: ring buffer: %w", m.Name, err)
	}
	return t, nil
}

// object returns m's BPF object as bpf2go compiled it; nil for a
// mechanism without BPF programs.
func (m Mechanism) object() (*ebpf.CollectionSpec, error) {
	if !m.Can.BPF {
		return nil, nil
	}
	spec, err := m.spec()
	if err != nil {
		return nil, fmt.Errorf("%s: BPF object: %w", m.Name, err)
	}
	return spec, nil
}

// configure writes cfg into the object before load.
func configure(spec *ebpf.CollectionSpec, cfg Config) error {
	spec.Maps["events"].MaxEntries = uint32(cfg.ringBufferBytes())
	if starts, ok := spec.Maps["starts"]; ok && cfg.ThreadMapEntries != 0 {
		starts.MaxEntries = uint32(cfg.ThreadMapEntries)
	}
	if err := spec.Variables["threshold_ns"].Set(uint64(cfg.Threshold)); err != nil {
		return fmt.Errorf("threshold: %w", err)
	}
	if err := spec.Variables["target_tgid"].Set(cfg.TGID); err != nil {
		return fmt.Errorf("TGID: %w", err)
	}
	return configureAggregates(spec, cfg)
}

// load lets cilium/ebpf load the object as one collection or, with a
// loadProgram, create the maps and load each program with loadProgram
// after pointing its map references at those maps. Programs are kept in
// name order. Both resolve against the process's decoded kernel BTF.
func (t *tracer) load(spec *ebpf.CollectionSpec, loadProgram func(*ebpf.ProgramSpec) (*ebpf.Program, error)) error {
	if loadProgram == nil {
		objects, err := ebpf.NewCollectionWithOptions(spec, kernelbtf.Options())
		if err != nil {
			return err
		}
		t.objects = objects
		for _, name := range sortedKeys(spec.Programs) {
			prog, err := kernelbtf.Detach(objects, name)
			if err != nil {
				return err
			}
			t.programs = append(t.programs, prog)
		}
		return nil
	}
	mapsOnly := spec.Copy()
	mapsOnly.Programs = nil
	objects, err := ebpf.NewCollection(mapsOnly)
	if err != nil {
		return err
	}
	t.objects = objects
	for _, name := range sortedKeys(spec.Programs) {
		ps := spec.Programs[name].Copy()
		if err := associateMaps(ps.Instructions, objects.Maps); err != nil {
			return fmt.Errorf("program %s: %w", name, err)
		}
		prog, err := loadProgram(ps)
		if err != nil {
			return fmt.Errorf("program %s: %w", name, err)
		}
		t.programs = append(t.programs, prog)
	}
	return nil
}

func associateMaps(insns asm.Instructions, maps map[string]*ebpf.Map) error {
	for i := range insns {
		ins := &insns[i]
		if !ins.IsLoadFromMap() || ins.Reference() == "" {
			continue
		}
		m, ok := maps[ins.Reference()]
		if !ok {
			return fmt.Errorf("instruction %d references unknown map %q", i, ins.Reference())
		}
		if err := ins.AssociateMap(m); err != nil {
			return fmt.Errorf("instruction %d: %w", i, err)
		}
	}
	return nil
}

// byName pairs the loaded programs with their names in spec.
func (t *tracer) byName(spec *ebpf.CollectionSpec) map[string]*ebpf.Program {
	progs := make(map[string]*ebpf.Program, len(t.programs))
	for i, name := range sortedKeys(spec.Programs) {
		progs[name] = t.programs[i]
	}
	return progs
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// classify turns the kernel's refusals that mean "this kernel cannot do
// it" into an *UnsupportedError.
func (m Mechanism) classify(err error) error {
	if u := m.refusedCmpxchg(err); u != nil {
		return u
	}
	switch {
	case errors.Is(err, ebpf.ErrNotSupported):
		return m.unsupported(err.Error())
	case errors.Is(err, unix.EPERM) && os.Geteuid() == 0:
		return m.refused(err) // a policy's refusal, not a missing feature
	}
	return err
}

func (m Mechanism) unsupported(detected string) error {
	return &UnsupportedError{Mechanism: m.Name, Needs: m.Needs.String(), Kernel: KernelRelease(), Detected: detected}
}

// ReadEvent may run concurrently with Close: t.events is set once by Start
// and never reset, and ringbuf.Reader.Close interrupts a blocked read.
func (t *tracer) ReadEvent(deadline time.Time) (Event, error) { return t.readRecord(deadline) }

func (t *tracer) Stats() (Stats, error) {
	var perCPU []rawStats
	if err := t.objects.Maps["counters"].Lookup(uint32(0), &perCPU); err != nil {
		return Stats{}, fmt.Errorf("read counters: %w", err)
	}
	var s Stats
	for _, c := range perCPU {
		s.Calls += c.Calls
		s.Slow += c.Slow
		s.Errors += c.Errors
		s.Dropped += c.Dropped
		s.Lost += c.Lost
	}
	missed, known, err := t.missed()
	if err != nil {
		return Stats{}, err
	}
	if s.Missed = missed; !known {
		s.Missed, s.Unknown = 0, s.Unknown|FieldMissed
	}
	if s.Pending, err = t.pending(); err != nil {
		return Stats{}, err
	}
	return s, nil
}

// missed sums the attached links' missed counts, those read at Detach and
// the programs' recursion misses; known is false if a link's is unknown.
func (t *tracer) missed() (n uint64, known bool, err error) {
	n, known = t.missedDetached, !t.missedUnknown
	for _, l := range t.links {
		m, ok, err := linkMissed(l)
		if err != nil {
			return 0, false, err
		}
		n, known = n+m, known && ok
	}
	for _, p := range t.programs {
		st, err := p.Stats()
		if err != nil {
			return 0, false, fmt.Errorf("program stats: %w", err)
		}
		n += st.RecursionMisses
	}
	return n, known, nil
}

// pending counts the per-thread entries of calls not yet returned: with
// the object's task iterator where it has one (task local storage cannot
// be enumerated from user space), else the entries of the map "starts",
// if the mechanism has one.
func (t *tracer) pending() (uint64, error) {
	if t.pendingIter != nil {
		return countPendingTasks(t.pendingIter)
	}
	starts, ok := t.objects.Maps["starts"]
	if !ok {
		return 0, nil
	}
	var n uint64
	var key uint64
	var value []byte
	it := starts.Iterate()
	for it.Next(&key, &value) {
		n++
	}
	if err := it.Err(); err != nil {
		return 0, fmt.Errorf("count per-thread entries: %w", err)
	}
	return n, nil
}

func (t *tracer) Detach() error {
	var errs []error
	for _, l := range t.links {
		missed, known, err := linkMissed(l)
		t.missedDetached += missed
		t.missedUnknown = t.missedUnknown || !known
		errs = append(errs, err, l.Close())
	}
	t.links = nil
	return errors.Join(errs...)
}

func (t *tracer) Close() error {
	errs := []error{t.Detach()}
	if t.events != nil {
		errs = append(errs, t.events.Close()) // idempotent
	}
	for _, p := range t.programs {
		errs = append(errs, p.Close())
	}
	t.programs = nil
	if t.objects != nil {
		t.objects.Close()
		t.objects = nil
	}
	return errors.Join(errs...)
}

// attachEach runs the attach functions in order; on error it closes the
// links made so far.
func attachEach(attach ...func() (link.Link, error)) ([]link.Link, error) {
	var links []link.Link
	for _, a := range attach {
		l, err := a()
		if err != nil {
			for _, l := range links {
				l.Close()
			}
			return nil, err
		}
		links = append(links, l)
	}
	return links, nil
}

// attachTracing attaches trampoline programs (fentry, fexit, fsession) to
// the function named in their section; the kernel takes the attach type
// from the loaded program.
func attachTracing(names ...string) func(map[string]*ebpf.Program, Config) ([]link.Link, error) {
	return func(progs map[string]*ebpf.Program, _ Config) ([]link.Link, error) {
		attach := make([]func() (link.Link, error), len(names))
		for i, name := range names {
			attach[i] = func() (link.Link, error) {
				prog, err := program(progs, name)
				if err != nil {
					return nil, err
				}
				return link.AttachTracing(link.TracingOptions{Program: prog})
			}
		}
		return attachEach(attach...)
	}
}
