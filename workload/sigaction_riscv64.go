package workload

// kernelSigaction is the kernel's struct sigaction of rt_sigaction(2) on
// riscv64, which has no sa_restorer.
type kernelSigaction struct {
	handler uintptr
	flags   uint64
	mask    uint64
}
