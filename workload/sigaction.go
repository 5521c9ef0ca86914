//go:build !riscv64

package workload

// kernelSigaction is the kernel's struct sigaction of rt_sigaction(2) on
// the architectures with sa_restorer (__ARCH_HAS_SA_RESTORER): amd64,
// arm64, ppc64le, s390x.
type kernelSigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}
