package peers

import (
	_ "embed"
	"fmt"
	"strings"
)

// reproScript is every row as a standalone workload (repro.py), printed
// with the reproductions.
//
//go:embed repro.py
var reproScript string

// Report is a conformance run: every row, each peer's cell in it, and
// what the numbers were measured on.
type Report struct {
	// Kernel, CPUs and Clock say where it ran ("7.2.13+deb14-amd64", "2",
	// "icount").
	Kernel, CPUs, Clock string
	// Date is the run's day (UTC, 2006-01-02).
	Date string
	// Versions are the tools' package versions (Root.VersionLines).
	Versions []string
	Rows     []RowReport
}

// RowReport is one row: what its workload did and each peer's cell.
type RowReport struct {
	Name string
	// What says what the workload does and which limit it provokes.
	What string
	// Calls is the truth: vfs_read calls of the traced process.
	Calls int
	// Notes are further numbers of the workload (threads, durations).
	Notes []string
	Peers []PeerCell
}

// PeerCell is one peer in one row.
type PeerCell struct {
	Peer string
	// Own: Peer is one of tracebench's mechanisms, run on the same row
	// (not at the same time as the peers) for contrast.
	Own  bool `json:",omitempty"`
	Cell Cell
	// Kernel is what the kernel said while the peer ran: attachments
	// before the workload, counters' growth over it.
	Kernel Kernel
	// KernelNote says why some of Kernel could not be read.
	KernelNote string
	// Error says why the cell was not measured; a run with one fails.
	Error string
	// Output is what the tool printed (kept apart from the numbers).
	Output string `json:"-"`
}

// Unmeasured returns the cells not measured, as "row/peer: why".
func (r Report) Unmeasured() []string {
	var missing []string
	for _, row := range r.Rows {
		for _, p := range row.Peers {
			if p.Error != "" {
				missing = append(missing, fmt.Sprintf("%s/%s: %s", row.Name, p.Peer, p.Error))
			}
		}
	}
	return missing
}

// column is a peer, or one of tracebench's mechanisms, of the table.
type column struct {
	name string
	own  bool
}

func (c column) String() string {
	if c.own {
		return "tracebench " + c.name
	}
	return c.name
}

// columns returns the peers of the report's rows, then tracebench's
// mechanisms, each in first-seen order.
func (r Report) columns() []column {
	var cols []column
	for _, own := range []bool{false, true} {
		seen := map[string]bool{}
		for _, row := range r.Rows {
			for _, p := range row.Peers {
				if p.Own == own && !seen[p.Peer] {
					seen[p.Peer] = true
					cols = append(cols, column{p.Peer, own})
				}
			}
		}
	}
	return cols
}

// Markdown renders the report: the table of cells, then each row's
// numbers.
func (r Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Linux %s, %s CPUs, guest clock %s, %s; %s\n\n", r.Kernel, r.CPUs, r.Clock, r.Date, strings.Join(r.Versions, ", "))
	r.writeTable(&b, true, PeerCell.summary)
	b.WriteString(classLegend)
	r.writeAttached(&b)
	b.WriteString("\n## The rows, with the numbers behind each cell\n")
	for _, row := range r.Rows {
		fmt.Fprintf(&b, "\n### %s\n\n%s (%d calls", row.Name, row.What, row.Calls)
		for _, n := range row.Notes {
			fmt.Fprintf(&b, "; %s", n)
		}
		b.WriteString(")\n\n")
		for _, p := range row.Peers {
			fmt.Fprintf(&b, "- **%v**: %s\n", column{p.Peer, p.Own}, p.details())
		}
	}
	r.writeRepros(&b)
	return b.String()
}

const classLegend = `
Classes: **exact**, every call counted once with a possible latency;
**loss visible**, calls missing and the tool said so (its lines are quoted
below); **silent loss**, calls missing without a word; **wrong value**,
counted calls that cannot be the workload's as the tool shows them (a
bucket above what any call took: too long; blocked calls shown below what
they blocked for: too short; more calls than made: extra), whatever was
lost besides; **cannot observe**, with the reason. A tool's count is held
to the traced process's vfs_read calls, which the workload knows one by
one. The tracebench columns are the same rows' workloads run again with
tracebench's mechanisms attached instead of the peers; their notices are
the warnings ` + "`tracebench trace`" + ` prints.
`

