package testenv

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// recorder is an assert.TestingT that counts failures.
type recorder struct{ failed int }

func (r *recorder) Errorf(string, ...any) { r.failed++ }

func TestAssertShortByMissed(t *testing.T) {
	for _, c := range []struct {
		got, want, missed uint64
		fails             bool
	}{
		{10, 10, 0, false}, {9, 10, 0, true}, {11, 10, 0, true},
		{8, 10, 2, false}, {7, 10, 2, true}, {11, 10, 2, true}, {10, 10, 2, false},
	} {
		var r recorder
		AssertShortByMissed(&r, c.got, c.want, c.missed, "count")
		assert.Equal(t, c.fails, r.failed > 0, fmt.Sprintf("%+v", c))
	}
}
