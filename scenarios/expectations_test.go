package scenarios

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"tracebench/tracers"
)

// lossEffect is what one declared way of losing calls does to a row whose
// workload provokes it, with inFlight reads in flight at once.
type lossEffect struct {
	// whole: a lost call runs neither program half, so it is neither
	// counted nor left behind; otherwise a lost return leaves its entry.
	whole bool
	// left bounds the per-thread entries a lost return leaves, where the
	// mechanism's State keeps them until the thread's next call.
	left func(inFlight uint64) between
	// skipsEntry: the kernel may skip the entry half, so the call takes
	// no room in a per-thread map.
	skipsEntry bool
	// noRoom: the call finds no room for its entry and is counted in
	// Stats.Lost at once (tracers.Loss.ShowsIn).
	noRoom bool
}

// lossEffects is the expectations table: rows take each mechanism's
// expectations from its declaration (tracers.Capabilities) through it, so
// that a new mechanism needs no entry here.
var lossEffects = map[tracers.Loss]lossEffect{
	// A skipped fexit leaves its thread's entry until that thread's next
	// read overwrites it: at most one per thread.
	tracers.LossRecursion: {left: func(n uint64) between { return between{0, n} }, skipsEntry: true},
	// The kretprobe's single instance is held by one reader (or by another
	// process's read as the readers entered): the others' returns are lost.
	tracers.LossMaxActive:   {left: func(n uint64) between { return between{n - 1, n} }},
	tracers.LossRethookPool: {whole: true, skipsEntry: true},
	// The return link's pool is empty for some of the calls in flight: the
	// entry link kept their entries, which stay until the thread's next
	// read at that frame.
	tracers.LossReturnPool: {left: func(n uint64) between { return between{0, n} }},
	// The entries beyond the map's size are lost, each counted.
	tracers.LossMapFull: {noRoom: true},
}

// keepsEntry says of each State which functions' calls it keeps an entry
// of from entry to return that outlives a detach, so that a call in
// flight then is in Stats.Pending at Drain: every call in a hash map;
// vfs_read's count argument alone beside a session cookie. Task storage
// is freed with the thread (the rows' threads have exited by Drain); a
// session cookie and the kernel's own stack keep nothing of ours.
var keepsEntry = map[tracers.State]func(function string) bool{
	tracers.StateHashMap:              func(string) bool { return true },
	tracers.StateCookieAndHashMap:     func(f string) bool { return f == tracers.DefaultFunction },
	tracers.StateCallHashMap:          func(string) bool { return true },
	tracers.StateCookieAndCallHashMap: func(f string) bool { return f == tracers.DefaultFunction },
	tracers.StateTaskStorage:          func(string) bool { return false },
	tracers.StateSessionCookie:        func(string) bool { return false },
	tracers.StateKernel:               func(string) bool { return false },
}

// inFlightAtDetach returns e for a function of which n calls were in
// flight when the row detached: a mechanism keeping their entries leaves
// them pending, the others count them nowhere.
func (e expect) inFlightAtDetach(state tracers.State, function string, n uint64) expect {
	if keepsEntry[state](function) {
		e.heldAtDetach = n
		e.leftBehind.min += n
		if e.leftBehind.max != math.MaxUint64 {
			e.leftBehind.max += n
		}
		return e
	}
	e.unseenAtDetach = n
	return e
}

// load is what a row's workload puts on a mechanism: inFlight reads in
// flight at once, by new threads that exit after one read each, in waves
// one after the other, against a per-thread map of entries (0: the
// default, which no row fills).
type load struct {
	inFlight, waves, entries uint64
}

// fills says the row fills a per-thread map of its own size.
func (ld load) fills() bool { return ld.entries > 0 }

// expectOf returns what a row that provokes the losses under ld expects of
// a mechanism declaring can.
func expectOf(can tracers.Capabilities, provokes tracers.Losses, ld load) expect {
	var e expect
	loses := can.Loses.OnRunningKernel() & provokes
	if loses == 0 {
		return e
	}
	left := func(uint64) between { return between{} }
	fills := false
	for loss, effect := range lossEffects {
		switch {
		case !loses.Has(loss):
			continue
		case effect.noRoom:
			fills = ld.fills()
		case effect.whole:
			e.mayMiss = true
		default:
			e.mayMiss = true
			if can.State.KeepsPerThread() {
				left = effect.left
			}
			if loss == tracers.LossRecursion && can.State.KeysByFrame() && !ld.fills() {
				e.leftByMisses = true
				left = func(uint64) between { return between{0, math.MaxUint64} }
			}
		}
		e.lostFromMisses = e.lostFromMisses || !effect.noRoom && loss.ShowsIn(can.State).Has(tracers.FieldLost)
		e.entriesSkipped = e.entriesSkipped || effect.skipsEntry
	}
	e.missesWhole = e.mayMiss && loses&^(tracers.LossRethookPool|tracers.LossMapFull) == 0
	e.leftBehind = left(ld.inFlight)
	if fills {
		e.lostUnmissed, _ = overWaves(ld, func(uint64) uint64 { return 0 })
		lostMin, leftMin := overWaves(ld, func(n uint64) uint64 { return left(n).min })
		lostMax, leftMax := overWaves(ld, func(n uint64) uint64 { return left(n).max })
		e.lost, e.leftBehind = between{lostMin, lostMax}, between{leftMin, leftMax}
	}
	return e
}