// writeAttached writes each peer's command line and what the kernel said
// it attached, from the first row where that was read.
func (r Report) writeAttached(b *strings.Builder) {
	b.WriteString("\n## What each peer ran and what it attached\n\n" +
		"Read from the kernel while the tool ran (its BPF links through their link info, each program's " +
		"calls named through kallsyms; perf's tracefs instance).\n\n")
	for _, c := range r.columns() {
		if c.own {
			continue
		}
		fmt.Fprintf(b, "- **%s**", c.name)
		if p, err := Lookup(c.name); err == nil {
			fmt.Fprintf(b, ": `%s`", strings.ReplaceAll(p.CommandLine(), "\n", " "))
		}
		for _, row := range r.Rows {
			if cell, ok := row.cell(c); ok && len(cell.Kernel.Attached) > 0 {
				fmt.Fprintf(b, "; attached (row %s): %s", row.Name, strings.Join(cell.Kernel.Attached, "; "))
				break
			}
		}
		b.WriteString("\n")
	}
}

// cell returns the row's cell of column c.
func (row RowReport) cell(c column) (PeerCell, bool) {
	for _, p := range row.Peers {
		if p.Peer == c.name && p.Own == c.own {
			return p, true
		}
	}
	return PeerCell{}, false
}

// needsRepro says whether a cell is a finding a maintainer should be able
// to reproduce: a peer's silent loss or wrong value.
func (p PeerCell) needsRepro() bool {
	return !p.Own && p.Error == "" && (p.Cell.Class == SilentLoss || p.Cell.Class == WrongValue)
}

// reproStart is how a shell starts a row's workload with its PID in $PID.
func reproStart(row string) string {
	switch row {
	case "pid-namespace":
		return "unshare --pid --fork python3 repro.py pid-namespace &\nsleep 1; PID=$(pgrep -n -f 'repro.py pid-namespace')"
	case "distinct-threads-over-map":
		return "sysctl kernel.pid_max=4194304\npython3 repro.py " + row + " & PID=$!"
	}
	return "python3 repro.py " + row + " & PID=$!"
}

// writeRepros writes a reproduction of every peer's silent loss and wrong
// value: the row's workload as a Python script, the tool's command line.
func (r Report) writeRepros(b *strings.Builder) {
	b.WriteString("\n## Reproductions\n\n" +
		"Each silent loss and wrong value above, as a maintainer can run it without tracebench, as root: start the " +
		"row's workload (repro.py, at the end), attach the tool within its 8 s wait, and stop the tool " +
		"(Ctrl-C; bpftrace -p exits with the process) once the workload has printed how many vfs_read calls it " +
		"made; the interpreter may add a short read of its own (seen: one, under 8 µs). Checked in the 7.2 guest with " +
		"funclatency -k on kretprobe-maxactive (10 of 12 blocked reads counted), perf on interrupted-read (3 reads " +
		"of 50 ms in \"16 - 32 ms\") and on late-threads (\"No data found\" for 400 reads). With tracebench, in a " +
		"guest with the peer root: " +
		"`TRACEBENCH_PEER_ROOT=DIR peers.test -test.run TestConformance -test.v " +
		"-peers.conformance.rows ROW -peers.conformance.peers PEER`.\n")
	for _, c := range r.columns() {
		if c.own {
			continue
		}
		p, err := Lookup(c.name)
		if err != nil {
			continue
		}
		var rows []string
		for _, row := range r.Rows {
			if cell, ok := row.cell(c); ok && cell.needsRepro() {
				rows = append(rows, fmt.Sprintf("%s (%v)", row.Name, cell.Cell))
			}
		}
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(b, "\n### %s\n\n%s in: %s.\n\n", c.name, p.Design, strings.Join(rows, "; "))
		for _, row := range r.Rows {
			if cell, ok := row.cell(c); ok && cell.needsRepro() {
				fmt.Fprintf(b, "```sh\n# %s: %v\n%s\n%s\n```\n", row.Name, cell.Cell, reproStart(row.Name), p.CommandLine())
			}
		}
	}
	fmt.Fprintf(b, "\n### repro.py\n\n```python\n%s```\n", reproScript)
}

