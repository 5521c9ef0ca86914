package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"tracebench/histogram"
	"tracebench/tracers"
)

// summary is what a trace run ends with.
type summary struct {
	Mechanism string
	Stats     tracers.Stats
	Events    uint64        // events printed
	Elapsed   time.Duration // from attach to detach
	Histogram *histogram.Log2
	PerTGID   *tracers.TGIDTable
}

// printer writes events as they come and the summary at the end.
type printer interface {
	event(tracers.Event) error
	summary(summary) error
}

func newPrinter(json bool, w io.Writer) printer {
	if json {
		return &jsonPrinter{w: w}
	}
	return &textPrinter{w: w}
}

// A value the mechanism did not observe (tracers.Fields) is printed as
// unknownText in text and as null in JSON, never as the 0 it reads.
const unknownText = "?"

// known returns &v, or nil when f is in unknown: the JSON value, null for
// an unknown field, and what textValue prints.
func known[T any](unknown tracers.Fields, f tracers.Field, v T) *T {
	if unknown.Has(f) {
		return nil
	}
	return &v
}

// textValue prints a value of known.
func textValue[T any](v *T) string {
	if v == nil {
		return unknownText
	}
	return fmt.Sprint(*v)
}

// textPrinter writes the key=value lines of the classic slow-read tool,
// and the aggregates as tables for people. An event line is built in line
// with strconv.Append* and handed to w in one Write: w is buffered
// (output) and events can come at tens of thousands a second.
type textPrinter struct {
	w    io.Writer
	line []byte
}

func (p *textPrinter) event(ev tracers.Event) error {
	u := ev.Unknown
	b := append(append(p.line[:0], "EVENT function="...), functionField(ev.Function)...)
	b = append(append(b, " comm="...), commField(ev.Comm)...)
	b = appendTextUint(append(b, " tgid="...), u.Has(tracers.FieldTGID), uint64(ev.TGID))
	b = strconv.AppendUint(append(b, " pid="...), uint64(ev.PID), 10)
	b = appendTextUint(append(b, " requested="...), u.Has(tracers.FieldRequested), ev.Requested)
	b = append(b, " result="...)
	if u.Has(tracers.FieldResult) {
		b = append(b, unknownText...)
	} else {
		b = strconv.AppendInt(b, ev.Result, 10)
	}
	b = strconv.AppendInt(append(b, " latency_us="...), ev.Latency.Microseconds(), 10)
	p.line = append(b, '\n')
	_, err := p.w.Write(p.line)
	return err
}

// appendTextUint appends v, or unknownText when the value is unknown.
func appendTextUint(b []byte, unknown bool, v uint64) []byte {
	if unknown {
		return append(b, unknownText...)
	}
	return strconv.AppendUint(b, v, 10)
}

// commField keeps a line splittable on spaces and '=' and on any line
// break a reader may split on: a task name that is empty or has anything
// but printable ASCII other than space, '=' and '"' is printed Go-quoted
// in ASCII (invalid UTF-8 bytes as \xNN, so no two names print alike).
func commField(comm string) string {
	if comm == "" || strings.ContainsFunc(comm, func(r rune) bool { return r <= ' ' || r >= 0x7f || r == '=' || r == '"' }) {
		return strconv.QuoteToASCII(comm)
	}
	return comm
}

// functionField is a traced function's name, which the kernel's symbol
// rules keep free of blanks and '='; unknownText if an event had none.
func functionField(name string) string {
	if name == "" {
		return unknownText
	}
	return name
}

