package report

import (
	"cmp"
	"maps"
	"slices"
	"strings"
)

// peersPart is the peers family's share of a report: BenchmarkPeers, the
// peer tools and tracebench's mechanisms in their mode, each against that
// benchmark's own baseline.
type peersPart struct {
	// Peers are the sub-benchmarks but the baseline, by name.
	Peers    []Peer
	Baseline estimate
	// Versions are the tools' "tracebench-peer-<package>" lines.
	Versions []string
}

// Peer is one sub-benchmark of BenchmarkPeers: a peer tool, or a
// tracebench mechanism in the peers' mode.
type Peer struct {
	Name    string
	NsPerOp estimate
	// Overhead is ns/op above BenchmarkPeers/baseline, paired by round.
	Overhead    shift
	hasOverhead bool
}

// summarizePeers compares each BenchmarkPeers sub-benchmark with that
// benchmark's baseline, round by round.
func summarizePeers(run *run) Part {
	base := Key{bench: Peers, Mechanism: Baseline}
	p := &peersPart{}
	for k := range run.samples {
		if k.bench != Peers || k.Mechanism == Baseline {
			continue
		}
		peer := Peer{Name: k.Mechanism}
		peer.NsPerOp, _ = median(run.values(k, "ns/op"))
		peer.Overhead, peer.hasOverhead = comparePaired(run.paired(k, base, "ns/op"))
		p.Peers = append(p.Peers, peer)
	}
	slices.SortFunc(p.Peers, func(a, b Peer) int { return cmp.Compare(a.Name, b.Name) })
	p.Baseline, _ = median(run.values(base, "ns/op"))
	for _, k := range slices.Sorted(maps.Keys(run.config)) {
		if pkg, ok := strings.CutPrefix(k, "tracebench-peer-"); ok {
			p.Versions = append(p.Versions, pkg+" "+run.config[k])
		}
	}
	return p
}

func (p *peersPart) Measured() bool            { return len(p.Peers) > 0 }
func (p *peersPart) expected() []Key           { return nil }
func (p *peersPart) Charts(*Summary) []Chart   { return nil }
func (p *peersPart) Comparisons() []Comparison { return nil }
func (p *peersPart) Without() string           { return "" }
