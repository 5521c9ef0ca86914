package bench

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"

	"tracebench/peers"
	"tracebench/tracers"
)

// histogramCase is the tracebench configuration equivalent to the peers':
// every call of this process timed into the log2 histogram, no event
// (the threshold is never reached).
var histogramCase = benchCase{
	name: "histogram",
	config: func(self uint32) tracers.Config {
		return tracers.Config{TGID: self, Threshold: highThreshold, Histogram: true}
	},
	check: func(s tracers.Stats, reads, _ uint64) error {
		return expectKnown(s, tracers.FieldCalls, s.Calls >= reads, "%d calls counted for %d reads: %+v", s.Calls, reads, s)
	},
}

// BenchmarkPeers reports ns/op of BenchmarkVFSRead's loop (1-byte read(2)
// of /dev/zero from this process) with nothing attached, with tracebench's
// tools (tracers.RoleTool) in histogramCase, and with each peer tool
// tracing this process with its own PID filter, started and attached
// before the timer starts. A peer is skipped with the reason when there is no peer root
// (peers.RootEnv) or its tool cannot run the mode.
func BenchmarkPeers(b *testing.B) {
	units := []unit{{name: "baseline", run: benchBaseline}}
	for _, m := range tracers.MechanismsFor(tracers.RoleTool) {
		units = append(units, unit{name: "tracebench-" + m.Name, run: benchVFSRead(m, histogramCase)})
	}
	root, rootErr := peers.RootFromEnv()
	if rootErr == nil {
		printPeerVersions(root)
	}
	for _, p := range peers.All() {
		units = append(units, unit{name: p.Name, run: benchPeer(p, root, rootErr)})
	}
	runUnits(b, units)
}

var versionsOnce sync.Once

// printPeerVersions labels the results with the tools' versions, in the
// "key: value" form of printConfig, once per process.
func printPeerVersions(root *peers.Root) {
	versionsOnce.Do(func() {
		for _, line := range root.VersionLines() {
			fmt.Println(line)
		}
	})
}

func benchPeer(p peers.Peer, root *peers.Root, rootErr error) func(*testing.B) {
	return func(b *testing.B) {
		if rootErr != nil {
			b.Skip(rootErr.Error())
		}
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		fd := openZero(b)
		run, err := p.Start(root, os.Getpid())
		if errors.Is(err, peers.ErrUnavailable) {
			b.Skip(err.Error())
		}
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { run.Close() })
		timeReads(b, fd)
		res, err := run.Stop()
		if err != nil {
			b.Fatal(err)
		}
		// A peer that counted fewer calls than reads measured less work.
		if res.Calls < uint64(b.N) {
			b.Fatalf("%s counted %d calls for %d reads; output:\n%s", p.Name, res.Calls, b.N, res.Output)
		}
	}
}
