package report

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoLoadingCode: the report runs on any host, so it reads the suite's
// names (bench/suite) and never imports cilium/ebpf's loading code.
func TestNoLoadingCode(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/cilium/ebpf") {
			t.Errorf("bench/report imports %s", pkg)
		}
	}
}
