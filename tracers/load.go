package tracers

import (
	"cmp"
	"encoding/binary"
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
	objects *ebpf.Collection // the maps; programs are in programs
	// programs are the loaded programs; programs[i] was loaded for the
	// function of index forFunction[i], or for every one (-1).
	programs    []*ebpf.Program
	forFunction []int
	links       []link.Link
	events      *ringbuf.Reader
	record      ringbuf.Record
	order       binary.ByteOrder // the object's, in which its programs write (records.go)
	deadline    time.Time        // the ring's read deadline as last set
	cfg         Config           // as started: says which aggregates are counted
	fns         functionTable
	mechanism   string
	// pendingIter is the object's task iterator counting pending calls,
	// if it has one (see pendingIterName).
	pendingIter *ebpf.Program
	// entryCookie is the offset of the cookie in the values of the map
	// "starts" (struct call_entry of bpf/calls.h), -1 if they hold none:
	// pending entries are then all of the one traced function.
	entryCookie int
	// missedDetached keeps the links' missed counts read at Detach, since
	// a closed link cannot be asked any more.
	missedDetached uint64
	// missedUnknown: a link detached without a missed count (linkMissed).
	missedUnknown bool
}

// Start loads and attaches m with cfg. It returns an error wrapping
// ErrUnsupported, naming the missing feature, when the kernel cannot run
// m, and an error naming m and the bad value when cfg.ValidateFor(m.Can)
// fails, before probing the kernel; a
// *FunctionsRefusedError when the kernel refuses some of cfg.Functions.
// On error nothing stays loaded.
func (m Mechanism) Start(cfg Config) (_ Tracer, err error) {
	if err := cfg.ValidateFor(m.Can); err != nil {
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
	t := &tracer{cfg: cfg, fns: newFunctionTable(m.Can, cfg), mechanism: m.Name, entryCookie: -1, order: spec.ByteOrder}
	if err := configure(spec, cfg, t.fns); err != nil {
		return nil, fmt.Errorf("%s: %w", m.Name, err)
	}
	defer func() {
		if err != nil {
			t.Close()
		}
	}()
	if err := t.load(spec, m.loadProgram, m.perFunction); err != nil {
		return nil, m.classify(m.stepError("load", err))
	}
	progs := t.byName(spec)
	if iter := progs[pendingIterName]; len(iter) > 0 {
		t.pendingIter = iter[0]
	}
	if starts, ok := spec.Maps["starts"]; ok {
		t.entryCookie = memberOffset(starts.Value, "cookie")
	}
	if t.links, err = m.attach(loaded{progs: progs, specs: spec.Programs, fns: t.fns, cfg: cfg}); err != nil {
		return nil, m.classify(m.stepError("attach", err))
	}
	if t.events, err = ringbuf.NewReader(t.objects.Maps["events"]); err != nil {
		return nil, fmt.Errorf("%s: ring buffer: %w", m.Name, err)
	}
	return t, nil
}

// stepError names m and the step that failed (if any), unless err is the
// kernel's refusal of some functions, which names m itself.
func (m Mechanism) stepError(step string, err error) error {
	var refused *FunctionsRefusedError
	switch {
	case errors.As(err, &refused):
		refused.Mechanism = m.Name
		return refused
	case step == "":
		return fmt.Errorf("%s: %w", m.Name, err)
	}
	return fmt.Errorf("%s: %s: %w", m.Name, step, err)
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

// configure writes cfg and the traced functions into the object before
// load: a counter per function; where the object traces many (bpf/multi.h),
// how many, the only one's cookie and vfs_read's index.
func configure(spec *ebpf.CollectionSpec, cfg Config, fns functionTable) error {
	spec.Maps["events"].MaxEntries = uint32(cfg.ringBufferBytes())
	spec.Maps["counters"].MaxEntries = uint32(len(fns.names))
	if starts, ok := spec.Maps["starts"]; ok && cfg.ThreadMapEntries != 0 {
		starts.MaxEntries = uint32(cfg.ThreadMapEntries)
	}
	if err := spec.Variables["threshold_ns"].Set(uint64(cfg.Threshold)); err != nil {
		return fmt.Errorf("threshold: %w", err)
	}
	if err := spec.Variables["target_tgid"].Set(cfg.TGID); err != nil {
		return fmt.Errorf("TGID: %w", err)
	}
	if _, ok := spec.Variables["functions_traced"]; ok {
		if err := errors.Join(
			spec.Variables["functions_traced"].Set(uint32(len(fns.names))),
			spec.Variables["only_cookie"].Set(fns.cookies[0]),
			spec.Variables["count_function"].Set(fns.countIndex),
		); err != nil {
			return fmt.Errorf("functions: %w", err)
		}
	}
	return configureAggregates(spec, cfg)
}

// load lets cilium/ebpf load the object as one collection or, with a
// loadProgram, create the maps and load each program with loadProgram
// after pointing its map references at those maps: once, or, with
// perFunction, once per traced function as its AttachTo. A per-function
// load the kernel refuses is collected into a *FunctionsRefusedError
// with the others refused. Programs are kept in name order (then function
// order). Both resolve against the process's decoded kernel BTF.
func (t *tracer) load(spec *ebpf.CollectionSpec, loadProgram func(*ebpf.ProgramSpec) (*ebpf.Program, error),
	perFunction bool) error {
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
			t.add(prog, -1)
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
		if !perFunction {
			prog, err := loadProgram(ps)
			if err != nil {
				return fmt.Errorf("program %s: %w", name, err)
			}
			t.add(prog, -1)
			continue
		}
		if err := t.loadPerFunction(ps, loadProgram); err != nil {
			return fmt.Errorf("program %s: %w", name, err)
		}
	}
	return nil
}

// loadPerFunction loads ps once for each traced function.
func (t *tracer) loadPerFunction(ps *ebpf.ProgramSpec, loadProgram func(*ebpf.ProgramSpec) (*ebpf.Program, error)) error {
	refused := map[string]string{}
	for i, function := range t.fns.names {
		one := ps.Copy()
		one.AttachTo = function
		prog, err := loadProgram(one)
		if why, ok := refusalOf(err); ok {
			refused[function] = why
			continue
		}
		if err != nil {
			return fmt.Errorf("on %s: %w", function, err)
		}
		t.add(prog, i)
	}
	if len(refused) > 0 {
		return &FunctionsRefusedError{Mechanism: t.mechanism, Kind: kindOf(ps), Refused: refused, Of: len(t.fns.names)}
	}
	return nil
}

func (t *tracer) add(prog *ebpf.Program, function int) {
	t.programs = append(t.programs, prog)
	t.forFunction = append(t.forFunction, function)
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

// byName pairs the loaded programs with their names in spec: one each,
// or one per traced function in the functions' order.
func (t *tracer) byName(spec *ebpf.CollectionSpec) map[string][]*ebpf.Program {
	progs := make(map[string][]*ebpf.Program, len(spec.Programs))
	names := sortedKeys(spec.Programs)
	perName := len(t.programs) / max(1, len(names))
	for i, name := range names {
		progs[name] = t.programs[i*perName : (i+1)*perName]
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
	if u := cmp.Or(m.refusedCmpxchg(err), m.refusedWithoutJIT(err)); u != nil {
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
	t.programs, t.forFunction = nil, nil
	if t.objects != nil {
		t.objects.Close()
		t.objects = nil
	}
	return errors.Join(errs...)
}
