package tracers

// The BPF objects are compiled by bpf2go with clang-19 against bpf/vmlinux.h;
// `make generate` runs these. -mcpu=v3 for atomics and 32-bit jumps;
// -Wno-missing-declarations hides bpftool 7.1 misdumping a few anonymous
// members of 7.2 types, none of which these programs use.
//go:generate go tool bpf2go -cc clang-19 -target amd64 -no-global-types fsession ../bpf/fsession.bpf.c -- -I../bpf -mcpu=v3 -g -O2 -Wno-missing-declarations
//go:generate go tool bpf2go -cc clang-19 -target amd64 -no-global-types fentryFexit ../bpf/fentry_fexit.bpf.c -- -I../bpf -mcpu=v3 -g -O2 -Wno-missing-declarations
//go:generate go tool bpf2go -cc clang-19 -target amd64 -no-global-types kprobeKretprobe ../bpf/kprobe_kretprobe.bpf.c -- -I../bpf -mcpu=v3 -g -O2 -Wno-missing-declarations
//go:generate go tool bpf2go -cc clang-19 -target amd64 -no-global-types kprobeSession ../bpf/kprobe_session.bpf.c -- -I../bpf -mcpu=v3 -g -O2 -Wno-missing-declarations
//go:generate go tool bpf2go -cc clang-19 -target amd64 -no-global-types kprobeSessionNoCtx ../bpf/kprobe_session.bpf.c -- -I../bpf -mcpu=v3 -g -O2 -Wno-missing-declarations -DSESSION_KFUNCS_WITHOUT_CTX
//go:generate go tool bpf2go -cc clang-19 -target amd64 -no-global-types fentryFexitTaskstorage ../bpf/fentry_fexit_taskstorage.bpf.c -- -I../bpf -mcpu=v3 -g -O2 -Wno-missing-declarations
//go:generate go tool bpf2go -cc clang-19 -target amd64 -no-global-types fsessionMulti ../bpf/fsession_multi.bpf.c -- -I../bpf -mcpu=v3 -g -O2 -Wno-missing-declarations
