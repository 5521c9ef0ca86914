package tracers

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"tracebench/funcset"
	"tracebench/internal/kernelbtf"
	"tracebench/internal/rawbpf"
)

// probeChunk bounds the functions of one probe link: a failed link costs
// a validation of each, an accepted one an attach of each.
const probeChunk = 4096

// RefusedFunctions asks the running kernel which of names it refuses to
// attach with kind, by attaching an empty program to them in bulk (a
// tracing_multi link for fentry and fexit, kprobe_multi for kprobe.multi)
// and halving what it refuses (funcset.Bisect); each refused function is
// then loaded alone, so that its reason is the verifier's message where
// there is one. Nothing stays attached. Kinds attached one function at a
// time (kprobe) or by ftrace filter have no bulk probe: their refusals are
// those the kernel's lists predict (for kprobe: the kprobes blacklist and
// the names /proc/kallsyms shares, funcset.Inventory), and the result is
// empty. Errors:
// ErrUnsupported where the kernel lacks the link to probe with (or, for
// fentry and fexit, the JIT that builds trampolines); another
// error where probing failed for another reason than a refusal.
func RefusedFunctions(kind funcset.Kind, names []string) (map[string]string, error) {
	if err := removeMemlock(); err != nil {
		return nil, err
	}
	var attach func(set []string) error
	var closeProbe func()
	var err error
	switch kind {
	case funcset.Fentry, funcset.Fexit:
		if !jitBuilt() {
			return nil, fmt.Errorf("%w: %s: no BPF trampolines to attach %s with", ErrUnsupported, jitState(), kind)
		}
		attach, closeProbe, err = tracingMultiProbe(kind)
		if errors.Is(err, ErrUnsupported) {
			return loadRefusals(kind, names)
		}
	case funcset.KprobeMulti:
		attach, closeProbe, err = kprobeMultiProbe()
	case funcset.Kprobe, funcset.Graph:
		return map[string]string{}, nil
	default:
		return nil, fmt.Errorf("attach kind %q has no probe", kind)
	}
	if err != nil {
		return nil, err
	}
	defer closeProbe()
	refused, err := refusals(kind, names, attach)
	if (kind == funcset.Fentry || kind == funcset.Fexit) && errors.Is(err, unix.EOPNOTSUPP) {
		// The BTF has tracing_multi but the architecture has no link for
		// it (arm64, ppc64el 7.2: it needs
		// CONFIG_HAVE_SINGLE_FTRACE_DIRECT_OPS, which x86-64 alone selects).
		return loadRefusals(kind, names)
	}
	return refused, err
}

// loadRefusals asks the kernel which of names it refuses with kind one
// function at a time, as the per-function designs attach them, where no
// bulk link can: a program loaded for each alone, which the verifier
// refuses for such a function (no attach, so no trampoline is built).
func loadRefusals(kind funcset.Kind, names []string) (map[string]string, error) {
	refused := map[string]string{}
	for _, name := range names {
		prog, err := loadAlone(kind, name)
		var verdict *rawbpf.LoadError
		switch {
		case err == nil:
			prog.Close()
		case errors.Is(notRefusal(err), funcset.ErrNotRefusal):
			return nil, fmt.Errorf("probe %s of %s: %w", kind, name, err)
		case errors.As(err, &verdict):
			refused[name] = refusedBecause(verdict.Reason())
		default:
			return nil, fmt.Errorf("probe %s of %s: %w", kind, name, err)
		}
	}
	return refused, nil
}

// loadAlone loads an empty trampoline program of kind (fentry or fexit)
// for name alone.
func loadAlone(kind funcset.Kind, name string) (*ebpf.Program, error) {
	attachType := ebpf.AttachTraceFEntry
	if kind == funcset.Fexit {
		attachType = ebpf.AttachTraceFExit
	}
	return rawbpf.LoadTracing(&ebpf.ProgramSpec{Name: "probe_one", Type: ebpf.Tracing,
		AttachType: attachType, AttachTo: name, License: "GPL", Instructions: emptyProgram})
}

