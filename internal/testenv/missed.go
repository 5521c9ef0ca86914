package testenv

import "github.com/stretchr/testify/assert"

// AssertShortByMissed holds a count to what the workload did: got == want
// when the run's system-wide missed is 0, else want - missed <= got <= want
// (missed counts every process's skipped program runs, the only bound).
func AssertShortByMissed(t assert.TestingT, got, want, missed uint64, what string) {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	if missed == 0 {
		assert.Equal(t, want, got, "%s (the kernel skipped no program run in this run)", what)
		return
	}
	assert.LessOrEqual(t, got, want, "%s", what)
	assert.GreaterOrEqual(t, got+missed, want, "%s: short by at most the %d program runs "+
		"the kernel skipped system-wide in this run", what, missed)
}