func (p *textPrinter) summary(s summary) error {
	if s.Histogram != nil {
		writeHistogram(p.w, *s.Histogram)
	}
	if s.PerTGID != nil {
		writePerTGID(p.w, *s.PerTGID)
	}
	v := summaryJSON(s)
	for _, f := range v.Functions {
		if _, err := fmt.Fprintf(p.w, "FUNCTION name=%s calls=%s slow=%s errors=%s dropped=%s lost=%s\n",
			f.Function, textValue(f.Calls), textValue(f.Slow), textValue(f.Errors), textValue(f.Dropped),
			textValue(f.Lost)); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(p.w, "SUMMARY calls=%s slow=%s errors=%s dropped=%s lost=%s events=%d\n",
		textValue(v.Calls), textValue(v.Slow), textValue(v.Errors), textValue(v.Dropped), textValue(v.Lost), v.Events)
	return err
}

// histogramStars is the width of the distribution bar, as in libbpf-tools.
const histogramStars = 40

// writeHistogram prints h like libbpf-tools' print_log2_hist (funclatency,
// biolatency): slots from 0 to the last non-empty one.
func writeHistogram(w io.Writer, h histogram.Log2) {
	last, peak := -1, uint64(0)
	for i, n := range h {
		if n > 0 {
			last, peak = i, max(peak, n)
		}
	}
	fmt.Fprintf(w, "%5s%-19s : count    distribution\n", "", "usecs")
	for i := 0; i <= last; i++ {
		low, high := histogram.SlotRange(i)
		hi, lo := bits.Mul64(h[i], histogramStars) // h[i] * 40 may not fit in 64 bits
		stars, _ := bits.Div64(hi, lo, peak)
		fmt.Fprintf(w, "%10d -> %-10s : %-8d |%-*s|\n", low, slotHigh(high), h[i], histogramStars, strings.Repeat("*", int(stars)))
	}
}

// slotHigh prints the open end of the last slot as "inf".
func slotHigh(high uint64) string {
	if high == math.MaxUint64 {
		return "inf"
	}
	return strconv.FormatUint(high, 10)
}

func writePerTGID(w io.Writer, t tracers.TGIDTable) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "TGID\tCALLS\tTOTAL_US\tAVG_US\tMAX_US\t")
	for _, r := range t.Processes {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t\n",
			r.TGID, r.Calls, r.Total.Microseconds(), average(r).Microseconds(), r.Max.Microseconds())
	}
	tw.Flush()
	if t.Overflow > 0 {
		fmt.Fprintf(w, "per-pid: %d calls of processes beyond the table's %d are in no row\n", t.Overflow, tracers.MaxTGIDs)
	}
}

func average(r tracers.TGIDLatency) time.Duration {
	if r.Calls == 0 {
		return 0
	}
	return r.Total / time.Duration(r.Calls)
}

// jsonPrinter writes one JSON object per line: "type" is "event" or
// "summary". An event is appended by hand (as jsonEvent would marshal,
// field for field) and handed to w in one Write, as textPrinter does.
type jsonPrinter struct {
	w    io.Writer
	line []byte
}

// jsonEvent and jsonSummary are also what the text lines print; a nil
// pointer is a value the mechanism did not observe.
type jsonEvent struct {
	Type      string  `json:"type"`
	Function  string  `json:"function"`
	Comm      string  `json:"comm"`
	CommHex   string  `json:"comm_hex,omitempty"` // the name's bytes when they are not UTF-8
	TGID      *uint32 `json:"tgid"`
	PID       uint32  `json:"pid"`
	Requested *uint64 `json:"requested"`  // bytes
	Result    *int64  `json:"result"`     // bytes read or -errno
	LatencyUS int64   `json:"latency_us"` // truncated
	LatencyNS int64   `json:"latency_ns"`
}

type jsonSummary struct {
	Type      string       `json:"type"`
	Mechanism string       `json:"mechanism"`
	Calls     *uint64      `json:"calls"`
	Slow      *uint64      `json:"slow"`
	Errors    *uint64      `json:"errors"`
	Dropped   *uint64      `json:"dropped"`
	Lost      *uint64      `json:"lost"` // calls whose per-thread state had no room or was overwritten
	Events    uint64       `json:"events"`
	Missed    *uint64      `json:"missed"`
	ElapsedS  float64      `json:"elapsed_s"`
	Histogram []jsonSlot   `json:"histogram,omitempty"`
	PerPID    *jsonPerTGID `json:"per_pid,omitempty"`
	// Functions are the counters of each traced function when there are
	// more than one (Stats.PerFunction).
	Functions []jsonFunction `json:"functions,omitempty"`
}

// jsonFunction is one traced function's counters; missed is null where the
// kernel counts misses for every function of a link at once.
type jsonFunction struct {
	Function string  `json:"function"`
	Calls    *uint64 `json:"calls"`
	Slow     *uint64 `json:"slow"`
	Errors   *uint64 `json:"errors"`
	Dropped  *uint64 `json:"dropped"`
	Lost     *uint64 `json:"lost"`
	Missed   *uint64 `json:"missed"`
}

type jsonSlot struct {
	LowUS  uint64  `json:"low_us"`
	HighUS *uint64 `json:"high_us"` // null for the open-ended last slot
	Count  uint64  `json:"count"`
}

type jsonPerTGID struct {
	Processes []jsonTGID `json:"processes"`
	Overflow  uint64     `json:"overflow"` // calls of processes beyond the table
}

type jsonTGID struct {
	TGID    uint32 `json:"tgid"`
	Calls   uint64 `json:"calls"`
	TotalUS int64  `json:"total_us"`
	MaxUS   int64  `json:"max_us"`
}

