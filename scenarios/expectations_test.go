package scenarios

import (
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
}

// lossEffects is the expectations table: rows take each mechanism's
// expectations from its declaration (tracers.Capabilities) through it, so
// that a new mechanism needs no entry here.
var lossEffects = map[tracers.Loss]lossEffect{
	// A skipped fexit leaves its thread's entry until that thread's next
	// read overwrites it: at most one per thread.
	tracers.LossRecursion: {left: func(n uint64) between { return between{0, n} }},
	// The kretprobe's single instance is held by one reader (or by another
	// process's read as the readers entered): the others' returns are lost.
	tracers.LossMaxActive:   {left: func(n uint64) between { return between{n - 1, n} }},
	tracers.LossRethookPool: {whole: true},
}

// expectOf returns what a row that provokes the losses provokes, with
// inFlight reads in flight, expects of a mechanism declaring can.
func expectOf(can tracers.Capabilities, provokes tracers.Losses, inFlight uint64) expect {
	var e expect
	loses := can.Loses.OnRunningKernel() & provokes
	if loses == 0 {
		return e
	}
	e.mayMiss, e.missesWhole = true, true
	for loss, effect := range lossEffects {
		if !loses.Has(loss) || effect.whole {
			continue
		}
		e.missesWhole = false
		if can.State.KeepsPerThread() {
			e.leftBehind = effect.left(inFlight)
		}
	}
	return e
}

// expectOf gives what the rows used to state per mechanism by name.
func TestExpectOf(t *testing.T) {
	hashMap := tracers.Capabilities{State: tracers.StateHashMap, Loses: tracers.LossRecursion}
	assert.Equal(t, expect{mayMiss: true, leftBehind: between{0, 4}},
		expectOf(hashMap, tracers.LossRecursion|tracers.LossRethookPool, 4), "fentry-fexit in drops")
	cookie := tracers.Capabilities{State: tracers.StateSessionCookie, Loses: tracers.LossRecursion}
	assert.Equal(t, expect{mayMiss: true}, expectOf(cookie, tracers.LossRecursion, 7), "fsession in threads")
	kretprobe := tracers.Capabilities{State: tracers.StateHashMap, Loses: tracers.LossMaxActive}
	assert.Equal(t, expect{mayMiss: true, leftBehind: between{3, 4}},
		expectOf(kretprobe, tracers.LossMaxActive, 4), "kprobe-kretprobe in kretprobe-misses")
	assert.Equal(t, expect{}, expectOf(kretprobe, tracers.LossRecursion, 4), "kprobe-kretprobe in drops")
	taskStorage := tracers.Capabilities{State: tracers.StateTaskStorage, Loses: tracers.LossRecursion}
	assert.Equal(t, expect{mayMiss: true}, expectOf(taskStorage, tracers.LossRecursion, 4))
}
