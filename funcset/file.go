package funcset

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// magic is the first line of a set file.
const magic = "# tracebench function set, format 1"

// The file format, one function a line after a header of "# key: value"
// lines:
//
//	# tracebench function set, format 1
//	# name: n100
//	# kernel: 7.2.13+deb14-amd64
//	# kinds: fentry fexit kprobe kretprobe ftrace
//	# method: <how the members were found or drawn>
//	# inputs: <what they were drawn from>
//	+	vfs_read	<why it is in>
//	-	do_exit	<why it is out>
//
// Members ("+") come first, in order; excluded candidates ("-") follow.
// Fields are separated by one tab; the reason is the rest of the line.
var headerKeys = []string{"name", "kernel", "kinds", "method", "inputs"}

// Write writes s in the set file format. It refuses a set whose values
// would not read back: an empty or blank-containing function name, a
// name given twice, a line break in a reason or header value.
func Write(w io.Writer, s *Set) error {
	if err := s.check(); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, magic)
	for _, kv := range [][2]string{{"name", s.Name}, {"kernel", s.Kernel}, {"kinds", kindList(s.Kinds)},
		{"method", s.Method}, {"inputs", s.Inputs}} {
		fmt.Fprintf(bw, "# %s: %s\n", kv[0], kv[1])
	}
	for _, e := range s.Members {
		fmt.Fprintf(bw, "+\t%s\t%s\n", e.Name, e.Reason)
	}
	for _, e := range s.Excluded {
		fmt.Fprintf(bw, "-\t%s\t%s\n", e.Name, e.Reason)
	}
	return bw.Flush()
}

// WriteFile writes s to path (mode 0644).
func WriteFile(path string, s *Set) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = Write(f, s)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write function set %s: %w", path, err)
	}
	return nil
}

func (s *Set) check() error {
	for key, v := range map[string]string{"name": s.Name, "kernel": s.Kernel, "method": s.Method, "inputs": s.Inputs} {
		if strings.ContainsAny(v, "\r\n") {
			return fmt.Errorf("function set %q: %s %q holds a line break", s.Name, key, v)
		}
	}
	if s.Name == "" || strings.ContainsAny(s.Name, " \t") {
		return fmt.Errorf("function set name %q is empty or holds blanks", s.Name)
	}
	seen := map[string]bool{}
	for _, e := range append(s.Members[:len(s.Members):len(s.Members)], s.Excluded...) {
		if e.Name == "" || strings.ContainsAny(e.Name, " \t\r\n") {
			return fmt.Errorf("function set %s: function name %q is empty or holds blanks", s.Name, e.Name)
		}
		if strings.ContainsAny(e.Reason, "\r\n") {
			return fmt.Errorf("function set %s: reason %q of %s holds a line break", s.Name, e.Reason, e.Name)
		}
		if seen[e.Name] {
			return fmt.Errorf("function set %s: function %s listed twice", s.Name, e.Name)
		}
		seen[e.Name] = true
	}
	return nil
}

// Read reads a set written by Write. Errors name the line and its bad
// value: another first line, a missing or repeated header key, an unknown
// kind, a line that is not "+|-<tab>name<tab>reason", a function listed
// twice, a member after the excluded ones.
func Read(r io.Reader) (*Set, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	s := &Set{}
	header := map[string]bool{}
	seen := map[string]bool{}
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if n == 1 {
			if line != magic {
				return nil, fmt.Errorf("line 1: %q is not %q", line, magic)
			}
			continue
		}
		var err error
		if strings.HasPrefix(line, "#") {
			err = s.readHeader(line, header)
		} else {
			err = s.readEntry(line, seen)
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, errors.New("empty function set file")
	}
	for _, key := range headerKeys {
		if !header[key] {
			return nil, fmt.Errorf("function set %q has no %q header line", s.Name, key)
		}
	}
	return s, nil
}

// ReadFile reads the set file at path.
func ReadFile(path string) (*Set, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func (s *Set) readHeader(line string, seen map[string]bool) error {
	key, value, ok := strings.Cut(strings.TrimPrefix(line, "# "), ": ")
	if !ok || !strings.HasPrefix(line, "# ") {
		return fmt.Errorf("header %q is not \"# key: value\"", line)
	}
	if seen[key] {
		return fmt.Errorf("header key %q given twice", key)
	}
	seen[key] = true
	switch key {
	case "name":
		s.Name = value
	case "kernel":
		s.Kernel = value
	case "kinds":
		kinds, err := ParseKinds(value)
		if err != nil {
			return err
		}
		s.Kinds = kinds
	case "method":
		s.Method = value
	case "inputs":
		s.Inputs = value
	default:
		return fmt.Errorf("unknown header key %q", key)
	}
	return nil
}

func (s *Set) readEntry(line string, seen map[string]bool) error {
	fields := strings.SplitN(line, "\t", 3)
	if len(fields) != 3 || fields[1] == "" || strings.ContainsAny(fields[1], " ") {
		return fmt.Errorf("%q is not \"+|-<tab>function<tab>reason\"", line)
	}
	e := Entry{Name: fields[1], Reason: fields[2]}
	if seen[e.Name] {
		return fmt.Errorf("function %s listed twice", e.Name)
	}
	seen[e.Name] = true
	switch fields[0] {
	case "+":
		if len(s.Excluded) > 0 {
			return fmt.Errorf("member %s after excluded functions", e.Name)
		}
		s.Members = append(s.Members, e)
	case "-":
		s.Excluded = append(s.Excluded, e)
	default:
		return fmt.Errorf("%q is neither + (member) nor - (excluded) in %q", fields[0], line)
	}
	return nil
}
