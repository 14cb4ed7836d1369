//go:build amd64 && !noasm

package cpu

import "golang.org/x/sys/cpu"

func init() {
	caches = readCaches()
	k32, k64 := supportedKernels()
	kernel32, kernel64 = k32[0], k64[0]
}

// supportedKernels lists the micro-kernels this CPU can run, fastest
// first. The assembly ones come from gemm_amd64.s (see
// internal/asmgen/gemm). AVX-512 comes first where the OS enables it:
// twice the registers hold a 12×32 (float32) or 12×16 (float64) tile,
// which loads fewer bytes per FMA than AVX2's 6×16 or 6×8. The AVX-512
// kernels also have assembly panel packers (AVX-512 instructions too);
// the AVX2 ones, whose 6 rows the 4×4 transposes do not divide, pack in
// Go.
func supportedKernels() ([]microKernel[float32], []microKernel[float64]) {
	var k32 []microKernel[float32]
	var k64 []microKernel[float64]
	if cpu.X86.HasAVX512F {
		k32 = append(k32, microKernel[float32]{name: "avx512", mr: 12, nr: 32, fn: kernelF32AVX512,
			packA: panelPackers[float32]{packCopyF32x12, packTransF32x12},
			packB: panelPackers[float32]{packCopyF32x32, packTransF32x32},
			short: []shortKernel[float32]{{4, kernelF32AVX512r4}, {8, kernelF32AVX512r8}}})
		k64 = append(k64, microKernel[float64]{name: "avx512", mr: 12, nr: 16, fn: kernelF64AVX512,
			packA: panelPackers[float64]{packCopyF64x12, packTransF64x12},
			packB: panelPackers[float64]{packCopyF64x16, packTransF64x16},
			short: []shortKernel[float64]{{4, kernelF64AVX512r4}, {8, kernelF64AVX512r8}}})
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		k32 = append(k32, microKernel[float32]{name: "avx2", mr: 6, nr: 16, fn: kernelF32AVX2})
		k64 = append(k64, microKernel[float64]{name: "avx2", mr: 6, nr: 8, fn: kernelF64AVX2})
	}
	return append(k32, goKernel[float32]()), append(k64, goKernel[float64]())
}

// readCaches reads the data cache sizes from CPUID's cache descriptors:
// leaf 0x8000001D on AMD (and Hygon), leaf 4 elsewhere; both describe a
// cache per subleaf in the same format. Sizes it cannot read keep their
// defaults.
func readCaches() cacheSizes {
	c := defaultCaches
	maxLeaf, b, cx, d := cpuid(0, 0)
	vendor := string(le32(b)) + string(le32(d)) + string(le32(cx))
	leaf := uint32(4)
	if vendor == "AuthenticAMD" || vendor == "HygonGenuine" {
		if maxExt, _, _, _ := cpuid(0x80000000, 0); maxExt < 0x8000001d {
			return c
		}
		leaf = 0x8000001d
	} else if maxLeaf < 4 {
		return c
	}
	for sub := uint32(0); sub < 16; sub++ {
		a, b, cx, _ := cpuid(leaf, sub)
		typ := a & 0x1f
		if typ == 0 {
			break
		}
		if typ != 1 && typ != 3 { // data or unified, not instruction
			continue
		}
		ways := int(b>>22&0x3ff) + 1
		parts := int(b>>12&0x3ff) + 1
		line := int(b&0xfff) + 1
		sets := int(cx) + 1
		size := ways * parts * line * sets
		switch a >> 5 & 7 {
		case 1:
			c.l1 = size
		case 2:
			c.l2 = size
		case 3:
			c.l3 = size
		}
	}
	return c
}

func le32(v uint32) []byte { return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)} }
