//go:build !amd64 || noasm

package cpu

// chainKernel is never called here: without the kernel newChain returns
// nil.
func chainKernel(nt bool, dst []float32, srcs []*float32, code []uint32, scalars, scratch []float32) {
	panic("cpu: no chain kernel")
}
