// Command gemm generates backend/cpu/gemm_amd64.s and its Go stubs: the
// GEMM micro-kernels and a CPUID helper. Run it through go generate in
// backend/cpu.
//
// A micro-kernel computes an MR×NR tile of C = Ã·B̃ over k steps, where Ã
// is a packed micro-panel holding MR elements of A per step and B̃ one
// holding NR elements of B per step. The tile lives in registers: NR is
// NV vector registers wide, and each step broadcasts MR elements of Ã and
// issues MR·NV fused multiply-adds. The tile is then stored to C (row
// stride ldc elements) or, when acc is set, added to it.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// kernel describes one micro-kernel.
type kernel struct {
	name   string
	double bool // float64 elements, else float32
	zmm    bool // AVX-512 (32 registers of 64 bytes), else AVX2+FMA
	mr, nv int
	// bcast folds the broadcast of Ã into the FMA's memory operand
	// (AVX-512 embedded broadcast) instead of a separate broadcast into a
	// register: half the instructions, the same loads.
	bcast bool
}

// unroll is how many k steps one loop iteration takes.
const unroll = 4

func (kc kernel) elemSize() int {
	if kc.double {
		return 8
	}
	return 4
}

func (kc kernel) vecSize() int {
	if kc.zmm {
		return 64
	}
	return 32
}

func (kc kernel) nr() int { return kc.nv * kc.vecSize() / kc.elemSize() }

func (kc kernel) vec(i int) VecPhysical {
	if kc.zmm {
		return []VecPhysical{Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15,
			Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23, Z24, Z25, Z26, Z27, Z28, Z29, Z30, Z31}[i]
	}
	return []VecPhysical{Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15}[i]
}

