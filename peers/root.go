// Package peers runs the tracing tools operators use today (libbpf-tools
// funclatency, bpftrace, perf ftrace latency) next to tracebench, to compare
// their counts, histograms and overhead on the same vfs_read calls.
//
// The tools come from a Debian root built by vm/peer-root.sh; a peer runs
// there under chroot, in a private mount namespace of its own that holds
// the kernel filesystems the tools need (proc, sysfs, tracefs, debugfs,
// bpf, devtmpfs). The namespace, and with it every mount, ends with the
// peer's process, however it ends. No tool's code is used: each peer is
// driven through its command line and its printed output is parsed.
package peers

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// RootEnv names the environment variable that holds the peer root's
// directory, e.g. set by cmd/bench (bench run) from vm/peer-root.sh.
const RootEnv = "TRACEBENCH_PEER_ROOT"

// versionsFile is written by vm/peer-root.sh last: "package version" lines.
const versionsFile = "tracebench-peers.versions"

// ErrNoRoot is wrapped by RootFromEnv's error when no usable root is given.
var ErrNoRoot = errors.New("no peer root")

// Root is a directory holding the peer tools.
type Root struct {
	Dir string
	// Versions maps each Debian package of the tools to its version, as
	// recorded when the root was built.
	Versions map[string]string
}

// RootFromEnv opens the root named by RootEnv. Its error wraps ErrNoRoot
// and says why (unset, missing, incomplete).
func RootFromEnv() (*Root, error) {
	dir := os.Getenv(RootEnv)
	if dir == "" {
		return nil, fmt.Errorf("%w: %s is not set (vm/peer-root.sh builds one and prints its directory)", ErrNoRoot, RootEnv)
	}
	return OpenRoot(dir)
}

// OpenRoot opens the peer root at dir and reads its recorded versions.
func OpenRoot(dir string) (*Root, error) {
	raw, err := os.ReadFile(filepath.Join(dir, versionsFile))
	if err != nil {
		return nil, fmt.Errorf("%w: %s=%q is not a complete peer root (vm/peer-root.sh writes %s last): %v",
			ErrNoRoot, RootEnv, dir, versionsFile, err)
	}
	r := &Root{Dir: dir, Versions: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		pkg, version, ok := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		if !ok {
			return nil, fmt.Errorf("%s: bad line %q, want \"package version\"", filepath.Join(dir, versionsFile), sc.Text())
		}
		r.Versions[pkg] = version
	}
	return r, nil
}

// VersionLines returns "tracebench-peer-<package>: <version>" lines, sorted,
// in Go's benchmark configuration format, so that a report quotes them.
func (r *Root) VersionLines() []string {
	var lines []string
	for pkg, v := range r.Versions {
		lines = append(lines, fmt.Sprintf("tracebench-peer-%s: %s", pkg, v))
	}
	slices.Sort(lines)
	return lines
}
