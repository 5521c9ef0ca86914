package funcset

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"unicode/utf8"
)

const (
	// magic is the first line of a set file.
	magic = "# tracebench function set, format 1"
	// magicPrefix starts the first line of a set file of any format.
	magicPrefix = "# tracebench function set"
	// maxLine is the longest line Read takes, in bytes.
	maxLine = 1 << 20
	// ksymNameLen is the kernel's KSYM_NAME_LEN: a symbol name is shorter.
	ksymNameLen = 512
)

// headerKeys are the keys of a set file's header, each given once.
var headerKeys = []string{"name", "kernel", "kinds", "method", "inputs"}

// Write writes s in the set file format (see Read). It refuses a set
// whose values would not read back: a name that is empty or holds
// blanks, a function name that is not a kernel symbol, a name given
// twice, a reason or header value holding a line break, a NUL byte or
// invalid UTF-8.
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
		if !oneLine(v) {
			return fmt.Errorf("function set %q: %s %q holds a line break, a NUL byte or invalid UTF-8", s.Name, key, v)
		}
	}
	if s.Name == "" || strings.ContainsAny(s.Name, " \t") {
		return fmt.Errorf("function set name %q is empty or holds blanks", s.Name)
	}
	seen := map[string]bool{}
	for _, e := range append(s.Members[:len(s.Members):len(s.Members)], s.Excluded...) {
		if why := symbolRule(e.Name); why != "" {
			return fmt.Errorf("function set %s: function name %q %s", s.Name, e.Name, why)
		}
		if !oneLine(e.Reason) {
			return fmt.Errorf("function set %s: reason %q of %s holds a line break, a NUL byte or invalid UTF-8",
				s.Name, e.Reason, e.Name)
		}
		if seen[e.Name] {
			return fmt.Errorf("function set %s: function %s listed twice", s.Name, e.Name)
		}
		seen[e.Name] = true
	}
	return nil
}

// oneLine reports whether v reads back as (part of) one line: text
// without line breaks or NUL bytes.
func oneLine(v string) bool {
	return utf8.ValidString(v) && !strings.ContainsAny(v, "\r\n\x00")
}

// Read reads a file of functions, a set file as Write writes it or a
// plain list of names. A set file's first line is the magic line, then a
// header of "# key: value" lines (each of name, kernel, kinds, method and
// inputs once; kinds are Kinds' names), then one entry a line: + for a
// member, - for an excluded candidate, a tab, the function, a tab, the
// reason (the rest of the line). Members come first, in order:
//
//	# tracebench function set, format 1
//	# name: n100
//	# kernel: 7.2.13+deb14-amd64
//	# kinds: fentry fexit kprobe kprobe.multi function_graph
//	# method: <how the members were found or drawn>
//	# inputs: <what they were drawn from>
//	+	vfs_read	<why it is in>
//	-	do_exit	<why it is out>
//
// A file whose first line does not start "# tracebench function set" is
// a list: one function a line, blanks around it, blank lines and #
// comments (to the end of the line) ignored, as grep of
// available_filter_functions gives. Its members are the names in order,
// each with the reason "line N"; it has no kernel or kinds:
//
//	# the read path
//	vfs_read
//	rw_verify_area   # checked before every read
//
//	anon_pipe_read
//
// A function is a kernel symbol: letters, digits, _ and the . of compiler
// clones (dput.part.0), not starting with a digit, shorter than 512 bytes
// (KSYM_NAME_LEN); each is given once. Every line is UTF-8 text without
// NUL bytes, at most 1 MiB.
//
// An error names the line and the rule it broke; it shows nothing of the
// file but tokens that are C identifiers (tracebench runs as root and may
// be asked to read a file its user may not).
func Read(r io.Reader) (*Set, error) {
	lines := newLineScanner(r)
	first, ok := lines.scan()
	switch {
	case !ok && lines.err != nil:
		return nil, lines.err
	case !ok:
		return nil, errors.New("empty: want function names, one a line, or a function set")
	case first == magic:
		return readSet(lines)
	case strings.HasPrefix(first, magicPrefix):
		return nil, lineError(1, "a function set of another format: this tracebench reads %q", magic)
	}
	return readList(lines, first)
}

