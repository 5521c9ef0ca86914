package matrix

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ranSkipped is an outcome table in which each mechanism of ran started
// its tracer and each of skipped was skipped as unsupported.
func ranSkipped(ran, skipped []string) *Outcomes {
	o := &Outcomes{Scenarios: []string{"smoke"}, Status: map[string]map[string]string{}, Reasons: map[string]string{}}
	for _, m := range ran {
		o.Status[m] = map[string]string{"smoke": Pass}
	}
	for _, m := range skipped {
		o.Status[m], o.Reasons[m] = map[string]string{"smoke": Skip}, "the kernel lacks it"
	}
	o.Mechanisms = append(slices.Clone(ran), skipped...)
	return o
}

// TestWhere derives Where from what the runs measured, never from the
// expectations: the table below says every mechanism runs everywhere.
func TestWhere(t *testing.T) {
	mechanisms := []string{"old", "new", "x86", "some", "none", "later", "crash"}
	var header, row strings.Builder
	header.WriteString("kernel\tpackages")
	for _, m := range mechanisms {
		header.WriteString("\t" + m)
		row.WriteString("\tyes")
	}
	selectors := []string{"a:6.1", "b:7.0", "c:7", "d:7:arm64", "e:7:powerpc64le", "f:7:powerpc64le-64k", "g:7:s390x"}
	text := header.String() + "\n"
	for i, sel := range selectors {
		packages := "initramfs"
		if i < 3 {
			packages = "full"
		}
		text += sel + "\t" + packages + row.String() + "\n"
	}
	exp, err := ParseExpectations(strings.NewReader(text))
	require.NoError(t, err)
	abis := []string{"6.1.0-47-amd64", "7.0.13+deb13-amd64", "7.2.13+deb14-amd64", "7.2.13+deb14-arm64",
		"7.2.13+deb14-powerpc64le", "7.2.13+deb14-powerpc64le-64k", "7.2.13+deb14-s390x"}
	outcomes := []*Outcomes{
		ranSkipped([]string{"old", "x86", "later"}, []string{"new", "some", "none", "crash"}),
		ranSkipped([]string{"old", "x86", "some", "later"}, []string{"new", "none", "crash"}),
		ranSkipped([]string{"old", "new", "x86", "later", "crash"}, []string{"some", "none"}),
		ranSkipped([]string{"old", "new"}, []string{"x86", "some", "none", "crash"}),
		ranSkipped([]string{"old", "new", "some"}, []string{"x86", "none"}),          // crash crashed it
		ranSkipped([]string{"old", "new"}, []string{"x86", "some", "none", "crash"}), // kernels.tsv: crashes
		nil, // the guest did not boot
	}
	rep := Report{Expect: exp}
	for i, k := range exp.Kernels {
		rep.Runs = append(rep.Runs, Run{Kernel: k, ABI: abis[i], Outcomes: outcomes[i]})
	}
	outcomes[3].Status["later"] = map[string]string{"smoke": Skip} // for its workload: not measured
	outcomes[3].Mechanisms = append(outcomes[3].Mechanisms, "later")
	rep.Runs[4].Crashes = []Crash{{Mechanism: "crash"}}
	rep.Runs[5].Kernel.Crashes = map[string]bool{"crash": true} // taken out of the boot, so skipped
	rep.Runs[2].Kernel.Warns = map[string]bool{"new": true}     // runs, and the kernel warns
	for mechanism, want := range map[string]string{
		"old":   "amd64 ≥ 6.1, arm64 7.2, ppc64el 7.2; not yet run on s390x",
		"new":   "amd64 ≥ 7.2, arm64 7.2, ppc64el 7.2; not yet run on s390x; warns amd64 7.2",
		"x86":   "amd64 ≥ 6.1; not arm64, ppc64el; not yet run on s390x",
		"some":  "amd64 (`b:7.0`), ppc64el (`e:7:powerpc64le`); not arm64; not yet run on s390x",
		"none":  "not amd64, arm64, ppc64el; not yet run on s390x",
		"later": "amd64 ≥ 6.1; not yet run on arm64, ppc64el, s390x",
		"crash": "amd64 ≥ 7.2; not arm64; not yet run on s390x; crashes ppc64el 7.2",
		"nope":  "not yet run on amd64, arm64, ppc64el, s390x",
	} {
		got, err := rep.Where(mechanism)
		require.NoError(t, err)
		assert.Equal(t, want, got, mechanism)
	}
	rep.Runs[1].ABI = ""
	_, err = rep.Where("old")
	assert.EqualError(t, err, `b:7.0: no kernel release in its run's ABI "" (no outcome file?)`)
}

// committedReport merges the committed outcome files with kernels.tsv, as
// `make matrix-merge` does.
func committedReport(t *testing.T) Report {
	rep, err := Committed("..")
	require.NoError(t, err)
	return rep
}