func (p *jsonPrinter) event(ev tracers.Event) error {
	u := ev.Unknown
	b := appendJSONString(append(p.line[:0], `{"type":"event","function":`...), ev.Function)
	b = appendJSONString(append(b, `,"comm":`...), ev.Comm)
	if !utf8.ValidString(ev.Comm) { // JSON strings hold no raw bytes: the name's bytes, lossless
		b = append(append(append(b, `,"comm_hex":"`...), hex.EncodeToString([]byte(ev.Comm))...), '"')
	}
	b = appendJSONUint(append(b, `,"tgid":`...), u.Has(tracers.FieldTGID), uint64(ev.TGID))
	b = strconv.AppendUint(append(b, `,"pid":`...), uint64(ev.PID), 10)
	b = appendJSONUint(append(b, `,"requested":`...), u.Has(tracers.FieldRequested), ev.Requested)
	b = append(b, `,"result":`...)
	if u.Has(tracers.FieldResult) {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, ev.Result, 10)
	}
	b = strconv.AppendInt(append(b, `,"latency_us":`...), ev.Latency.Microseconds(), 10)
	b = strconv.AppendInt(append(b, `,"latency_ns":`...), ev.Latency.Nanoseconds(), 10)
	p.line = append(b, "}\n"...)
	_, err := p.w.Write(p.line)
	return err
}

// appendJSONUint appends v, or null when the value is unknown.
func appendJSONUint(b []byte, unknown bool, v uint64) []byte {
	if unknown {
		return append(b, "null"...)
	}
	return strconv.AppendUint(b, v, 10)
}

// appendJSONString appends s as encoding/json writes it. A task name is
// nearly always printable ASCII that needs no escape, appended as is;
// anything else goes through encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || strings.IndexByte(`"\<>&`, c) >= 0 {
			quoted, _ := json.Marshal(s) // a string always marshals
			return append(b, quoted...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func (p *jsonPrinter) summary(s summary) error { return p.write(summaryJSON(s)) }

func summaryJSON(s summary) jsonSummary {
	st, u := s.Stats, s.Stats.Unknown
	js := jsonSummary{
		Type: "summary", Mechanism: s.Mechanism, Calls: known(u, tracers.FieldCalls, st.Calls),
		Slow: known(u, tracers.FieldSlow, st.Slow), Errors: known(u, tracers.FieldErrors, st.Errors),
		Dropped: known(u, tracers.FieldDropped, st.Dropped), Lost: known(u, tracers.FieldLost, st.Lost),
		Events: s.Events,
		Missed: known(u, tracers.FieldMissed, st.Missed), ElapsedS: s.Elapsed.Seconds(),
	}
	if s.Histogram != nil {
		js.Histogram = jsonHistogram(*s.Histogram)
	}
	if s.PerTGID != nil {
		js.PerPID = jsonPerPID(*s.PerTGID)
	}
	if len(st.PerFunction) > 1 {
		for _, f := range st.PerFunction {
			u := f.Unknown
			js.Functions = append(js.Functions, jsonFunction{Function: f.Function,
				Calls: known(u, tracers.FieldCalls, f.Calls), Slow: known(u, tracers.FieldSlow, f.Slow),
				Errors: known(u, tracers.FieldErrors, f.Errors), Dropped: known(u, tracers.FieldDropped, f.Dropped),
				Lost: known(u, tracers.FieldLost, f.Lost), Missed: known(u, tracers.FieldMissed, f.Missed)})
		}
	}
	return js
}

// jsonHistogram lists every slot, so that a reader needs no slot rule.
func jsonHistogram(h histogram.Log2) []jsonSlot {
	slots := make([]jsonSlot, len(h))
	for i, n := range h {
		low, high := histogram.SlotRange(i)
		slots[i] = jsonSlot{LowUS: low, Count: n}
		if high != math.MaxUint64 {
			slots[i].HighUS = &high
		}
	}
	return slots
}

func jsonPerPID(t tracers.TGIDTable) *jsonPerTGID {
	out := &jsonPerTGID{Processes: []jsonTGID{}, Overflow: t.Overflow}
	for _, r := range t.Processes {
		out.Processes = append(out.Processes, jsonTGID{TGID: r.TGID, Calls: r.Calls,
			TotalUS: r.Total.Microseconds(), MaxUS: r.Max.Microseconds()})
	}
	return out
}

func (p *jsonPrinter) write(v any) error {
	line, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = p.w.Write(append(line, '\n'))
	return err
}
