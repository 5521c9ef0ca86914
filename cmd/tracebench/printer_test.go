package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tracebench/histogram"
	"tracebench/tracers"
)

// oddComms are task names that need quoting or escaping somewhere.
var oddComms = []string{"", "cat", "my reader", "a=b", `q"uote`, "tab\there", "nl\n", "back\\slash", "<html>&",
	"caf\u00e9", "\x7f", "bad\xffutf8", "emoji\U0001F600", "\u2028"}

// referenceJSON is what encoding/json makes of ev: the event line's format
// before it was appended by hand, which it must keep byte for byte.
func referenceJSON(t *testing.T, ev tracers.Event) string {
	u := ev.Unknown
	line, err := json.Marshal(jsonEvent{
		Type: "event", Function: ev.Function, Comm: ev.Comm, CommHex: commHex(ev.Comm), TGID: known(u, tracers.FieldTGID, ev.TGID), PID: ev.PID,
		Requested: known(u, tracers.FieldRequested, ev.Requested), Result: known(u, tracers.FieldResult, ev.Result),
		LatencyUS: ev.Latency.Microseconds(), LatencyNS: ev.Latency.Nanoseconds(),
	})
	require.NoError(t, err)
	return string(line) + "\n"
}

func commHex(comm string) string {
	if utf8.ValidString(comm) {
		return ""
	}
	return hex.EncodeToString([]byte(comm))
}

// Names that differ only in bytes that are not UTF-8 stay apart: in text
// (\xNN), and in JSON through comm_hex; Unicode line breaks are escaped.
func TestCommsStayDistinct(t *testing.T) {
	a, b := "x\xff", "x\xfe"
	assert.NotEqual(t, commField(a), commField(b))
	for _, comm := range []string{"a\u0085b", "a\u2028b", "caf\u00e9"} {
		assert.Regexp(t, `^"[ -~]+"$`, commField(comm), "%q: quoted, ASCII only", comm)
	}
	var ja, jb bytes.Buffer
	require.NoError(t, newPrinter(true, &ja).event(tracers.Event{Comm: a}))
	require.NoError(t, newPrinter(true, &jb).event(tracers.Event{Comm: b}))
	assert.Contains(t, ja.String(), `"comm_hex":"78ff"`)
	assert.Contains(t, jb.String(), `"comm_hex":"78fe"`)
}

// A histogram's bars scale to the largest count even where count x 40
// does not fit in 64 bits.
func TestHistogramHugeCounts(t *testing.T) {
	var h histogram.Log2
	h[0], h[1] = 1<<62, 1<<62-1
	var out bytes.Buffer
	writeHistogram(&out, h)
	lines := strings.Split(out.String(), "\n")
	assert.Contains(t, lines[1], "|"+strings.Repeat("*", histogramStars)+"|", "the peak slot has every star")
	assert.Contains(t, lines[2], "|"+strings.Repeat("*", histogramStars-1)+" |")
}

// referenceText is the event line as fmt printed it before.
func referenceText(ev tracers.Event) string {
	u := ev.Unknown
	return fmt.Sprintf("EVENT function=%s comm=%s tgid=%s pid=%d requested=%s result=%s latency_us=%d\n",
		functionField(ev.Function), commField(ev.Comm), textValue(known(u, tracers.FieldTGID, ev.TGID)), ev.PID,
		textValue(known(u, tracers.FieldRequested, ev.Requested)), textValue(known(u, tracers.FieldResult, ev.Result)),
		ev.Latency.Microseconds())
}

func TestEventLinesAsBefore(t *testing.T) {
	events := []tracers.Event{slowEvent, errEvent, blindEvent, noTGIDEvent,
		{PID: 1<<32 - 1, TGID: 1<<32 - 1, Requested: 1<<64 - 1, Result: -1 << 63, Latency: 1<<63 - 1},
		{Result: 1<<63 - 1, Latency: 999}}
	for _, comm := range oddComms {
		ev := slowEvent
		ev.Comm = comm
		events = append(events, ev)
	}
	for _, ev := range events {
		var text, js bytes.Buffer
		require.NoError(t, newPrinter(false, &text).event(ev))
		require.NoError(t, newPrinter(true, &js).event(ev))
		assert.Equal(t, referenceText(ev), text.String(), "%+v", ev)
		assert.Equal(t, referenceJSON(t, ev), js.String(), "%+v", ev)
	}
}

// BenchmarkPrinter measures the consumer side's formatting: events/s the
// printers sustain into a buffered output (io.Discard, or a pipe that a
// goroutine drains, as a shell pipeline would).
func BenchmarkPrinter(b *testing.B) {
	for _, format := range []string{"text", "json"} {
		for _, to := range []string{"discard", "pipe"} {
			b.Run(format+"/"+to, func(b *testing.B) {
				w := benchOutput(b, to)
				out := newOutput(w)
				p := newPrinter(format == "json", out)
				ev := slowEvent
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					ev.Latency = time.Duration(i)
					if err := p.event(ev); err != nil {
						b.Fatal(err)
					}
				}
				if err := out.Flush(); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
			})
		}
	}
}

// benchOutput returns io.Discard, or the write end of a pipe whose read
// end a goroutine drains until the benchmark ends.
func benchOutput(b *testing.B, to string) io.Writer {
	if to == "discard" {
		return io.Discard
	}
	r, w, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	go io.Copy(io.Discard, bufio.NewReader(r))
	b.Cleanup(func() { w.Close(); r.Close() })
	return w
}

// BenchmarkDecodeRecord measures what tracers' ReadEvent spends per event
// before the printer: decoding the 48-byte ring buffer record (struct
// event of bpf/vfsread.h) with encoding/binary into a struct, as
// tracers.decodeEvent does, against reading it field by field. In the TCG
// guest the first costs about as much as a traced read (see the README).
func BenchmarkDecodeRecord(b *testing.B) {
	type rawEvent struct {
		PID, TGID uint32
		Requested uint64
		Result    int64
		LatencyNS uint64
		Comm      [16]byte
	}
	record := make([]byte, 48)
	copy(record[32:], "tracebench.test")
	comm := func(c []byte) string { s, _, _ := bytes.Cut(c, []byte{0}); return string(s) }
	decoders := map[string]func() (rawEvent, string){
		"encoding-binary": func() (rawEvent, string) {
			var raw rawEvent
			if _, err := binary.Decode(record, binary.NativeEndian, &raw); err != nil {
				b.Fatal(err)
			}
			return raw, comm(raw.Comm[:])
		},
		"field-by-field": func() (rawEvent, string) {
			ne := binary.NativeEndian
			return rawEvent{PID: ne.Uint32(record), TGID: ne.Uint32(record[4:]), Requested: ne.Uint64(record[8:]),
				Result: int64(ne.Uint64(record[16:])), LatencyNS: ne.Uint64(record[24:])}, comm(record[32:48])
		},
	}
	for name, decode := range decoders {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				decode()
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
