package tracers

import (
	"fmt"
	"strings"

	"github.com/cilium/ebpf"
)

// program returns the loaded program called name, or an error naming it
// and the programs there are (a mechanism naming a program its BPF object
// lacks).
func program(progs map[string]*ebpf.Program, name string) (*ebpf.Program, error) {
	if p, ok := progs[name]; ok && p != nil {
		return p, nil
	}
	return nil, fmt.Errorf("no program %q in the BPF object (it has: %s)", name, strings.Join(sortedKeys(progs), ", "))
}
