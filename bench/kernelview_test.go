package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"tracebench/bench/report"
	"tracebench/internal/tracefs"
)

// kernelView is what the kernel shows of attached tracing at one moment.
// System-wide: the trampoline images /proc/kallsyms lists
// (bpf_trampoline_<key>, one per traced function of trampoline links),
// the ftrace records /sys/kernel/tracing/enabled_functions lists (a
// function a trampoline, fprobe or function_graph hooks; a trampoline's
// direct call is a second line), and /proc/meminfo's Slab and VmallocUsed.
// Of one process: the BPF maps, programs and links it holds by file
// descriptor, and the maps' memlock charge (fdinfo).
type kernelView struct {
	trampolines, ftraceLines int
	slabBytes, vmallocBytes  int64
	objects                  bpfObjects
}

// bpfObjects are a process's BPF objects, by "map <id>", "prog <id>" or
// "link <id>", with each map's memlock charge in bytes (0 for the others).
type bpfObjects map[string]uint64

// viewKernel reads the kernel's view, with pid's BPF objects (none for
// pid 0).
func viewKernel(pid int) (kernelView, error) {
	var v kernelView
	var err error
	if v.trampolines, err = countLines("/proc/kallsyms", isTrampoline); err != nil {
		return v, err
	}
	root, err := tracefs.Root()
	if err != nil {
		return v, err
	}
	if v.ftraceLines, err = countLines(filepath.Join(root, "enabled_functions"), func(string) bool { return true }); err != nil {
		return v, err
	}
	mem, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return v, err
	}
	if v.slabBytes, v.vmallocBytes, err = parseMeminfo(mem); err != nil {
		return v, err
	}
	if pid != 0 {
		v.objects, err = processObjects(pid)
	}
	return v, err
}

// isTrampoline: a kallsyms line of a BPF trampoline image.
func isTrampoline(line string) bool {
	f := strings.Fields(line)
	return len(f) == 4 && strings.HasPrefix(f[2], "bpf_trampoline_") && f[3] == "[bpf]"
}

// countLines counts the non-empty lines of path that keep selects.
func countLines(path string, keep func(string) bool) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		if line := sc.Text(); line != "" && keep(line) {
			n++
		}
	}
	return n, sc.Err()
}

// parseMeminfo returns Slab and VmallocUsed of /proc/meminfo, in bytes.
func parseMeminfo(raw []byte) (slab, vmalloc int64, err error) {
	found := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[2] == "kB" && (f[0] == "Slab:" || f[0] == "VmallocUsed:") {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, 0, fmt.Errorf("meminfo: %q: %w", sc.Text(), err)
			}
			found[f[0]] = kb * 1024
		}
	}
	for _, key := range []string{"Slab:", "VmallocUsed:"} {
		if _, ok := found[key]; !ok {
			return 0, 0, fmt.Errorf("meminfo has no %s line", strings.TrimSuffix(key, ":"))
		}
	}
	return found["Slab:"], found["VmallocUsed:"], sc.Err()
}

// processObjects reads pid's BPF objects from /proc/<pid>/fdinfo. A file
// descriptor closed while reading is skipped.
func processObjects(pid int) (bpfObjects, error) {
	dir := fmt.Sprintf("/proc/%d/fdinfo", pid)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	objects := bpfObjects{}
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if id, memlock, ok := parseFdinfo(bytes.NewReader(raw)); ok {
			objects[id] = memlock
		}
	}
	return objects, nil
}

// parseFdinfo reads a BPF object's fdinfo: its "map <id>", "prog <id>" or
// "link <id>" and a map's memlock; ok is false for any other file. (A
// link's fdinfo names its program's ID too.)
func parseFdinfo(r io.Reader) (id string, memlock uint64, ok bool) {
	kind := ""
	ids := map[string]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, value, _ := strings.Cut(sc.Text(), ":")
		value = strings.TrimSpace(value)
		switch key {
		case "map_type", "prog_type", "link_type":
			if kind == "" {
				kind = strings.TrimSuffix(key, "_type")
			}
		case "map_id", "prog_id", "link_id":
			ids[strings.TrimSuffix(key, "_id")] = value
		case "memlock":
			memlock, _ = strconv.ParseUint(value, 10, 64)
		}
	}
	if kind == "" || ids[kind] == "" {
		return "", 0, false
	}
	if kind != "map" {
		memlock = 0
	}
	return kind + " " + ids[kind], memlock, true
}

