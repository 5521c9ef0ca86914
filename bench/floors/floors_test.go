package floors

import (
	"slices"
	"strings"
	"testing"

	"tracebench/bench/suite"
	"tracebench/tracers"
)

// TestEveryMechanismHasItsFloor: each BPF mechanism's attach kinds name a
// floor, so the report can split its overhead into floor + body.
func TestEveryMechanismHasItsFloor(t *testing.T) {
	for _, m := range tracers.Mechanisms() {
		kinds, err := m.AttachKinds()
		if err != nil {
			t.Fatal(err)
		}
		if m.Can.BPF != (len(kinds) > 0) {
			t.Errorf("%s: BPF %v but attach kinds %v", m.Name, m.Can.BPF, kinds)
		}
		if name := suite.FloorOf(kinds); name != "" && !slices.Contains(suite.Floors, name) {
			t.Errorf("%s: floor %q (kinds %v) is not in suite.Floors", m.Name, name, kinds)
		}
	}
}

// TestEveryKindHasAnEmptyProgram checks the object against suite.Floors: one
// program per kind, in the kind's section on vfs_read, and no other.
func TestEveryKindHasAnEmptyProgram(t *testing.T) {
	spec, err := LoadFloors()
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, floor := range suite.Floors {
		for _, kind := range suite.FloorKinds(floor) {
			if !slices.Contains(kinds, kind) {
				kinds = append(kinds, kind)
			}
		}
	}
	if len(spec.Programs) != len(kinds) {
		t.Errorf("%d programs for the %d kinds %v", len(spec.Programs), len(kinds), kinds)
	}
	for _, kind := range kinds {
		ps := spec.Programs["floor_"+strings.ReplaceAll(kind, ".", "_")]
		if ps == nil {
			t.Errorf("no program for kind %s", kind)
			continue
		}
		if want := kind + "/vfs_read"; ps.SectionName != want {
			t.Errorf("kind %s: section %q, want %q", kind, ps.SectionName, want)
		}
		// An empty program: r0 = 0; exit.
		if n := len(ps.Instructions); n != 2 {
			t.Errorf("kind %s: %d instructions, want 2 (return 0)\n%v", kind, n, ps.Instructions)
		}
	}
}

func TestAttachRefusesUnknownFloor(t *testing.T) {
	if _, err := Attach("fentry+kprobe"); err == nil || !strings.Contains(err.Error(), `unknown floor "fentry+kprobe"`) {
		t.Errorf("Attach(fentry+kprobe) error = %v", err)
	}
}