// SummaryTable is the table of classes only, without the counts, as the
// top-level README shows it.
func (r Report) SummaryTable() string {
	var b strings.Builder
	r.writeTable(&b, false, func(p PeerCell) string {
		if p.Error != "" {
			return "not measured"
		}
		return p.Cell.Class.String()
	})
	return b.String()
}

// writeTable writes a row per row and a column per peer, each cell as
// text says, with the row's calls if withCalls.
func (r Report) writeTable(b *strings.Builder, withCalls bool, text func(PeerCell) string) {
	cols := r.columns()
	heads := make([]string, len(cols))
	for i, c := range cols {
		heads[i] = c.String()
	}
	calls, rule := "", ""
	if withCalls {
		calls, rule = " calls |", "---|"
	}
	fmt.Fprintf(b, "| row |%s %s |\n|---|%s%s\n", calls, strings.Join(heads, " | "), rule, strings.Repeat("---|", len(cols)))
	for _, row := range r.Rows {
		cells := make([]string, len(cols))
		for i, c := range cols {
			cells[i] = "—"
			if p, ok := row.cell(c); ok {
				cells[i] = text(p)
			}
		}
		if withCalls {
			fmt.Fprintf(b, "| %s | %d | %s |\n", row.Name, row.Calls, strings.Join(cells, " | "))
		} else {
			fmt.Fprintf(b, "| %s | %s |\n", row.Name, strings.Join(cells, " | "))
		}
	}
}

func (p PeerCell) summary() string {
	if p.Error != "" {
		return "not measured"
	}
	return p.Cell.String()
}

// maxNotices bounds the notices quoted per cell.
const maxNotices = 3

// details are every number behind a cell.
func (p PeerCell) details() string {
	if p.Error != "" {
		return "not measured: " + p.Error
	}
	c := p.Cell
	if c.Class == CannotObserve {
		return "cannot observe: " + c.Reason
	}
	parts := []string{fmt.Sprintf("%v; counted %d of %d", c.Class, c.Counted, c.Calls)}
	for _, n := range []struct {
		what string
		n    uint64
	}{{"lost", c.Lost}, {"of them untold", c.Silent}, {"extra", c.Extra}, {"too long", c.TooLong}, {"too short", c.TooShort}} {
		if n.n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", n.what, n.n))
		}
	}
	if len(c.Notices) == 0 {
		parts = append(parts, "the tool printed nothing about lost calls")
	} else {
		var quoted []string
		for _, n := range c.Notices[:min(len(c.Notices), maxNotices)] {
			quoted = append(quoted, n.Line)
		}
		n, counted := noticeSum(c.Notices)
		told := "not saying how many"
		if counted {
			told = fmt.Sprintf("telling of %d", n)
		}
		parts = append(parts, fmt.Sprintf("the tool printed %d lines about lost calls (%s), e.g. %q", len(c.Notices), told, quoted))
	}
	k := p.Kernel
	parts = append(parts, fmt.Sprintf("kernel (system-wide, over the workload): missed %d, recursion misses %d, ring buffer dropped %d",
		k.Missed, k.RecursionMisses, k.Dropped))
	if len(k.Maps) > 0 {
		var fills []string
		for _, m := range k.Maps {
			fills = append(fills, m.String())
		}
		parts = append(parts, "hash maps "+strings.Join(fills, ", "))
	}
	if p.KernelNote != "" {
		parts = append(parts, p.KernelNote)
	}
	parts = append(parts, "attached: "+strings.Join(k.Attached, "; "))
	return strings.Join(parts, "; ")
}