// reportAttached reports what the kernel shows more of in attached than
// in before: the process's new BPF objects (maps, programs, links,
// map-bytes: their memlock), exact; and the system-wide changes, exact
// counts for trampolines and ftrace records, coarse for memory (pages,
// and whatever else the system did meanwhile).
func reportAttached(b *testing.B, before, attached kernelView) {
	var maps, programs, links, mapBytes uint64
	for id, memlock := range attached.objects {
		if _, old := before.objects[id]; old {
			continue
		}
		kind, _, _ := strings.Cut(id, " ")
		switch kind {
		case "map":
			maps++
			mapBytes += memlock
		case "prog":
			programs++
		case "link":
			links++
		}
	}
	for unit, v := range map[string]float64{"maps": float64(maps), "programs": float64(programs), "links": float64(links),
		"map-bytes":                          float64(mapBytes),
		"trampolines" + report.DeltaSuffix:   float64(attached.trampolines - before.trampolines),
		"ftrace-lines" + report.DeltaSuffix:  float64(attached.ftraceLines - before.ftraceLines),
		"slab-bytes" + report.DeltaSuffix:    float64(attached.slabBytes - before.slabBytes),
		"vmalloc-bytes" + report.DeltaSuffix: float64(attached.vmallocBytes - before.vmallocBytes),
	} {
		b.ReportMetric(v, unit)
	}
}

func TestParseMeminfo(t *testing.T) {
	slab, vmalloc, err := parseMeminfo([]byte("MemTotal:        2014716 kB\nSlab:              61240 kB\n" +
		"SReclaimable:      20356 kB\nVmallocUsed:       12544 kB\nHugePages_Total:       0\n"))
	if err != nil || slab != 61240*1024 || vmalloc != 12544*1024 {
		t.Errorf("parseMeminfo = %d, %d, %v", slab, vmalloc, err)
	}
	if _, _, err := parseMeminfo([]byte("Slab: 1 kB\n")); err == nil || !strings.Contains(err.Error(), "no VmallocUsed") {
		t.Errorf("meminfo without VmallocUsed: %v", err)
	}
	if _, _, err := parseMeminfo([]byte("Slab: x kB\nVmallocUsed: 1 kB\n")); err == nil {
		t.Error("a Slab of x kB parsed")
	}
}

func TestParseFdinfo(t *testing.T) {
	for raw, want := range map[string]struct {
		id      string
		memlock uint64
		ok      bool
	}{
		"pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\nmap_type:\t27\nkey_size:\t0\nvalue_size:\t0\n" +
			"max_entries:\t262144\nmap_flags:\t0x0\nmap_extra:\t0x0\nmemlock:\t270616\nmap_id:\t12\nfrozen:\t0\n": {"map 12", 270616, true},
		"pos:\t0\nflags:\t02000002\nprog_type:\t26\nprog_jited:\t1\nprog_tag:\tab\nmemlock:\t4096\nprog_id:\t40\n": {"prog 40", 0, true},
		"pos:\t0\nflags:\t02000000\nlink_type:\ttracing_multi\nlink_id:\t7\nprog_tag:\tab\nprog_id:\t40\n":         {"link 7", 0, true},
		"pos:\t0\nflags:\t02000000\nmap_type:\t2\n":                                                                {"", 0, false},
		"pos:\t0\nflags:\t0100002\nmnt_id:\t24\nino:\t3\n":                                                         {"", 0, false},
	} {
		id, memlock, ok := parseFdinfo(strings.NewReader(raw))
		if id != want.id || memlock != want.memlock || ok != want.ok {
			t.Errorf("parseFdinfo(%q) = %q, %d, %v; want %+v", raw, id, memlock, ok, want)
		}
	}
}

func TestIsTrampoline(t *testing.T) {
	for line, want := range map[string]bool{
		"ffffffffc0201000 t bpf_trampoline_6442512345\t[bpf]":          true,
		"ffffffff8a2b3c40 T bpf_trampoline_link_prog":                  false, // the kernel's own function
		"ffffffffc0203000 t bpf_prog_6deef7357e7b4530_vfs_read\t[bpf]": false,
		"": false,
	} {
		if got := isTrampoline(line); got != want {
			t.Errorf("isTrampoline(%q) = %v", line, got)
		}
	}
}
