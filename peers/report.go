package peers

import (
	"fmt"
	"strings"
)

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
	cols := r.columns()
	heads := make([]string, len(cols))
	for i, c := range cols {
		heads[i] = c.String()
	}
	fmt.Fprintf(&b, "| row | calls | %s |\n|---|---|%s\n", strings.Join(heads, " | "), strings.Repeat("---|", len(cols)))
	for _, row := range r.Rows {
		cells := make([]string, len(cols))
		for i, c := range cols {
			cells[i] = "—"
			for _, p := range row.Peers {
				if p.Peer == c.name && p.Own == c.own {
					cells[i] = p.summary()
				}
			}
		}
		fmt.Fprintf(&b, "| %s | %d | %s |\n", row.Name, row.Calls, strings.Join(cells, " | "))
	}
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
	return b.String()
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
