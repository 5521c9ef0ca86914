package report

import (
	"cmp"
	"maps"
	"slices"
	"strings"
)

// PeersPart is the peers family's share of a report: BenchmarkPeers, the
// peer tools and tracebench's mechanisms in their mode, each against that
// benchmark's own baseline.
type PeersPart struct {
	// Peers are the sub-benchmarks but the baseline, by name.
	Peers    []Peer
	Baseline Estimate
	// Versions are the tools' "tracebench-peer-<package>" lines.
	Versions []string
}

// Peer is one sub-benchmark of BenchmarkPeers: a peer tool, or a
// tracebench mechanism in the peers' mode.
type Peer struct {
	Name    string
	NsPerOp Estimate
	// Overhead is ns/op above BenchmarkPeers/baseline, paired by round.
	Overhead    Shift
	HasOverhead bool
}

// summarizePeers compares each BenchmarkPeers sub-benchmark with that
// benchmark's baseline, round by round.
func summarizePeers(run *Run) Part {
	base := Key{Bench: Peers, Mechanism: Baseline}
	p := &PeersPart{}
	for k := range run.Samples {
		if k.Bench != Peers || k.Mechanism == Baseline {
			continue
		}
		peer := Peer{Name: k.Mechanism}
		peer.NsPerOp, _ = Median(run.Values(k, "ns/op"))
		peer.Overhead, peer.HasOverhead = ComparePaired(run.Paired(k, base, "ns/op"))
		p.Peers = append(p.Peers, peer)
	}
	slices.SortFunc(p.Peers, func(a, b Peer) int { return cmp.Compare(a.Name, b.Name) })
	p.Baseline, _ = Median(run.Values(base, "ns/op"))
	for _, k := range slices.Sorted(maps.Keys(run.Config)) {
		if pkg, ok := strings.CutPrefix(k, "tracebench-peer-"); ok {
			p.Versions = append(p.Versions, pkg+" "+run.Config[k])
		}
	}
	return p
}

func (p *PeersPart) Measured() bool            { return len(p.Peers) > 0 }
func (p *PeersPart) Expected() []Key           { return nil }
func (p *PeersPart) Charts(*Summary) []Chart   { return nil }
func (p *PeersPart) Comparisons() []Comparison { return nil }
func (p *PeersPart) Without() string           { return "" }
