package funcset

import (
	"errors"
	"fmt"

	"tracebench/internal/tracefs"
)

// traceWith runs run with tracer in a new private tracefs instance,
// tracing off: options written first (optional ones where the kernel has
// them; all restored afterwards, as some are shared by every instance
// before 7.x), then settings (the instance's own), then the tracer. The
// instance is reset and removed before it returns; after a SIGKILL,
// tracefs.ReclaimStale removes it.
func traceWith(tracer string, options, optional, settings []tracefs.Setting, run func(in tracefs.Instance) error) error {
	root, err := tracefs.Root()
	if err != nil {
		return err
	}
	in, err := tracefs.NewInstance(root, "")
	if err != nil {
		return err
	}
	old, err := in.Swap(options, false)
	if err == nil {
		var more []tracefs.Setting
		more, err = in.Swap(optional, true)
		old = append(old, more...)
	}
	if err == nil {
		err = in.WriteAll(append([]tracefs.Setting{{File: "tracing_on", Value: "0"}}, settings...))
	}
	if err == nil {
		if err = in.Write("current_tracer", tracer); err != nil {
			err = fmt.Errorf("%s tracer in a tracefs instance: %w", tracer, err)
		}
	}
	if err == nil {
		err = run(in)
	}
	return errors.Join(err, in.Write("current_tracer", "nop"), in.Restore(old), in.Remove())
}

// noLostEvents fails when in's buffer lost events (overwritten or
// dropped): a trace with holes would miss calls without saying so.
func noLostEvents(in tracefs.Instance) error {
	counts, err := in.BufferCounts()
	if err != nil {
		return err
	}
	if lost := counts["overrun"] + counts["dropped events"]; lost > 0 {
		return fmt.Errorf("the tracer lost %d of %d events", lost, lost+counts["entries"])
	}
	return nil
}
