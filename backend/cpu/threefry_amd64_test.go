//go:build amd64 && !noasm

package cpu

import "golang.org/x/sys/cpu"

type threefryKernel struct {
	name  string
	lanes int
	fn    func(key *[2]uint32, p, q uint32, y0, y1 *uint32, n int)
}

func threefryKernelsForTest() []threefryKernel {
	var ks []threefryKernel
	if cpu.X86.HasAVX2 {
		ks = append(ks, threefryKernel{"avx2", 8, threefryAVX2})
	}
	if cpu.X86.HasAVX512F {
		ks = append(ks, threefryKernel{"avx512", 16, threefryAVX512})
	}
	return ks
}
