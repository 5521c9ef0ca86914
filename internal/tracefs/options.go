package tracefs

import (
	"errors"
	"os"
)

// Swap writes settings in order and returns the values they replaced, for
// Restore: a few tracefs options are shared by every instance on some
// kernels (the funcgraph-* ones before 7.x). A file the kernel does not
// have is skipped when optional (the option does not exist there, so it
// cannot change the output); on error, what was already written is
// restored.
func (in Instance) Swap(settings []Setting, optional bool) (old []Setting, err error) {
	for _, s := range settings {
		prev, err := in.Read(s.File)
		if optional && errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err == nil {
			err = in.Write(s.File, s.Value)
		}
		if err != nil {
			return nil, errors.Join(err, in.Restore(old))
		}
		old = append(old, Setting{File: s.File, Value: prev})
	}
	return old, nil
}

// Restore writes back what Swap returned, last first.
func (in Instance) Restore(old []Setting) error {
	var errs []error
	for i := len(old) - 1; i >= 0; i-- {
		errs = append(errs, in.Write(old[i].File, old[i].Value))
	}
	return errors.Join(errs...)
}

// TextOutput makes an instance print the text lines tracebench's parsers
// read, whatever the top level's options (a new instance inherits them).
var TextOutput = []Setting{
	{File: "options/context-info", Value: "1"},
	{File: "options/latency-format", Value: "0"},
	{File: "options/raw", Value: "0"},
	{File: "options/hex", Value: "0"},
	{File: "options/bin", Value: "0"},
	{File: "options/sym-offset", Value: "0"},
	{File: "options/sym-addr", Value: "0"},
}