// overWaves returns the calls lost for want of room over ld's waves and
// the entries left at the end, when a wave whose threads stored n entries
// leaves left(n) of them behind for good (their threads exit): each wave
// has the room the earlier ones did not leave.
func overWaves(ld load, left func(stored uint64) uint64) (lost, held uint64) {
	for range max(ld.waves, 1) {
		stored := min(ld.inFlight, ld.entries-min(held, ld.entries))
		lost += ld.inFlight - stored
		held += min(left(stored), stored)
	}
	return lost, held
}

// expectOf gives what the rows used to state per mechanism by name.
func TestExpectOf(t *testing.T) {
	four := load{inFlight: 4}
	hashMap := tracers.Capabilities{State: tracers.StateHashMap, Loses: tracers.LossRecursion | tracers.LossMapFull}
	assert.Equal(t, expect{mayMiss: true, leftBehind: between{0, 4}, lostFromMisses: true, entriesSkipped: true},
		expectOf(hashMap, tracers.LossRecursion|tracers.LossRethookPool, four), "fentry-fexit in drops")
	callKeyed := tracers.Capabilities{State: tracers.StateCallHashMap, Loses: tracers.LossRecursion | tracers.LossMapFull}
	assert.Equal(t, expect{mayMiss: true, leftBehind: between{0, math.MaxUint64}, leftByMisses: true,
		lostFromMisses: true, entriesSkipped: true},
		expectOf(callKeyed, tracers.LossRecursion|tracers.LossRethookPool, four), "fentry-fexit-each in drops")
	cookie := tracers.Capabilities{State: tracers.StateSessionCookie, Loses: tracers.LossRecursion}
	assert.Equal(t, expect{mayMiss: true, entriesSkipped: true}, expectOf(cookie, tracers.LossRecursion,
		load{inFlight: 7}),
		"fsession in threads")
	kretprobe := tracers.Capabilities{State: tracers.StateHashMap, Loses: tracers.LossMaxActive | tracers.LossMapFull}
	assert.Equal(t, expect{mayMiss: true, leftBehind: between{3, 4}, lostFromMisses: true},
		expectOf(kretprobe, tracers.LossMaxActive, four), "kprobe-kretprobe in kretprobe-misses")
	assert.Equal(t, expect{}, expectOf(kretprobe, tracers.LossRecursion, four), "kprobe-kretprobe in drops")
	taskStorage := tracers.Capabilities{State: tracers.StateTaskStorage, Loses: tracers.LossRecursion}
	assert.Equal(t, expect{mayMiss: true, lostFromMisses: true, entriesSkipped: true},
		expectOf(taskStorage, tracers.LossRecursion, four))
	session := tracers.Capabilities{State: tracers.StateCookieAndHashMap,
		Loses: tracers.LossRethookPool | tracers.LossMapFull}
	assert.Equal(t, expect{lost: between{36, 36}, lostUnmissed: 36},
		expectOf(session, tracers.LossMapFull, load{inFlight: 100, waves: 1, entries: 64}), "map-full")
	// stale-entries: the first wave leaves 3 or 4 of 4 entries, which the
	// second wave's threads cannot use.
	assert.Equal(t, expect{mayMiss: true, leftBehind: between{3, 4}, lost: between{3, 4}, lostFromMisses: true},
		expectOf(kretprobe, tracers.LossMaxActive|tracers.LossMapFull, load{inFlight: 4, waves: 2, entries: 4}))
	assert.Equal(t, expect{}, expectOf(cookie, tracers.LossMapFull, load{inFlight: 100, waves: 1, entries: 64}))
}

// Calls in flight at detach raise the entries expected left behind, but
// not past an unbounded maximum (entries bounded by the runs missed).
func TestInFlightAtDetachKeepsUnboundedMax(t *testing.T) {
	unbounded := expect{leftBehind: between{0, math.MaxUint64}, leftByMisses: true}
	held := unbounded.inFlightAtDetach(tracers.StateCallHashMap, tracers.DefaultFunction, 4)
	assert.Equal(t, between{4, math.MaxUint64}, held.leftBehind)
	assert.Equal(t, uint64(4), held.heldAtDetach)
}
