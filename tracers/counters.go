package tracers

import "fmt"

func (t *tracer) Stats() (Stats, error) {
	per, err := t.perFunction()
	if err != nil {
		return Stats{}, err
	}
	missedPer, recursion, known, err := t.missed()
	if err != nil {
		return Stats{}, err
	}
	pendingPer, err := t.pending()
	if err != nil {
		return Stats{}, err
	}
	for i := range per {
		per[i].Pending = pendingPer[i]
		per[i].Missed = missedPer[i]
		per[i].Unknown = t.fns.stats[i]
		if per[i].Unknown.Has(FieldMissed) {
			per[i].Missed = 0
		}
	}
	s := totals(per)
	for i := range per {
		s.Missed += missedPer[i]
		s.Pending += pendingPer[i]
	}
	s.Missed += missedPer[len(per)] // of programs and links serving every function
	s.RecursionMisses = recursion
	if !known {
		s.Missed, s.RecursionMisses, s.Unknown = 0, 0, s.Unknown|FieldMissed
	}
	if len(per) == 1 { // the object counts one function: its counters are the totals
		per[0] = s.only(per[0].Function)
		per[0].Unknown |= t.fns.stats[0]
	}
	return s, nil
}

// perFunction reads each function's counters, summed over CPUs, from the
// object's per-CPU array "counters", indexed as t.fns.
func (t *tracer) perFunction() ([]FunctionStats, error) {
	per := make([]FunctionStats, len(t.fns.names))
	for i := range per {
		perCPU, err := lookupPerCPU(t.objects.Maps["counters"], uint32(i))
		if err == nil {
			per[i], err = sumStats(perCPU, t.order)
		}
		if err != nil {
			return nil, fmt.Errorf("read counters of %s: %w", t.fns.names[i], err)
		}
		per[i].Function = t.fns.names[i]
	}
	return per, nil
}

// missed returns the runs the kernel skipped: per function (programs
// loaded for one), and last, of the links (their missed counts, those read
// at Detach) and programs serving every function; recursion is the
// programs' share of them; known is false if a link's is unknown.
func (t *tracer) missed() (per []uint64, recursion uint64, known bool, err error) {
	per = make([]uint64, len(t.fns.names)+1)
	shared := &per[len(t.fns.names)]
	*shared, known = t.missedDetached, !t.missedUnknown
	for _, l := range t.links {
		m, ok, err := linkMissed(l)
		if err != nil {
			return nil, 0, false, err
		}
		*shared, known = *shared+m, known && ok
	}
	for i, p := range t.programs {
		st, err := p.Stats()
		if err != nil {
			return nil, 0, false, fmt.Errorf("program stats: %w", err)
		}
		recursion += st.RecursionMisses
		if f := t.forFunction[i]; f >= 0 {
			per[f] += st.RecursionMisses
		} else {
			*shared += st.RecursionMisses
		}
	}
	return per, recursion, known, nil
}

// pending counts, per function, the per-thread entries of calls not yet
// returned: with the object's task iterator where it has one (task local
// storage cannot be enumerated from user space), else the entries of the
// map "starts", if the mechanism has one, by the function their cookie
// names (all the one function's if they hold none).
func (t *tracer) pending() ([]uint64, error) {
	per := make([]uint64, len(t.fns.names))
	if t.pendingIter != nil {
		n, err := countPendingTasks(t.pendingIter)
		per[0] = n
		return per, err
	}
	starts, ok := t.objects.Maps["starts"]
	if !ok {
		return per, nil
	}
	var key, value []byte
	it := starts.Iterate()
	for it.Next(&key, &value) {
		f, err := entryFunction(value, t.entryCookie, t.order)
		if err != nil {
			return nil, err
		}
		if f >= len(per) {
			return nil, fmt.Errorf("per-thread entry of function index %d, but %d functions are traced", f, len(per))
		}
		per[f]++
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("count per-thread entries: %w", err)
	}
	return per, nil
}
