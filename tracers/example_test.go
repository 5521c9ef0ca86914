package tracers_test

// These examples need root and a kernel that runs the mechanisms, so only
// those whose output is the same on every machine run as tests.

import (
	"errors"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"tracebench/histogram"
	"tracebench/tracers"
)

// Start the first of the slow-read tool's designs the kernel runs, as
// `tracebench trace --mechanism auto` does: a kernel that lacks one says
// which feature (ErrUnsupported), anything else is an error.
func ExampleMechanism_Start() {
	cfg := tracers.Config{Threshold: 10 * time.Millisecond, TGID: uint32(os.Getpid())}
	for _, m := range tracers.MechanismsFor(tracers.RoleTool) {
		tr, err := m.Start(cfg)
		if errors.Is(err, tracers.ErrUnsupported) {
			fmt.Println("skipped:", err) // e.g. "fsession needs BPF_TRACE_FSESSION (Linux 7.0); ..."
			continue
		}
		if err != nil {
			log.Fatal(err)
		}
		defer tr.Close()
		fmt.Println("tracing with", m.Name)
		return
	}
	fmt.Println("this kernel runs none of them")
}

// What a mechanism's declaration rules out is refused before anything is
// loaded, whatever the kernel: here aggregates of a mechanism that does
// not count every call in the kernel.
func ExampleMechanism_Start_refused() {
	for _, m := range tracers.Mechanisms() {
		if m.Can.Aggregates() {
			continue
		}
		_, err := m.Start(tracers.Config{Threshold: time.Millisecond, Histogram: true})
		fmt.Println(errors.Is(err, tracers.ErrUnsupported), strings.TrimPrefix(err.Error(), m.Name+": "))
		break
	}
	// Output: false histogram asked for: the mechanism does not count every call in the kernel
}

// Read events as they come: ReadEvent blocks until one is there or the
// deadline passes. Fields the mechanism does not observe are in
// Event.Unknown and read 0.
func ExampleTracer_ReadEvent() {
	m := tracers.MechanismsFor(tracers.RoleTool)[0]
	tr, err := m.Start(tracers.Config{Threshold: time.Millisecond})
	if err != nil {
		log.Fatal(err)
	}
	defer tr.Close()
	stop := time.Now().Add(10 * time.Second)
	for {
		ev, err := tr.ReadEvent(stop)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		if ev.Unknown.Has(tracers.FieldResult) {
			fmt.Printf("%s[%d] took %v\n", ev.Comm, ev.PID, ev.Latency)
			continue
		}
		fmt.Printf("%s[%d] read %d of %d bytes in %v\n", ev.Comm, ev.PID, ev.Result, ev.Requested, ev.Latency)
	}
}

// Stop tracing, read the events still in the ring buffer and the counters
// they must agree with: slow == events + dropped, except for the counters
// the mechanism declares unknown in this run.
func ExampleDrain() {
	m := tracers.MechanismsFor(tracers.RoleTool)[0]
	tr, err := m.Start(tracers.Config{Threshold: time.Millisecond, TGID: uint32(os.Getpid())})
	if err != nil {
		log.Fatal(err)
	}
	defer tr.Close()
	if _, err := os.ReadFile("/proc/self/stat"); err != nil { // vfs_read calls of this process
		log.Fatal(err)
	}
	events, stats, err := tracers.Drain(tr, 2*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	if stats.Unknown.Has(tracers.FieldSlow | tracers.FieldDropped) {
		fmt.Printf("%d events; %s does not observe %s\n", len(events), m.Name, stats.Unknown)
		return
	}
	fmt.Printf("calls=%d slow=%d dropped=%d events=%d\n", stats.Calls, stats.Slow, stats.Dropped, len(events))
}

// Count every call's latency in the kernel, as funclatency does, and print
// the non-empty slots of the log2 histogram.
func ExampleAggregator() {
	m := tracers.MechanismsFor(tracers.RoleTool)[0]
	tr, err := m.Start(tracers.Config{Threshold: tracers.MaxThreshold, Histogram: true})
	if err != nil {
		log.Fatal(err) // a mechanism with !m.Can.Aggregates() refuses Histogram
	}
	defer tr.Close()
	time.Sleep(time.Second)
	if err := tr.Detach(); err != nil {
		log.Fatal(err)
	}
	h, err := tr.(tracers.Aggregator).Histogram()
	if err != nil {
		log.Fatal(err)
	}
	for i, n := range h {
		if n > 0 {
			low, high := histogram.SlotRange(i)
			fmt.Printf("%d-%d µs: %d calls\n", low, high, n)
		}
	}
	fmt.Println("total:", h.Total())
}

// Validate names the first bad value of a configuration, without a kernel.
func ExampleConfig_Validate() {
	err := tracers.Config{Threshold: -time.Millisecond}.Validate()
	fmt.Println(err)
	// Output: threshold -1ms is negative
}
