package funcset

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"

	"tracebench/internal/kernelbtf"
	"tracebench/internal/tracefs"
)

// KprobeBlacklistPath is where debugfs lists the functions kprobes refuse.
const KprobeBlacklistPath = "/sys/kernel/debug/kprobes/blacklist"

// KallsymsPath lists the kernel's symbols, modules' included.
const KallsymsPath = "/proc/kallsyms"

// BTFFunc is a function of the kernel's BTF (BTF_KIND_FUNC), with what of
// its prototype decides whether trampolines can attach to it.
type BTFFunc struct {
	Name     string
	Variadic bool // its last parameter is "..."
}

// Quiet is what a quiet system called during a window, by function.
type Quiet struct {
	Window time.Duration
	Calls  map[string]uint64
}

// Inventory is what a kernel offers to attach to, as read from its lists
// (ReadKernel) or from files recorded on it. Its lists (BTF, Ftrace,
// KprobeBlacklist, SharedSymbols) are indexed at the first query and must
// not change after it; Quiet and Refused may.
type Inventory struct {
	Kernel string // uname release
	// BTF are the vmlinux BTF functions (a name twice: two functions).
	BTF []BTFFunc
	// Ftrace is available_filter_functions, modules included.
	Ftrace []FtraceEntry
	// KprobeBlacklist is debugfs kprobes/blacklist; nil where the kernel
	// has no kprobes or debugfs is not mounted (then Kprobe attaches
	// nothing, see KprobesMissing).
	KprobeBlacklist []FtraceEntry
	// KprobesMissing, if set, says why there is no blacklist.
	KprobesMissing string
	// SharedSymbols are the names /proc/kallsyms lists more than once (any
	// symbol type, modules included), with how many times (ParseKallsyms).
	SharedSymbols map[string]int
	// Quiet are the functions a quiet system called (MeasureQuiet); Draw
	// keeps them out of the n<N> sets.
	Quiet *Quiet
	// Refused is, per kind, the functions the kernel refused to attach
	// when asked, with its reason (see Attachable).
	Refused map[Kind]map[string]string

	index index
}

// index is what the queries derive from the lists alone, built once:
// rebuilding it per query was most of a scenario row's CPU under TCG.
type index struct {
	mu         sync.Mutex
	fns        map[string]*function
	attachable map[Kind][]string
}

// ReadKernel reads the running kernel's lists: BTF, tracefs
// available_filter_functions, debugfs kprobes/blacklist and
// /proc/kallsyms. It needs kernel BTF and tracefs (root): an error says
// which is missing.
func ReadKernel() (*Inventory, error) {
	inv := &Inventory{Kernel: release(), Refused: map[Kind]map[string]string{}}
	byName, err := kernelbtf.Functions()
	if err != nil {
		return nil, fmt.Errorf("function sets need kernel BTF (CONFIG_DEBUG_INFO_BTF): %w", err)
	}
	for _, fns := range byName {
		for _, fn := range fns {
			inv.BTF = append(inv.BTF, btfFunc(fn))
		}
	}
	slices.SortFunc(inv.BTF, func(a, b BTFFunc) int { return strings.Compare(a.Name, b.Name) })
	root, err := tracefs.Root()
	if err != nil {
		return nil, err
	}
	if inv.Ftrace, err = parseFile(filepath.Join(root, "available_filter_functions"), ParseFilterFunctions); err != nil {
		return nil, err
	}
	inv.KprobeBlacklist, err = parseFile(KprobeBlacklistPath, ParseKprobeBlacklist)
	if errors.Is(err, os.ErrNotExist) {
		inv.KprobesMissing = KprobeBlacklistPath + " does not exist (no CONFIG_KPROBES, or debugfs not mounted)"
		err = nil
	}
	if err != nil {
		return nil, err
	}
	inv.SharedSymbols, err = parseFile(KallsymsPath, ParseKallsyms)
	return inv, err
}

func parseFile[T any](path string, parse func(io.Reader) (T, error)) (T, error) {
	f, err := os.Open(path)
	if err != nil {
		var zero T
		return zero, err
	}
	defer f.Close()
	return parse(f)
}

// btfFunc reads what BTFFunc keeps of fn: a variadic prototype ends with
// a parameter of no type.
func btfFunc(fn *btf.Func) BTFFunc {
	proto, _ := fn.Type.(*btf.FuncProto)
	variadic := false
	if proto != nil && len(proto.Params) > 0 {
		_, variadic = proto.Params[len(proto.Params)-1].Type.(*btf.Void)
	}
	return BTFFunc{Name: fn.Name, Variadic: variadic}
}

func release() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown (uname: " + err.Error() + ")"
	}
	return unix.ByteSliceToString(u.Release[:])
}

// functions indexes the lists by name: every vmlinux name of BTF or
// available_filter_functions. The map is shared: read it only.
func (inv *Inventory) functions() map[string]*function {
	inv.index.mu.Lock()
	defer inv.index.mu.Unlock()
	if inv.index.fns == nil {
		inv.index.fns = inv.indexFunctions()
	}
	return inv.index.fns
}

func (inv *Inventory) indexFunctions() map[string]*function {
	fns := map[string]*function{}
	get := func(name string) *function {
		f, ok := fns[name]
		if !ok {
			f = &function{name: name}
			fns[name] = f
		}
		return f
	}
	for i := range inv.BTF {
		f := get(inv.BTF[i].Name)
		f.btf = &inv.BTF[i]
		f.btfs++
	}
	for _, e := range inv.Ftrace {
		if e.Module == "" {
			get(e.Name).ftrace++
		}
	}
	for _, e := range inv.KprobeBlacklist {
		if f, ok := fns[e.Name]; ok && e.Module == "" {
			f.blacklisted = true
		}
	}
	for name, n := range inv.SharedSymbols {
		if f, ok := fns[name]; ok {
			f.symbols = n
		}
	}
	return fns
}

// why returns the reasons kinds cannot attach f, "kind: reason" joined by
// "; ", or "" when every kind can.
func (inv *Inventory) why(kinds []Kind, f *function) string {
	var reasons []string
	for _, k := range kinds {
		why := refusal(k, f)
		if why == "" {
			why = inv.Refused[k][f.name]
		}
		if why == "" && k == Kprobe && inv.KprobesMissing != "" {
			why = "no kprobes: " + inv.KprobesMissing
		}
		if why != "" {
			reasons = append(reasons, string(k)+": "+why)
		}
	}
	return strings.Join(reasons, "; ")
}

// Attachable returns, sorted, the vmlinux functions the lists let kind
// attach to: what to ask the kernel about before recording its refusals
// in Refused[kind].
func (inv *Inventory) Attachable(kind Kind) []string {
	fns := inv.functions()
	inv.index.mu.Lock()
	defer inv.index.mu.Unlock()
	names, ok := inv.index.attachable[kind]
	if !ok {
		for name, f := range fns {
			if refusal(kind, f) == "" {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		if inv.index.attachable == nil {
			inv.index.attachable = map[Kind][]string{}
		}
		inv.index.attachable[kind] = names
	}
	return slices.Clone(names)
}