// ReadFile reads the file of functions at path (see Read); errors start
// with path and wrap os.ErrNotExist for a missing file.
func ReadFile(path string) (*Set, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // its message repeats the path
		}
		return nil, fmt.Errorf("%s: cannot open: %w", path, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s: a directory, not a file of function names", path)
	}
	s, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// lineError is an error at line n: the rule it broke.
func lineError(n int, format string, args ...any) error {
	return fmt.Errorf("line %d: %w", n, fmt.Errorf(format, args...))
}

// lineScanner reads a file of functions a line at a time, stopping at a
// line too long or not text; err is then set.
type lineScanner struct {
	sc  *bufio.Scanner
	n   int // lines read
	err error
}

func newLineScanner(r io.Reader) *lineScanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, maxLine)
	return &lineScanner{sc: sc}
}

// scan returns the next line without its "\r\n" or "\n"; false at the end
// or on an error.
func (l *lineScanner) scan() (string, bool) {
	if l.err != nil {
		return "", false
	}
	if !l.sc.Scan() {
		switch err := l.sc.Err(); {
		case errors.Is(err, bufio.ErrTooLong):
			l.err = lineError(l.n+1, "longer than %d bytes", maxLine)
		case err != nil:
			l.err = lineError(l.n+1, "reading: %w", err)
		}
		return "", false
	}
	l.n++
	line := strings.TrimSuffix(l.sc.Text(), "\r")
	if strings.IndexByte(line, 0) >= 0 || !utf8.ValidString(line) {
		l.err = lineError(l.n, "binary content (a NUL byte or invalid UTF-8), not text")
		return "", false
	}
	return line, true
}

// readSet reads the set file after its first line.
func readSet(lines *lineScanner) (*Set, error) {
	s := &Set{}
	header := map[string]int{} // key: its line
	seen := map[string]int{}   // function: its line
	excludedFrom := 0          // the first excluded entry's line
	entries := false
	for line, ok := lines.scan(); ok; line, ok = lines.scan() {
		n := lines.n
		var err error
		switch {
		case strings.HasPrefix(line, "#") && entries:
			err = errors.New(`a "#" line after the entries: the header comes first`)
		case strings.HasPrefix(line, "#"):
			err = s.readHeader(line, n, header)
		default:
			if !entries {
				entries = true
				err = missingHeader(header)
			}
			if err == nil {
				err = s.readEntry(line, n, seen, &excludedFrom)
			}
		}
		if err != nil {
			return nil, lineError(n, "%w", err)
		}
	}
	if lines.err != nil {
		return nil, lines.err
	}
	if err := missingHeader(header); err != nil {
		return nil, lineError(lines.n, "%w", err)
	}
	return s, nil
}

// missingHeader returns an error naming a header key not given.
func missingHeader(header map[string]int) error {
	for _, key := range headerKeys {
		if header[key] == 0 {
			return fmt.Errorf(`the header has no "# %s: " line (it gives each of %s once, before the entries)`,
				key, strings.Join(headerKeys, ", "))
		}
	}
	return nil
}

func (s *Set) readHeader(line string, n int, header map[string]int) error {
	key, value, ok := strings.Cut(strings.TrimPrefix(line, "# "), ": ")
	if !ok || !strings.HasPrefix(line, "# ") {
		return errors.New(`a header line is "# key: value"`)
	}
	if !slices.Contains(headerKeys, key) {
		return fmt.Errorf("the key (%s) is unknown (known: %s)", shown(key), strings.Join(headerKeys, ", "))
	}
	if header[key] != 0 {
		return fmt.Errorf("header key %s given twice (first on line %d)", key, header[key])
	}
	header[key] = n
	switch key {
	case "name":
		if value == "" || strings.ContainsAny(value, " \t") {
			return errors.New("the name is empty or holds blanks")
		}
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
	}
	return nil
}

