package tracers

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"tracebench/funcset"
	"tracebench/internal/rawbpf"
)

// attachFunc attaches the loaded programs as their tracer's configuration
// and functions ask.
type attachFunc func(l loaded) ([]link.Link, error)

// loaded is what a mechanism's attach function attaches.
type loaded struct {
	// progs are the programs by name in the object: one each, or one per
	// traced function (Mechanism.perFunction), in fns' order.
	progs map[string][]*ebpf.Program
	specs map[string]*ebpf.ProgramSpec
	fns   functionTable
	cfg   Config
}

// program returns the one loaded program called name.
func (l loaded) program(name string) (*ebpf.Program, error) {
	progs, err := l.each(name)
	if err != nil {
		return nil, err
	}
	return progs[0], nil
}

// each returns the programs called name, or an error naming it and the
// programs there are (a mechanism naming a program its object lacks).
func (l loaded) each(name string) ([]*ebpf.Program, error) {
	if progs := l.progs[name]; len(progs) > 0 && progs[0] != nil {
		return progs, nil
	}
	return nil, fmt.Errorf("no program %q in the BPF object (it has: %s)", name, strings.Join(sortedKeys(l.progs), ", "))
}

// kindOf returns the attach kind of ps, by its section.
func kindOf(ps *ebpf.ProgramSpec) funcset.Kind {
	prefix, _, _ := strings.Cut(ps.SectionName, "/")
	kind, _ := funcset.KindOfSection(prefix)
	return kind
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
func attachTracing(names ...string) attachFunc {
	return func(l loaded) ([]link.Link, error) {
		attach := make([]func() (link.Link, error), len(names))
		for i, name := range names {
			attach[i] = func() (link.Link, error) {
				prog, err := l.program(name)
				if err != nil {
					return nil, err
				}
				return link.AttachTracing(link.TracingOptions{Program: prog})
			}
		}
		return attachEach(attach...)
	}
}

// attachEachFunction attaches the programs called names, loaded once per
// traced function, each to its function with a link of its own whose
// cookie names the function. A link the kernel refuses is named in a
// *FunctionsRefusedError.
func attachEachFunction(names ...string) attachFunc {
	return func(l loaded) ([]link.Link, error) {
		var attach []func() (link.Link, error)
		for _, name := range names {
			progs, err := l.each(name)
			if err != nil {
				return nil, err
			}
			ps := l.specs[name]
			for i, prog := range progs {
				attach = append(attach, func() (link.Link, error) {
					return namingRefusal(linkRefusalOf, kindOf(ps), l.fns, i)(linkTracing(prog, ps.AttachType, l.fns.cookies[i]))
				})
			}
		}
		return attachEach(attach...)
	}
}

// namingRefusal returns what turns the result of attaching function i of
// fns with kind into a *FunctionsRefusedError naming it, where refusal
// says the error is the kernel refusing it.
func namingRefusal(refusal func(error) (string, bool), kind funcset.Kind, fns functionTable, i int) func(link.Link,
	error) (link.Link, error) {
	return func(lk link.Link, err error) (link.Link, error) {
		if why, ok := refusal(err); ok {
			return nil, &FunctionsRefusedError{Kind: kind, Of: len(fns.names), Refused: map[string]string{fns.names[i]: why}}
		}
		return lk, err
	}
}

// attachKprobeEach attaches the kprobe program entry and the kretprobe
// program ret to every traced function, each with a perf-event link of
// its own whose cookie names the function (kretprobeOptions). A function's kretprobe is attached before its kprobe and
// detached after it (Detach closes links in order), so that no entry is
// kept of a call whose return no kretprobe waits for. The first function
// the kernel refuses is named in a *FunctionsRefusedError; nothing stays
// attached on any error.
func attachKprobeEach(entry, ret string) attachFunc {
	return func(l loaded) ([]link.Link, error) {
		entryProg, err := l.program(entry)
		if err != nil {
			return nil, err
		}
		retProg, err := l.program(ret)
		if err != nil {
			return nil, err
		}
		attach := make([]func() (link.Link, error), 0, 2*len(l.fns.names))
		for i, function := range l.fns.names {
			refused := namingRefusal(refusalOf, funcset.Kprobe, l.fns, i)
			retOpts := kretprobeOptions(l.cfg, l.fns.cookies[i])
			attach = append(attach,
				func() (link.Link, error) { return refused(link.Kretprobe(function, retProg, retOpts)) },
				func() (link.Link, error) {
					return refused(link.Kprobe(function, entryProg, &link.KprobeOptions{Cookie: l.fns.cookies[i]}))
				})
		}
		links, err := attachEach(attach...)
		for i := 0; i+1 < len(links); i += 2 {
			links[i], links[i+1] = links[i+1], links[i] // each function's kprobe first
		}
		return links, err
	}
}

// linkTracing attaches a trampoline program loaded for one function with
// a link carrying cookie, through the rawbpf shim for every attach type:
// cilium/ebpf v0.22 links fsession only without a cookie, and its
// link.AttachTracing with a cookie turns the kernel's EINVAL or ENOTSUPP
// into "create raw tracepoint with cookie: not supported"
// (link/tracing.go), so the kernel refusing the one function (7.2 on
// arm64: ENOTSUPP for a function ftrace cannot patch) would read as a
// kernel without tracing cookies. probeTracingCookie has checked the
// cookie's field in the kernel BTF.
func linkTracing(prog *ebpf.Program, attachType ebpf.AttachType, cookie uint64) (link.Link, error) {
	return rawbpf.LinkTracing(prog, attachType, cookie)
}

// attachTracingMulti attaches each program called names, of a
// tracing_multi section, with one tracing_multi link naming every traced
// function with its cookie.
func attachTracingMulti(names ...string) attachFunc {
	return attachMulti(names, func(prog *ebpf.Program, ps *ebpf.ProgramSpec) (multiLink, error) {
		attachType, err := multiAttachType(ps)
		if err != nil {
			return nil, err
		}
		return func(functions []string, cookies []uint64) (link.Link, error) {
			l, err := rawbpf.LinkTracingMultiFunctions(prog, attachType,
				rawbpf.TracingMultiOptions{Functions: functions, Cookies: cookies})
			if errors.Is(err, unix.EOPNOTSUPP) {
				// The attach type is in BTF, yet the kernel cannot make the
				// link here (7.2 on arm64); classify reports it unsupported.
				return nil, fmt.Errorf("%w (EOPNOTSUPP): %w", ebpf.ErrNotSupported, err)
			}
			return l, err
		}, nil
	})
}

// multiAttachType is the tracing_multi attach type of ps's section.
func multiAttachType(ps *ebpf.ProgramSpec) (ebpf.AttachType, error) {
	prefix, _, _ := strings.Cut(ps.SectionName, "/")
	attachType, ok := rawbpf.MultiAttachTypes[prefix]
	if !ok {
		return 0, fmt.Errorf("program %s: section %q is not a tracing_multi section", ps.Name, ps.SectionName)
	}
	return attachType, nil
}

// attachKprobeMulti attaches each program called names with one
// kprobe_multi link naming every traced function with its cookie: a
// kretprobe.multi where the section says so, a session where session.
func attachKprobeMulti(session bool, names ...string) attachFunc {
	return attachMulti(names, func(prog *ebpf.Program, ps *ebpf.ProgramSpec) (multiLink, error) {
		attach := link.KprobeMulti
		if strings.HasPrefix(ps.SectionName, "kretprobe.multi/") {
			attach = link.KretprobeMulti
		}
		return func(functions []string, cookies []uint64) (link.Link, error) {
			return attach(prog, link.KprobeMultiOptions{Symbols: functions, Cookies: cookies, Session: session})
		}, nil
	})
}

// multiLink makes one link naming functions (with cookies, if given).
type multiLink func(functions []string, cookies []uint64) (link.Link, error)

// attachMulti attaches each program called names with the link linkOf
// makes for it, naming every traced function. When the kernel refuses a
// link, the functions it refuses are found with links of parts of the
// set (refusedBy) and named in a *FunctionsRefusedError; nothing stays
// attached.
func attachMulti(names []string, linkOf func(*ebpf.Program, *ebpf.ProgramSpec) (multiLink, error)) attachFunc {
	return func(l loaded) ([]link.Link, error) {
		attach := make([]func() (link.Link, error), len(names))
		for i, name := range names {
			attach[i] = func() (link.Link, error) {
				prog, err := l.program(name)
				if err != nil {
					return nil, err
				}
				ps := l.specs[name]
				makeLink, err := linkOf(prog, ps)
				if err != nil {
					return nil, err
				}
				lk, err := makeLink(l.fns.names, l.fns.cookies)
				if err != nil {
					return nil, refusedBy(err, kindOf(ps), l.fns.names, func(set []string) error {
						return attempt(makeLink(set, nil))
					})
				}
				return lk, nil
			}
		}
		return attachEach(attach...)
	}
}

// attempt closes a link made to find out whether the kernel takes its
// functions; its error is marked funcset.ErrNotRefusal where it is no
// verdict on them.
func attempt(l link.Link, err error) error {
	if err != nil {
		return notRefusal(err)
	}
	return l.Close()
}

// refusedBy explains err, the kernel's refusal of a link naming names
// with kind: it finds the functions refused with try, which links a part
// of the set and closes it (see funcset.Bisect), and returns them in a
// *FunctionsRefusedError; err itself where it is no refusal of functions
// or none alone is refused.
func refusedBy(err error, kind funcset.Kind, names []string, try func(set []string) error) error {
	if errors.Is(notRefusal(err), funcset.ErrNotRefusal) {
		return err
	}
	refused, bisectErr := refusals(kind, names, try)
	switch {
	case bisectErr != nil:
		return fmt.Errorf("%w (finding the refused functions: %v)", err, bisectErr)
	case len(refused) == 0:
		return err
	}
	return &FunctionsRefusedError{Kind: kind, Refused: refused, Of: len(names)}
}

// linkRefusalOf is refusalOf for the link of a program loaded for one
// function: EOPNOTSUPP there refuses the function (7.2 on ppc64el, for a
// function ftrace cannot patch, as arm64's ENOTSUPP), where for a multi
// link it says the kernel lacks the link.
func linkRefusalOf(err error) (string, bool) {
	if errors.Is(err, unix.EOPNOTSUPP) {
		return refusedBecause(err.Error()), true
	}
	return refusalOf(err)
}

// refusalOf says whether err is the kernel (or its BTF) refusing the one
// function a load or link was for, and why: the verifier's sentence where
// there is one.
func refusalOf(err error) (string, bool) {
	var loadErr *rawbpf.LoadError
	switch {
	case err == nil || errors.Is(notRefusal(err), funcset.ErrNotRefusal):
		return "", false
	case errors.As(err, &loadErr):
		return refusedBecause(loadErr.Reason()), true
	}
	return refusedBecause(err.Error()), true
}
