// Command gemm generates backend/cpu/gemm_amd64.s and its Go stubs: the
// GEMM micro-kernels, the panel packers of the AVX-512 ones and a CPUID
// helper. Run it through go generate in backend/cpu.
//
// A micro-kernel computes an MR×NR tile of C = Ã·B̃ over k steps, where Ã
// is a packed micro-panel holding MR elements of A per step and B̃ one
// holding NR elements of B per step. The tile lives in registers: NR is
// NV vector registers wide, and each step broadcasts MR elements of Ã and
// issues MR·NV fused multiply-adds. The tile is then stored to C (row
// stride ldc elements) or, when acc is set, added to it.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"

	"github.com/fathom-go/fathom/backend/cpu/internal/asmgen"
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
	// prefetchA is how far ahead (bytes) each step prefetches Ã, 0 for
	// not at all. The driver streams a micro-panel of Ã from L3 on its
	// first use; the hardware prefetcher alone left the FMAs waiting on
	// it in large products (docs/performance.md).
	prefetchA int
	// astep is how many elements of Ã a step takes, when it differs
	// from mr: a short kernel computes the first mr rows of a panel
	// packed astep rows tall.
	astep int
}

// aStep is the number of Ã elements a step advances by.
func (kc kernel) aStep() int {
	if kc.astep > 0 {
		return kc.astep
	}
	return kc.mr
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
	doc := fmt.Sprintf("%s computes the %d×%d tile c = a·b (or c += a·b when acc is set) over k packed steps", kc.name, kc.mr, nr)
	if kc.astep > 0 {
		doc += fmt.Sprintf(", from the first %d rows of a panel of Ã packed %d rows tall", kc.mr, kc.astep)
	}
	Doc(doc + ".")
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
			f(i, quadRow(p, ldc, ldc3, i%4))
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
		if kc.prefetchA > 0 {
			// Prefetches 64 bytes apart reach every line of the step's Ã.
			for o := u * kc.aStep() * es; o < (u+1)*kc.aStep()*es; o += 64 {
				PREFETCHT0(Mem{Base: a, Disp: kc.prefetchA + o})
			}
		}
		for i := 0; i < kc.mr; i++ {
			am := Mem{Base: a, Disp: (u*kc.aStep() + i) * es}
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
	ADDQ(U32(unroll*kc.aStep()*es), a)
	ADDQ(U32(unroll*nr*es), b)
	SUBQ(U8(unroll), k)
	CMPQ(k, U8(unroll))
	JGE(LabelRef(kc.name + "_loop"))

	Label(kc.name + "_tail")
	TESTQ(k, k)
	JE(LabelRef(kc.name + "_store"))
	Label(kc.name + "_tailloop")
	step(0)
	ADDQ(U32(kc.aStep()*es), a)
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

// packer generates the packing routines for panels p elements wide (an
// MR or NR of the AVX-512 kernels). They pack whole panels read through
// positive strides; partial panels and other strides are packed in Go.
type packer struct {
	double bool
	p      int
}

func (pk packer) elemSize() int {
	if pk.double {
		return 8
	}
	return 4
}

func (pk packer) names() (typ, suffix string) {
	if pk.double {
		return "float64", fmt.Sprintf("F64x%d", pk.p)
	}
	return "float32", fmt.Sprintf("F32x%d", pk.p)
}

func zmm(i int) VecPhysical {
	return []VecPhysical{Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15}[i]
}

// genCopy generates packCopy, for operands whose p elements of a step are
// contiguous: dst[kk·p + j] = src[kk·ld + j] for j < p and kk < kc.
func (pk packer) genCopy() {
	es := pk.elemSize()
	typ, suffix := pk.names()
	name := "packCopy" + suffix
	TEXT(name, NOSPLIT, fmt.Sprintf("func(dst, src *%s, ld, kc int)", typ))
	Pragma("noescape")
	Doc(fmt.Sprintf("%s packs kc steps of %d contiguous elements, ld elements apart in src, one after another into dst.", name, pk.p))
	dst := Load(Param("dst"), GP64())
	src := Load(Param("src"), GP64())
	ld := Load(Param("ld"), GP64())
	kc := Load(Param("kc"), GP64())
	SHLQ(U8(log2(es)), ld)
	row := pk.p * es
	// A step moves in the widest vectors that fit.
	type chunk struct{ off, size int }
	var chunks []chunk
	for off := 0; off < row; {
		size := 64
		for size > row-off {
			size /= 2
		}
		if size < 16 {
			panic(fmt.Sprintf("%s: a step of %d bytes is not a whole number of 16-byte vectors", name, row))
		}
		chunks = append(chunks, chunk{off, size})
		off += size
	}
	reg := func(size, i int) Register {
		switch size {
		case 64:
			return zmm(i)
		case 32:
			return zmm(i).AsY()
		}
		return zmm(i).AsX()
	}
	// step moves one step, from src (plus ld when second is set) to dst
	// at step u.
	step := func(u int, second bool) {
		from := Mem{Base: src}
		if second {
			from = Mem{Base: src, Index: ld, Scale: 1}
		}
		for i, ch := range chunks {
			VMOVUPS(from.Offset(ch.off), reg(ch.size, u*len(chunks)+i))
		}
		for i, ch := range chunks {
			VMOVUPS(reg(ch.size, u*len(chunks)+i), Mem{Base: dst, Disp: u*row + ch.off})
		}
	}
	CMPQ(kc, U8(2))
	JL(LabelRef(name + "_one"))
	Label(name + "_two")
	step(0, false)
	step(1, true)
	LEAQ(Mem{Base: src, Index: ld, Scale: 2}, src)
	ADDQ(U32(2*row), dst)
	SUBQ(U8(2), kc)
	CMPQ(kc, U8(2))
	JGE(LabelRef(name + "_two"))
	Label(name + "_one")
	TESTQ(kc, kc)
	JE(LabelRef(name + "_done"))
	step(0, false)
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// genTrans generates packTrans, for operands whose p rows are each
// contiguous along the steps: dst[kk·p + i] = src[i·ld + kk] for i < p
// (a multiple of 4) and kk < kc. Each group of four rows is transposed in
// 4×4 blocks: float32 sixteen steps at a time, one block in each 128-bit
// lane of a ZMM register, then four at a time in XMM registers; float64
// four steps at a time in YMM registers. The last steps go one element at
// a time.
func (pk packer) genTrans() {
	es := pk.elemSize()
	typ, suffix := pk.names()
	name := "packTrans" + suffix
	if pk.p%4 != 0 {
		panic(name + ": panel width not a multiple of 4")
	}
	TEXT(name, NOSPLIT, fmt.Sprintf("func(dst, src *%s, ld, kc int)", typ))
	Pragma("noescape")
	Doc(fmt.Sprintf("%s packs kc steps of %d rows, each contiguous and ld elements apart in src, transposed into dst: %d elements a step.", name, pk.p, pk.p))
	dst := Load(Param("dst"), GP64())
	src := Load(Param("src"), GP64())
	ld := Load(Param("ld"), GP64())
	kc := Load(Param("kc"), GP64())
	SHLQ(U8(log2(es)), ld)
	ld3 := GP64()
	LEAQ(Mem{Base: ld, Index: ld, Scale: 2}, ld3)
	row := GP64()
	// rowMem addresses row 4g+j of the group at row (row steps four rows
	// a group).
	rowMem := func(j int) Mem { return quadRow(row, ld, ld3, j) }
	groups := func(f func(g int)) {
		MOVQ(src, row)
		for g := 0; g < pk.p/4; g++ {
			if g > 0 {
				LEAQ(Mem{Base: row, Index: ld, Scale: 4}, row)
			}
			f(g)
		}
	}
	// block generates the loop over blocks of n steps, whose body
	// transposes each group of rows in place.
	block := func(n int, label string, body func(g int)) {
		CMPQ(kc, U8(n))
		JL(LabelRef(label + "_end"))
		Label(label)
		groups(body)
		ADDQ(U32(n*es), src)
		ADDQ(U32(n*pk.p*es), dst)
		SUBQ(U8(n), kc)
		CMPQ(kc, U8(n))
		JGE(LabelRef(label))
		Label(label + "_end")
	}
	out := func(step, g int) Mem { return Mem{Base: dst, Disp: (step*pk.p + 4*g) * es} }
	if !pk.double {
		// t0..t3 hold, in each 128-bit lane l, the four rows' elements
		// of steps 4l..4l+3.
		transpose := func(r func(int) Register) {
			VUNPCKLPS(r(1), r(0), r(4))
			VUNPCKHPS(r(1), r(0), r(5))
			VUNPCKLPS(r(3), r(2), r(6))
			VUNPCKHPS(r(3), r(2), r(7))
			VUNPCKLPD(r(6), r(4), r(0))
			VUNPCKHPD(r(6), r(4), r(1))
			VUNPCKLPD(r(7), r(5), r(2))
			VUNPCKHPD(r(7), r(5), r(3))
		}
		block(16, name+"_b16", func(g int) {
			for j := 0; j < 4; j++ {
				VMOVUPS(rowMem(j), zmm(j))
			}
			transpose(func(i int) Register { return zmm(i) })
			for l := 0; l < 4; l++ {
				for j := 0; j < 4; j++ {
					if l == 0 {
						VMOVUPS(zmm(j).AsX(), out(j, g))
					} else {
						VEXTRACTF32X4(U8(l), zmm(j), out(4*l+j, g))
					}
				}
			}
		})
		xmm := func(i int) Register { return zmm(i).AsX() }
		block(4, name+"_b4", func(g int) {
			for j := 0; j < 4; j++ {
				VMOVUPS(rowMem(j), xmm(j))
			}
			transpose(xmm)
			for j := 0; j < 4; j++ {
				VMOVUPS(xmm(j), out(j, g))
			}
		})
	} else {
		ymm := func(i int) Register { return zmm(i).AsY() }
		block(4, name+"_b4", func(g int) {
			for j := 0; j < 4; j++ {
				VMOVUPD(rowMem(j), ymm(j))
			}
			// t0, t1 pair rows 0 and 1 at steps (0, 2) and (1, 3); t2,
			// t3 rows 2 and 3; the 128-bit halves then make the columns.
			VUNPCKLPD(ymm(1), ymm(0), ymm(4))
			VUNPCKHPD(ymm(1), ymm(0), ymm(5))
			VUNPCKLPD(ymm(3), ymm(2), ymm(6))
			VUNPCKHPD(ymm(3), ymm(2), ymm(7))
			VINSERTF128(U8(1), zmm(6).AsX(), ymm(4), ymm(0))
			VINSERTF128(U8(1), zmm(7).AsX(), ymm(5), ymm(1))
			VPERM2F128(U8(0x31), ymm(6), ymm(4), ymm(2))
			VPERM2F128(U8(0x31), ymm(7), ymm(5), ymm(3))
			for j := 0; j < 4; j++ {
				VMOVUPD(ymm(j), out(j, g))
			}
		})
	}
	TESTQ(kc, kc)
	JE(LabelRef(name + "_done"))
	Label(name + "_b1")
	groups(func(g int) {
		for j := 0; j < 4; j++ {
			if pk.double {
				MOVQ(rowMem(j), RAX)
				MOVQ(RAX, out(0, g).Offset(j*es))
			} else {
				MOVL(rowMem(j), EAX)
				MOVL(EAX, out(0, g).Offset(j*es))
			}
		}
	})
	ADDQ(U8(es), src)
	ADDQ(U32(pk.p*es), dst)
	DECQ(kc)
	JNZ(LabelRef(name + "_b1"))
	Label(name + "_done")
	VZEROUPPER()
	RET()
}

// quadRow addresses row j (0 to 3) of four rows ld bytes apart from
// base, with ld3 holding 3·ld: x86 addressing scales an index by 1, 2, 4
// or 8, so four rows take one base register and two strides.
func quadRow(base, ld, ld3 Register, j int) Mem {
	switch j {
	case 1:
		return Mem{Base: base, Index: ld, Scale: 1}
	case 2:
		return Mem{Base: base, Index: ld, Scale: 2}
	case 3:
		return Mem{Base: base, Index: ld3, Scale: 1}
	}
	return Mem{Base: base}
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
	// maximises the flops per byte loaded, MR·NR/(MR+NR). The AVX-512
	// kernels prefetch Ã 1.5 KiB ahead (32 float32 steps, 16 float64);
	// distances from 0.5 to 6 KiB measured alike.
	for _, kc := range []kernel{
		{name: "kernelF32AVX2", mr: 6, nv: 2},
		{name: "kernelF64AVX2", double: true, mr: 6, nv: 2},
		{name: "kernelF32AVX512", zmm: true, mr: 12, nv: 2, bcast: true, prefetchA: 1536},
		{name: "kernelF64AVX512", double: true, zmm: true, mr: 12, nv: 2, bcast: true, prefetchA: 1536},
	} {
		kc.gen()
		if !kc.zmm {
			continue
		}
		// Short kernels (kernelF32AVX512r4, ...) for a last panel of 4
		// or 8 rows, as 1024 or 512 rows leave: the full kernel would
		// compute 12 rows into a scratch tile, three times (or one and a
		// half) the work.
		for _, rows := range []int{4, 8} {
			short := kc
			short.name, short.mr, short.astep = fmt.Sprintf("%sr%d", kc.name, rows), rows, kc.mr
			short.gen()
		}
	}
	// The packers of the AVX-512 kernels' panels: MR = 12 rows of Ã,
	// NR = 32 (float32) or 16 (float64) columns of B̃.
	for _, pk := range []packer{{p: 12}, {p: 32}, {double: true, p: 12}, {double: true, p: 16}} {
		pk.genCopy()
		pk.genTrans()
	}
	cpuid()
	Generate()
	// Generate's printers cannot be told the header, so it is rewritten
	// in the files they wrote.
	for _, name := range []string{"out", "stubs"} {
		if file := flag.Lookup(name).Value.String(); file != "" && file != "-" {
			setHeader(file)
		}
	}
}

// setHeader replaces the first line of file, avo's header, with
// asmgen.Header's.
func setHeader(file string) {
	b, err := os.ReadFile(file)
	if err != nil {
		log.Fatal(err)
	}
	_, rest, _ := bytes.Cut(b, []byte("\n"))
	if err := os.WriteFile(file, append([]byte(asmgen.Header("gemm")+"\n"), rest...), 0o644); err != nil {
		log.Fatal(err)
	}
}
