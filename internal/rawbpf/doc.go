// Package rawbpf issues the bpf(2) calls cilium/ebpf v0.22.0 lacks:
// loading fsession programs (it resolves no attach_btf_id for
// BPF_TRACE_FSESSION, see its prog.go findProgramTargetInKernel), loading
// trampoline programs on functions its BTF lookup cannot find (see
// kernelbtf.Function), and the tracing_multi program types and link
// (kernel 7.2: BPF_TRACE_{FENTRY,FEXIT,FSESSION}_MULTI and
// BPF_LINK_TYPE_TRACING_MULTI, for which its link/ package has no
// attach function). Maps, instructions, kernel BTF and the returned
// program and link objects stay with cilium/ebpf.
// Delete this directory once a cilium/ebpf release loads and links these.
package rawbpf
