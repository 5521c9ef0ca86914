package kernelbtf

import (
	"fmt"
	"strings"
	"sync"

	"github.com/cilium/ebpf/btf"
)

// Function returns the kernel BTF's function called name with its ID; an
// error if there is none, or several (BTF may hold one name twice).
// cilium/ebpf v0.22.0's btf.Spec.TypeByName is wrong for names holding
// "___", which it takes for CO-RE flavours: it cannot find one that
// starts with "___" (___slab_alloc: its index cuts at the last "___", its
// lookup does not), and for others (____kvm_emulate_hypercall) it keeps
// functions of other names that share the part before "___" and reports
// several matches. Such names are looked up in the index of Functions.
func Function(name string) (*btf.Func, btf.TypeID, error) {
	spec, err := Spec()
	if err != nil {
		return nil, 0, err
	}
	var fn *btf.Func
	if strings.Contains(name, "___") {
		fn, err = byIndex(name)
	} else {
		err = spec.TypeByName(name, &fn)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("kernel function %q: %w", name, err)
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
