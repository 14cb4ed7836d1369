//go:build amd64 && !noasm

package cpu

// chainKernel runs the chain kernel, storing around the caches with nt.
// It calls the assembly directly, not through a func value, so that the
// arrays on Run's stack that it reads stay there (go:noescape).
func chainKernel(nt bool, dst []float32, srcs []*float32, code []uint32, scalars, scratch []float32) {
	if nt {
		chainAVX512NT(dst, srcs, code, scalars, scratch)
	} else {
		chainAVX512(dst, srcs, code, scalars, scratch)
	}
}