func (s *Set) readEntry(line string, n int, seen map[string]int, excludedFrom *int) error {
	fields := strings.SplitN(line, "\t", 3)
	if len(fields) != 3 {
		return errors.New(`an entry is "+|-<tab>function<tab>reason"`)
	}
	if fields[0] != "+" && fields[0] != "-" {
		return errors.New("an entry starts with + (a member) or - (excluded), then a tab")
	}
	e := Entry{Name: fields[1], Reason: fields[2]}
	if err := see(e.Name, n, seen); err != nil {
		return err
	}
	if fields[0] == "-" {
		if *excludedFrom == 0 {
			*excludedFrom = n
		}
		s.Excluded = append(s.Excluded, e)
		return nil
	}
	if *excludedFrom != 0 {
		return fmt.Errorf("the member (%s) comes after the excluded ones (from line %d): members come first",
			shown(e.Name), *excludedFrom)
	}
	s.Members = append(s.Members, e)
	return nil
}

// readList reads a plain list of functions whose first line is first.
func readList(lines *lineScanner, first string) (*Set, error) {
	s := &Set{Name: "list", Method: "the functions listed, in order"}
	seen := map[string]int{}
	for line, ok := first, true; ok; line, ok = lines.scan() {
		name, err := listed(line)
		if err == nil && name != "" {
			err = see(name, lines.n, seen)
		}
		if err != nil {
			return nil, lineError(lines.n, "%w", err)
		}
		if name != "" {
			s.Members = append(s.Members, Entry{Name: name, Reason: fmt.Sprintf("line %d", lines.n)})
		}
	}
	if lines.err != nil {
		return nil, lines.err
	}
	if len(s.Members) == 0 {
		return nil, fmt.Errorf("lines 1-%d name no function (blank and # lines only)", lines.n)
	}
	return s, nil
}

// listed returns the function a line of a list names, "" for none.
func listed(line string) (string, error) {
	text, _, _ := strings.Cut(line, "#")
	switch words := strings.Fields(text); {
	case len(words) == 0:
		return "", nil
	case len(words) == 2 && isModuleTag(words[1]):
		return "", fmt.Errorf("the function (%s) is a module's (\"function [module]\"): function sets hold vmlinux "+
			"functions only", shown(words[0]))
	case len(words) > 1:
		return "", fmt.Errorf("%d words: a list holds one function a line", len(words))
	default:
		return words[0], nil
	}
}

func isModuleTag(s string) bool {
	return len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']' && isModule(s[1:len(s)-1])
}

// see records that line n names the function name, refusing one that is
// not a kernel symbol or was named before.
func see(name string, n int, seen map[string]int) error {
	if why := symbolRule(name); why != "" {
		return fmt.Errorf("the function name %s", why)
	}
	if first, ok := seen[name]; ok {
		return fmt.Errorf("the function (%s) is listed twice, first on line %d", shown(name), first)
	}
	seen[name] = n
	return nil
}

// symbolRule returns the rule name breaks as a kernel symbol, "" if none.
func symbolRule(name string) string {
	switch {
	case name == "":
		return "is empty"
	case len(name) >= ksymNameLen:
		return fmt.Sprintf("is %d bytes or longer (KSYM_NAME_LEN)", ksymNameLen)
	case !isSymbol(name):
		return "is not a kernel symbol (letters, digits, _ and the . of compiler clones, not starting with a digit)"
	}
	return ""
}

// shown is token as an error about a file shows it: a C identifier, all
// an error may show of a file, as it is, anything else not at all.
func shown(token string) string {
	if isIdentifier(token) {
		return token
	}
	return "not shown: not a C identifier"
}

// isIdentifier reports whether s is a C identifier shorter than
// KSYM_NAME_LEN: a letter or _, then letters, digits and _.
func isIdentifier(s string) bool {
	return isSymbol(s) && !strings.Contains(s, ".") && len(s) < ksymNameLen
}
