//go:build !amd64 || noasm

package cpu

// Without assembly the blocked driver runs the pure-Go micro-kernel, with
// default cache sizes.
func init() {
	caches = defaultCaches
	k32, k64 := supportedKernels()
	kernel32, kernel64 = k32[0], k64[0]
}

// supportedKernels lists the micro-kernels this build can run: the
// portable one.
func supportedKernels() ([]microKernel[float32], []microKernel[float64]) {
	return []microKernel[float32]{goKernel[float32]()}, []microKernel[float64]{goKernel[float64]()}
}
