package peers

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// unrecorded are the peers of All without a recorded output, and why.
var unrecorded = map[string]string{
	perfBPF.Name: "Debian's perf is built without BPF skeletons, so `perf ftrace latency -b` never ran; it prints " +
		"perf-ftrace-graph's histogram, which the same parsePerf reads",
}

// recordings returns the outputs of peer p recorded in the guest,
// testdata/<peer>.<workload>.txt, by file name.
func recordings(t *testing.T, p Peer) map[string][]byte {
	files, err := filepath.Glob(filepath.Join("testdata", p.Name+".*.txt"))
	require.NoError(t, err)
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		out[filepath.Base(f)] = b
	}
	return out
}

// Every peer's parse reads an output its tool printed in the guest into
// buckets that sum to its count of calls; a peer added without such an
// output fails here.
func TestEveryPeerParsesItsRecordedOutput(t *testing.T) {
	for _, p := range All() {
		t.Run(p.Name, func(t *testing.T) {
			outs := recordings(t, p)
			if why, ok := unrecorded[p.Name]; ok {
				assert.Empty(t, outs, "%s has recordings now: take it out of unrecorded (%s)", p.Name, why)
				return
			}
			require.NotEmpty(t, outs, "no recorded output of %s: record the tool's output of a workload in the guest "+
				"into testdata/%s.<workload>.txt", p.Name, p.Name)
			for file, out := range outs {
				res, err := p.parse(out)
				require.NoError(t, err, file)
				var sum uint64
				for _, b := range res.Buckets {
					sum += b.Count
				}
				assert.NotZero(t, res.Calls, "%s: calls", file)
				assert.Equal(t, res.Calls, sum, "%s: the histogram sums to the calls", file)
			}
		})
	}
	for name := range unrecorded {
		_, err := Lookup(name)
		assert.NoError(t, err, "unrecorded names a peer All does not have")
	}
}

// peerRootPackages matches vm/peer-root.sh's list of the packages it
// installs and records the versions of.
var peerRootPackages = regexp.MustCompile(`(?m)^PACKAGES=\((.*)\)$`)

// Every peer's tool comes from a package the peer root installs, whose
// version the reports print (Root.Versions).
func TestPeerToolsAreInThePeerRoot(t *testing.T) {
	script, err := os.ReadFile("../vm/peer-root.sh")
	require.NoError(t, err)
	m := peerRootPackages.FindSubmatch(script)
	require.NotNil(t, m, "vm/peer-root.sh's PACKAGES=(...)")
	packages := strings.Fields(string(m[1]))
	for _, p := range All() {
		assert.Contains(t, packages, p.Package, "%s's package is not in vm/peer-root.sh's PACKAGES", p.Name)
	}
	for _, w := range Wildcards() {
		assert.Contains(t, packages, w.On(nil).Package, "%s's package is not in vm/peer-root.sh's PACKAGES", w.Name)
	}
}

// The agreement test's peers, and those it holds to a window enclosing
// fsession's, are peers of All.
func TestAgreementPeersAreRegistered(t *testing.T) {
	agreeing := strings.Split(*agreementPeers, ",")
	for _, name := range agreeing {
		_, err := Lookup(name)
		assert.NoError(t, err, "-peers.agreement's default")
	}
	for name := range enclosing {
		assert.True(t, slices.Contains(agreeing, name), "enclosing names %s, which the agreement test does not compare", name)
	}
}
