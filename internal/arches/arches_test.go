package arches

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTable(t *testing.T) {
	require.NotEmpty(t, All)
	assert.Equal(t, "amd64", All[0].Debian, "the host's architecture first")
	assert.Contains(t, All, Arch{Debian: "ppc64el", Flavour: "powerpc64le", GOARCH: "ppc64le",
		QEMUPackage: "qemu-system-ppc", Slowdown: 1})
	assert.Len(t, GOARCHes(), len(All))
	assert.Equal(t, 12*time.Minute, Arch{Slowdown: 6}.Limit(2*time.Minute))
}

func TestParseRefusesBadLines(t *testing.T) {
	for text, says := range map[string]string{
		"":                                       "no architecture listed",
		"# only a comment\n":                     "no architecture listed",
		"amd64\tamd64\tamd64\tqemu-system-x86\n": `line 1: "amd64\tamd64\tamd64\tqemu-system-x86" is not five non-empty`,
		"#\namd64\tamd64\t\tqemu-system-x86\t1\n":    "line 2: ",
		"amd64\tamd64\tamd64\tqemu-system-x86\tslow": `line 1: slowdown "slow" is not a whole number`,
		"amd64\tamd64\tamd64\tqemu-system-x86\t0":    `line 1: slowdown "0" is not a whole number of at least 1`,
		"a\tb\tc\td\t1\na\te\tf\tg\t1\n":             "line 2: a, e or f is named twice",
	} {
		_, err := parse(text)
		assert.ErrorContains(t, err, says, "%q", text)
	}
}