func (kc kernel) gen() {
	es, vs, nr := kc.elemSize(), kc.vecSize(), kc.nr()
	typ, fma, bcastFMA, bcast, add := "float32", VFMADD231PS, VFMADD231PS_BCST, VBROADCASTSS, VADDPS
	if kc.double {
		typ, fma, bcastFMA, bcast, add = "float64", VFMADD231PD, VFMADD231PD_BCST, VBROADCASTSD, VADDPD
	}
	nregs := 16
	if kc.zmm {
		nregs = 32
	}
	// Registers: accumulators first, then one per B̃ vector, then the
	// broadcast temporaries (two, so consecutive rows can overlap).
	acc := func(i, v int) VecPhysical { return kc.vec(i*kc.nv + v) }
	bv := func(v int) VecPhysical { return kc.vec(kc.mr*kc.nv + v) }
	tmp := func(i int) VecPhysical { return kc.vec(kc.mr*kc.nv + kc.nv + i%2) }
	if need := kc.mr*kc.nv + kc.nv + 2; need > nregs && !kc.bcast {
		panic(fmt.Sprintf("%s needs %d vector registers", kc.name, need))
	}

	TEXT(kc.name, NOSPLIT, fmt.Sprintf("func(k int, a, b, c *%s, ldc int, acc bool)", typ))
	Pragma("noescape")
	Doc(fmt.Sprintf("%s computes the %d×%d tile c = a·b (or c += a·b when acc is set) over k packed steps.", kc.name, kc.mr, nr))
	k := Load(Param("k"), GP64())
	a := Load(Param("a"), GP64())
	b := Load(Param("b"), GP64())
	c := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	SHLQ(U8(log2(es)), ldc)
	ldc3 := GP64()
	LEAQ(Mem{Base: ldc, Index: ldc, Scale: 2}, ldc3)

	// rows calls f with the address of each row of the C tile, four rows
	// per base register step.
	rows := func(f func(i int, row Mem)) {
		p := GP64()
		MOVQ(c, p)
		for i := 0; i < kc.mr; i++ {
			if i > 0 && i%4 == 0 {
				LEAQ(Mem{Base: p, Index: ldc, Scale: 4}, p)
			}
			var m Mem
			switch i % 4 {
			case 0:
				m = Mem{Base: p}
			case 1:
				m = Mem{Base: p, Index: ldc, Scale: 1}
			case 2:
				m = Mem{Base: p, Index: ldc, Scale: 2}
			case 3:
				m = Mem{Base: p, Index: ldc3, Scale: 1}
			}
			f(i, m)
		}
	}

	Comment("Fetch the C tile while the products are computed.")
	rows(func(_ int, row Mem) {
		PREFETCHT0(row)
		PREFETCHT0(row.Offset(nr*es - 1))
	})

	for i := 0; i < kc.mr; i++ {
		for v := 0; v < kc.nv; v++ {
			r := acc(i, v)
			if kc.zmm {
				VPXORD(r, r, r)
			} else {
				VXORPS(r, r, r)
			}
		}
	}

	step := func(u int) {
		for v := 0; v < kc.nv; v++ {
			VMOVUPS(Mem{Base: b, Disp: (u*nr)*es + v*vs}, bv(v))
		}
		for i := 0; i < kc.mr; i++ {
			am := Mem{Base: a, Disp: (u*kc.mr + i) * es}
			if kc.bcast {
				for v := 0; v < kc.nv; v++ {
					bcastFMA(am, bv(v), acc(i, v))
				}
				continue
			}
			t := tmp(i)
			bcast(am, t)
			for v := 0; v < kc.nv; v++ {
				fma(bv(v), t, acc(i, v))
			}
		}
	}

	Comment(fmt.Sprintf("Main loop: %d steps at a time.", unroll))
	CMPQ(k, U8(unroll))
	JL(LabelRef(kc.name + "_tail"))
	Label(kc.name + "_loop")
	for u := 0; u < unroll; u++ {
		step(u)
	}
	ADDQ(U32(unroll*kc.mr*es), a)
	ADDQ(U32(unroll*nr*es), b)
	SUBQ(U8(unroll), k)
	CMPQ(k, U8(unroll))
	JGE(LabelRef(kc.name + "_loop"))

	Label(kc.name + "_tail")
	TESTQ(k, k)
	JE(LabelRef(kc.name + "_store"))
	Label(kc.name + "_tailloop")
	step(0)
	ADDQ(U32(kc.mr*es), a)
	ADDQ(U32(nr*es), b)
	DECQ(k)
	JNZ(LabelRef(kc.name + "_tailloop"))

	Label(kc.name + "_store")
	accFlag := Load(Param("acc"), GP8())
	TESTB(accFlag, accFlag)
	JNE(LabelRef(kc.name + "_add"))
	rows(func(i int, row Mem) {
		for v := 0; v < kc.nv; v++ {
			VMOVUPS(acc(i, v), row.Offset(v*vs))
		}
	})
	VZEROUPPER()
	RET()

	Label(kc.name + "_add")
	rows(func(i int, row Mem) {
		for v := 0; v < kc.nv; v++ {
			add(row.Offset(v*vs), acc(i, v), acc(i, v))
			VMOVUPS(acc(i, v), row.Offset(v*vs))
		}
	})
	VZEROUPPER()
	RET()
}

func log2(n int) int {
	l := 0
	for n > 1 {
		n >>= 1
		l++
	}
	return l
}

func cpuid() {
	TEXT("cpuid", NOSPLIT, "func(leaf, sub uint32) (a, b, c, d uint32)")
	Doc("cpuid executes CPUID for leaf and subleaf sub.")
	Load(Param("leaf"), EAX)
	Load(Param("sub"), ECX)
	CPUID()
	Store(EAX, Return("a"))
	Store(EBX, Return("b"))
	Store(ECX, Return("c"))
	Store(EDX, Return("d"))
	RET()
}

func main() {
	ConstraintExpr("amd64,!noasm")
	// The register blocks fill the register file: AVX2 has 16 vector
	// registers, so 6 rows × 2 vectors of accumulators, 2 for B̃ and 2
	// broadcast temporaries; AVX-512 has 32, so 12 rows × 2 vectors = 24
	// accumulators and 2 for B̃, with Ã broadcast straight from memory.
	// Both keep NR a whole number of 128-byte rows of B̃, and a tall MR
	// maximises the flops per byte loaded, MR·NR/(MR+NR).
	for _, kc := range []kernel{
		{name: "kernelF32AVX2", mr: 6, nv: 2},
		{name: "kernelF64AVX2", double: true, mr: 6, nv: 2},
		{name: "kernelF32AVX512", zmm: true, mr: 12, nv: 2, bcast: true},
		{name: "kernelF64AVX512", double: true, zmm: true, mr: 12, nv: 2, bcast: true},
	} {
		kc.gen()
	}
	cpuid()
	Generate()
}
