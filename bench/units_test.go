package bench

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"tracebench/internal/testenv"
	"tracebench/tracers"
)

// unit is one sub-benchmark.
type unit struct {
	name string
	run  func(*testing.B)
}

// perMechanism returns one unit per case in cs and mechanism, the
// mechanisms alternating within a case so that neighbours in time differ.
func perMechanism(mechs []tracers.Mechanism, cs []benchCase,
	bench func(tracers.Mechanism, benchCase) func(*testing.B)) []unit {
	var units []unit
	for _, c := range cs {
		for _, m := range mechs {
			units = append(units, unit{name: m.Name + "/" + c.name, run: bench(m, c)})
		}
	}
	return units
}

// selected returns the mechanisms named in list (comma-separated), or
// every registered one for "".
func selected(list string) ([]tracers.Mechanism, error) {
	if list == "" {
		return tracers.Mechanisms(), nil
	}
	var mechs []tracers.Mechanism
	for _, name := range strings.Split(list, ",") {
		m, err := tracers.Lookup(strings.TrimSpace(name))
		if err != nil {
			return nil, fmt.Errorf("-tracebench.mechanisms: %w", err)
		}
		mechs = append(mechs, m)
	}
	return mechs, nil
}

func selectedMechanisms(b *testing.B) []tracers.Mechanism {
	mechs, err := selected(*only)
	if err != nil {
		b.Fatal(err)
	}
	return mechs
}

// rotate returns units starting at position n (mod len).
func rotate(units []unit, n int) []unit {
	if len(units) == 0 {
		return units
	}
	k := ((n % len(units)) + len(units)) % len(units)
	return slices.Concat(units[k:], units[:k])
}

// runUnits runs units rotated by the round.
func runUnits(b *testing.B, units []unit) { runInOrder(b, rotate(units, *round)) }

// runInOrder runs units in their order, whatever the round.
func runInOrder(b *testing.B, units []unit) {
	testenv.Tracing.Require(b)
	for _, u := range units {
		b.Run(u.name, u.run)
	}
}

// TestRotate checks the property the rounds rely on: over len(units)
// rounds every unit runs once at every position.
func TestRotate(t *testing.T) {
	units := []unit{{name: "a"}, {name: "b"}, {name: "c"}}
	names := func(us []unit) string {
		var s []string
		for _, u := range us {
			s = append(s, u.name)
		}
		return strings.Join(s, " ")
	}
	for n, want := range map[int]string{0: "a b c", 1: "b c a", 2: "c a b", 3: "a b c", 7: "b c a", -1: "c a b"} {
		if got := names(rotate(units, n)); got != want {
			t.Errorf("rotate(%d) = %q, want %q", n, got, want)
		}
	}
	if got := rotate(nil, 3); len(got) != 0 {
		t.Errorf("rotate(nil) = %v", got)
	}
}

func TestSelected(t *testing.T) {
	all, err := selected("")
	if err != nil || len(all) != len(tracers.Mechanisms()) {
		t.Fatalf("selected(\"\") = %d mechanisms, %v; want all %d",
			len(all), err, len(tracers.Mechanisms()))
	}
	first, second := all[1].Name, all[0].Name
	list := first + ", " + second
	two, err := selected(list)
	if err != nil || len(two) != 2 || two[0].Name != first || two[1].Name != second {
		t.Errorf("selected(%s) = %v, %v", list, two, err)
	}
	if _, err := selected("fentry"); err == nil || !strings.Contains(err.Error(), `unknown mechanism "fentry"`) {
		t.Errorf("selected(fentry) error = %v", err)
	}
}
