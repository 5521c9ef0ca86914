package matrix

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWhere(t *testing.T) {
	exp, err := ParseExpectations(strings.NewReader("kernel\tpackages\told\tnew\tx86\tsome\tnone\n" +
		"a:6.1\tfull\tyes\tno\tyes\tno\tno\n" +
		"b:7.0\tfull\tyes\tno\tyes\tyes\tno\n" +
		"c:7\tfull\tyes\tyes\tyes\tno\tno\n" +
		"d:7:arm64\tinitramfs\tyes\tyes\tno\tno\tno\n" +
		"e:7:powerpc64le\tinitramfs\tyes\tyes\tno\tyes\tno\n" +
		"f:7:powerpc64le-64k\tinitramfs\tyes\tyes\tno\tno\tno\n"))
	require.NoError(t, err)
	abis := []string{"6.1.0-47-amd64", "7.0.13+deb13-amd64", "7.2.13+deb14-amd64", "7.2.13+deb14-arm64",
		"7.2.13+deb14-powerpc64le", "7.2.13+deb14-powerpc64le-64k"}
	rep := Report{Expect: exp}
	for i, k := range exp.Kernels {
		rep.Runs = append(rep.Runs, Run{Kernel: k, ABI: abis[i]})
	}
	for mechanism, want := range map[string]string{
		"old":  "amd64 ≥ 6.1, arm64 7.2, ppc64el 7.2",
		"new":  "amd64 ≥ 7.2, arm64 7.2, ppc64el 7.2",
		"x86":  "amd64 ≥ 6.1; not arm64, ppc64el",
		"some": "amd64 (`b:7.0`), ppc64el (`e:7:powerpc64le`); not arm64",
		"none": "not amd64, arm64, ppc64el",
	} {
		got, err := rep.Where(mechanism)
		require.NoError(t, err)
		assert.Equal(t, want, got, mechanism)
	}
	rep.Runs[1].ABI = ""
	_, err = rep.Where("old")
	assert.EqualError(t, err, `b:7.0: no kernel release in its run's ABI "" (no outcome file?)`)
}
