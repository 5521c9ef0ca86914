package tracers

// The BPF objects are compiled by bpf2go with clang-19 against bpf/vmlinux.h;
// `make generate` runs these. -mcpu=v3 for atomics and 32-bit jumps;
// -Wno-missing-declarations hides bpftool 7.1 misdumping a few anonymous
// members of 7.2 types, none of which these programs use.
//go:generate go tool bpf2go -cc clang-19 -target amd64 -no-global-types -go-package bpfobj -output-dir internal/bpfobj Fsession ../bpf/fsession.bpf.c -- -I../bpf -mcpu=v3 -g -O2 -Wno-missing-declarations
//go:generate go tool bpf2go -cc clang-19 -target amd64 -no-global-types -go-package bpfobj -output-dir internal/bpfobj FentryFexit ../bpf/fentry_fexit.bpf.c -- -I../bpf -mcpu=v3 -g -O2 -Wno-missing-declarations
//go:generate go tool bpf2go -cc clang-19 -target amd64 -no-global-types -go-package bpfobj -output-dir internal/bpfobj KprobeKretprobe ../bpf/kprobe_kretprobe.bpf.c -- -I../bpf -mcpu=v3 -g -O2 -Wno-missing-declarations
//go:generate go tool bpf2go -cc clang-19 -target amd64 -no-global-types -go-package bpfobj -output-dir internal/bpfobj KprobeSession ../bpf/kprobe_session.bpf.c -- -I../bpf -mcpu=v3 -g -O2 -Wno-missing-declarations
//go:generate go tool bpf2go -cc clang-19 -target amd64 -no-global-types -go-package bpfobj -output-dir internal/bpfobj KprobeSessionNoCtx ../bpf/kprobe_session.bpf.c -- -I../bpf -mcpu=v3 -g -O2 -Wno-missing-declarations -DSESSION_KFUNCS_WITHOUT_CTX
//go:generate go tool bpf2go -cc clang-19 -target amd64 -no-global-types -go-package bpfobj -output-dir internal/bpfobj FentryFexitTaskstorage ../bpf/fentry_fexit_taskstorage.bpf.c -- -I../bpf -mcpu=v3 -g -O2 -Wno-missing-declarations
//go:generate go tool bpf2go -cc clang-19 -target amd64 -no-global-types -go-package bpfobj -output-dir internal/bpfobj FsessionMulti ../bpf/fsession_multi.bpf.c -- -I../bpf -mcpu=v3 -g -O2 -Wno-missing-declarations
