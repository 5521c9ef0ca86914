package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestEveryArchBuilds builds and vets the whole module, tests included,
// for every architecture in Arches: one whose BPF objects were not
// generated fails here, on any host.
func TestEveryArchBuilds(t *testing.T) {
	root := moduleRoot(t)
	for _, arch := range Arches {
		for _, verb := range []string{"build", "vet"} {
			t.Run(arch+"/"+verb, func(t *testing.T) {
				cmd := exec.Command("go", verb, "./...")
				cmd.Dir = root
				cmd.Env = append(os.Environ(), "GOARCH="+arch, "CGO_ENABLED=0")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("GOARCH=%s go %s ./...: %v\n%s", arch, verb, err, out)
				}
			})
		}
	}
}

// moduleRoot is the directory of the module's go.mod.
func moduleRoot(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

func TestBpf2goArgs(t *testing.T) {
	target := strings.Join(Arches, ",")
	assert.Equal(t, strings.Fields("tool bpf2go -cc clang-19 -target "+target+" -no-global-types "+
		"-go-package bpfobj -output-dir internal/bpfobj KprobeSessionNoCtx ../bpf/kprobe_session.bpf.c -- "+
		"-I../bpf -mcpu=v3 -g -O2 -Wno-missing-declarations -DSESSION_KFUNCS_WITHOUT_CTX"),
		bpf2goArgs("internal/bpfobj", "KprobeSessionNoCtx", "../bpf/kprobe_session.bpf.c", []string{"-DSESSION_KFUNCS_WITHOUT_CTX"}))
	assert.Equal(t, strings.Fields("tool bpf2go -cc clang-19 -target "+target+" -no-global-types "+
		"Floors ../../bpf/floors.bpf.c -- -I../../bpf -mcpu=v3 -g -O2 -Wno-missing-declarations"),
		bpf2goArgs("", "Floors", "../../bpf/floors.bpf.c", nil))
}
