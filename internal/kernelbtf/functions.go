package kernelbtf

import (
	"fmt"
	"sync"

	"github.com/cilium/ebpf/btf"
)

// Function returns the kernel BTF's function called name with its ID; an
// error if there is none, or several (BTF may hold one name twice).
// cilium/ebpf v0.22.0's btf.Spec.TypeByName is wrong around names holding
// "___", which it takes for CO-RE flavours: it cannot find one that
// starts with "___" (___slab_alloc: its index cuts at the last "___", its
// lookup does not), and its filter keeps functions of other names that
// share the part before "___", so it reports several matches for
// scx_bpf_reenqueue_local (there is a scx_bpf_reenqueue_local___v2) and
// would return the other one for a name BTF lacks. Where its answer is not
// exactly one function of that name, the index of Functions answers.
func Function(name string) (*btf.Func, btf.TypeID, error) {
	spec, err := Spec()
	if err != nil {
		return nil, 0, err
	}
	var fn *btf.Func
	if err := spec.TypeByName(name, &fn); err != nil || fn.Name != name {
		if fn, err = byIndex(name); err != nil {
			return nil, 0, fmt.Errorf("kernel function %q: %w", name, err)
		}
	}
	id, err := spec.TypeID(fn)
	return fn, id, err
}

func byIndex(name string) (*btf.Func, error) {
	byName, err := Functions()
	if err != nil {
		return nil, err
	}
	switch fns := byName[name]; len(fns) {
	case 0:
		return nil, btf.ErrNotFound
	case 1:
		return fns[0], nil
	default:
		return nil, fmt.Errorf("%d functions of that name: %w", len(fns), btf.ErrMultipleMatches)
	}
}

// Functions returns every function (BTF_KIND_FUNC) of the kernel's BTF by
// name, in ID order, decoded on first use. Callers must not modify it.
func Functions() (map[string][]*btf.Func, error) { return functions() }

var functions = sync.OnceValues(func() (map[string][]*btf.Func, error) {
	spec, err := Spec()
	if err != nil {
		return nil, err
	}
	byName := map[string][]*btf.Func{}
	for typ, err := range spec.All() {
		if err != nil {
			return nil, fmt.Errorf("kernel BTF: %w", err)
		}
		if fn, ok := typ.(*btf.Func); ok {
			byName[fn.Name] = append(byName[fn.Name], fn)
		}
	}
	return byName, nil
})