// refusals asks the kernel which of names it refuses with kind, through
// attach, which attaches a set and undoes it (funcset.Bisect), in chunks
// of probeChunk; each refused function with its reason (explain).
func refusals(kind funcset.Kind, names []string, attach func(set []string) error) (map[string]string, error) {
	refused := map[string]string{}
	for chunk := range slices.Chunk(names, probeChunk) {
		errs, err := funcset.Bisect(chunk, attach)
		if err != nil {
			return nil, fmt.Errorf("probe %s attaches: %w", kind, err)
		}
		for name, err := range errs {
			refused[name] = refusedBecause(explain(kind, name, err))
		}
	}
	return refused, nil
}

// refusedBecause is how a function's refusal reads, in set files'
// exclusions and errors alike.
func refusedBecause(reason string) string { return "the kernel refuses it: " + reason }

// emptyProgram returns 0.
var emptyProgram = asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()}

// multiSections are the tracing_multi programs probing each kind.
var multiSections = map[funcset.Kind]string{funcset.Fentry: "fentry.multi/probe", funcset.Fexit: "fexit.multi/probe"}

func tracingMultiProbe(kind funcset.Kind) (func([]string) error, func(), error) {
	spec, err := kernelbtf.Spec()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: no kernel BTF: %v", ErrUnsupported, err)
	}
	section := multiSections[kind]
	attachType := rawbpf.MultiAttachTypes[strings.Split(section, "/")[0]]
	for _, err := range []error{rawbpf.CheckAttachType(spec, attachType), rawbpf.CheckTracingMultiLink(spec)} {
		if err != nil {
			return nil, nil, fmt.Errorf("%w: probing %s attaches in bulk needs a tracing_multi link (7.2): %v",
				ErrUnsupported, kind, err)
		}
	}
	prog, err := rawbpf.LoadTracingMulti(&ebpf.ProgramSpec{Name: "probe_multi", SectionName: section,
		License: "GPL", Instructions: emptyProgram})
	if err != nil {
		return nil, nil, err
	}
	attach := func(set []string) error {
		return attempt(rawbpf.LinkTracingMultiFunctions(prog, attachType, rawbpf.TracingMultiOptions{Functions: set}))
	}
	return attach, func() { prog.Close() }, nil
}

func kprobeMultiProbe() (func([]string) error, func(), error) {
	prog, err := kernelbtf.NewProgram(&ebpf.ProgramSpec{Name: "probe_kmulti", Type: ebpf.Kprobe,
		AttachType: ebpf.AttachTraceKprobeMulti, License: "GPL", Instructions: emptyProgram})
	if err != nil {
		return nil, nil, err
	}
	attach := func(set []string) error {
		return attempt(link.KprobeMulti(prog, link.KprobeMultiOptions{Symbols: set}))
	}
	return attach, func() { prog.Close() }, nil
}

// notRefusal marks the errors that are no verdict on the set's functions:
// the kernel lacks the link, or the attempt failed for want of memory, a
// signal, a policy or a limit.
func notRefusal(err error) error {
	if errors.Is(err, ebpf.ErrNotSupported) {
		return fmt.Errorf("%w: %w", err, funcset.ErrNotRefusal)
	}
	for _, errno := range []unix.Errno{unix.ENOMEM, unix.EINTR, unix.EAGAIN, unix.EPERM, unix.E2BIG, unix.EOPNOTSUPP} {
		if errors.Is(err, errno) {
			return fmt.Errorf("%w: %w", err, funcset.ErrNotRefusal)
		}
	}
	return err
}

// explain returns why the kernel refused name: the verifier's message of
// a trampoline program loaded for it alone, else err (the link's errno).
func explain(kind funcset.Kind, name string, err error) string {
	if kind != funcset.Fentry && kind != funcset.Fexit {
		return err.Error()
	}
	prog, loadErr := loadAlone(kind, name)
	var refused *rawbpf.LoadError
	switch {
	case loadErr == nil:
		prog.Close()
		return err.Error() + " (a " + string(kind) + " program alone on it loads)"
	case errors.As(loadErr, &refused):
		return refused.Reason()
	}
	return loadErr.Error()
}
