package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The kernels of the fused interpreter's tiles (tile.go): arithmetic with
// one scalar operand, broadcast once instead of read from a tile, and a
// multiply-add and a product of three that round the first product (so
// they match Mul then Add, or Mul then Mul) but pass over the tile once.

// scalarFns are the arithmetic with a scalar operand. Each also has a
// twin that stores around the caches (see isa.nt), as binFns do.
var scalarFns = []lineFn{
	scalarFn("addVS", "a[i] + b", "add", false),
	scalarFn("subVS", "a[i] - b", "sub", false),
	scalarFn("subSV", "b - a[i]", "sub", true),
	scalarFn("mulVS", "a[i] * b", "mul", false),
	scalarFn("divVS", "a[i] / b", "div", false),
	scalarFn("divSV", "b / a[i]", "div", true),
	scalarFn("maxVS", "the larger of a[i] and b, or the NaN among them", "max", false),
	scalarFn("maxSV", "the larger of b and a[i], or the NaN among them", "max", true),
	scalarFn("minVS", "the smaller of a[i] and b, or the NaN among them", "min", false),
	scalarFn("minSV", "the smaller of b and a[i], or the NaN among them", "min", true),
}

var tripleSet = slices.Concat(tripleFns("mulAdd", "a[i]*%s + c[i], rounding the product,", (*isa).add),
	tripleFns("mulMul", "(a[i]*%s) * c[i], rounding each product,", (*isa).mul))

// tileFns are emitted like lineFns: each is a vecImpl field.
var tileFns = slices.Concat(scalarFns,
	tripleSet,
	compareFns(),
	[]lineFn{
		{"u8ToF32", "(dst []float32, src []uint8) int",
			"sets dst[i] = float32(src[i]) for the whole vectors of dst and returns the number of elements written",
			func(s *isa, name string, _ []string) { s.u8ToFloatKernel(name) }},
		{"u8ToF64", "(dst []float64, src []uint8) int",
			"sets dst[i] = float64(src[i]) for the whole vectors of dst and returns the number of elements written",
			func(s *isa, name string, _ []string) { s.f64 = true; s.u8ToFloatKernel(name) }},
	},
)

// compareFns are the kernels of the comparisons of float32 and (with 64
// after the name) float64, each with a second operand b[i] (VV) or the
// scalar b (VS): Go's comparison operators, false for a NaN but under
// NotEqual. A comparison with the scalar first is the converse one with
// it second.
func compareFns() []lineFn {
	var fns []lineFn
	for _, t := range []struct {
		suffix, typ string
		f64         bool
	}{{"", "float32", false}, {"64", "float64", true}} {
		for _, c := range []struct {
			name, op string
			pred     uint8
		}{
			{"Eq", "==", cmpEQ}, {"Ne", "!=", cmpNEQ}, {"Lt", "<", cmpLT},
			{"Le", "<=", cmpLE}, {"Gt", ">", cmpGT}, {"Ge", ">=", cmpGE},
		} {
			for _, form := range []struct {
				suffix, b, sig string
				scalar         bool
			}{
				{"VV", "b[i]", "(dst []bool, a, b []%s) int", false},
				{"VS", "b", "(dst []bool, a []%[1]s, b %[1]s) int", true},
			} {
				sig := fmt.Sprintf(form.sig, t.typ)
				fns = append(fns, lineFn{"cmp" + c.name + form.suffix + t.suffix, sig,
					"sets dst[i] = a[i] " + c.op + " " + form.b + " for the whole vectors of dst and returns the number of elements written",
					func(s *isa, name string, _ []string) {
						s.f64 = t.f64
						s.compareKernel(name, "func"+sig, form.scalar, c.pred)
					}})
			}
		}
	}
	return fns
}

// compareKernel emits the loop of one comparison over the whole vectors
// of dst. A vector's mask becomes one byte (0 or 1) a lane: with AVX-512
// the mask selects ones among zeros, narrowed to bytes; with AVX2 the
// lanes' all-ones and zeros are packed to bytes with signed saturation
// (float64 lanes once more, their halves being equal) and cut to 1.
func (s *isa) compareKernel(name, sig string, scalar bool, pred uint8) {
	c := s.c
	size := uint8(4)
	if s.f64 {
		size = 8
	}
	var a, b, bv reg.Register
	s.wholeVectorKernel(name, sig, func() {
		a = c.Load(c.Param("a").Base(), c.GP64())
		if scalar {
			bv = s.param("b")
		} else {
			b = c.Load(c.Param("b").Base(), c.GP64())
		}
	}, func(d, i reg.Register) {
		x := s.copy(operand.Mem{Base: a, Index: i, Scale: size})
		var y operand.Op = bv
		if !scalar {
			y = operand.Mem{Base: b, Index: i, Scale: size}
		}
		m := s.cmp(pred, x, y)
		out := operand.Mem{Base: d, Index: i, Scale: 1}
		if s.wide {
			r := s.vec()
			if s.f64 {
				c.VMOVDQU64_Z(s.elems("one64", func(int) uint64 { return 1 }), m, r)
				c.VPMOVQB(r, out)
				return
			}
			c.VMOVDQU32_Z(s.ci(1), m, r)
			c.VPMOVDB(r, out)
			return
		}
		hi := c.XMM()
		c.VEXTRACTF128(operand.U8(1), m, hi)
		w := c.XMM()
		c.VPACKSSDW(hi, m.(reg.VecVirtual).AsX(), w)
		c.VPACKSSWB(w, w, w)
		if s.f64 {
			c.VPACKSSWB(w, w, w)
		}
		c.VPAND(s.cu(0x01010101), w, w)
		if s.f64 {
			c.VMOVD(w, out)
			return
		}
		c.MOVQ(w, out)
	})
}

// u8ToFloatKernel emits the conversion of bytes to float32 (or float64)
// over the whole vectors of dst: a comparison's mask (bools are the bytes
// 0 and 1) or uint8 data. float64 goes through a vector of int32 half as
// wide.
func (s *isa) u8ToFloatKernel(name string) {
	c := s.c
	sig, size := "func(dst []float32, src []uint8) int", uint8(4)
	if s.f64 {
		sig, size = "func(dst []float64, src []uint8) int", 8
	}
	var p reg.Register
	s.wholeVectorKernel(name, sig, func() {
		p = c.Load(c.Param("src").Base(), c.GP64())
	}, func(d, i reg.Register) {
		in := operand.Mem{Base: p, Index: i, Scale: 1}
		r := s.vec()
		switch {
		case !s.f64:
			c.VPMOVZXBD(in, r)
			c.VCVTDQ2PS(r, r)
		case s.wide:
			h := c.YMM()
			c.VPMOVZXBD(in, h)
			c.VCVTDQ2PD(h, r)
		default:
			h := c.XMM()
			c.VPMOVZXBD(in, h)
			c.VCVTDQ2PD(h, r)
		}
		c.VMOVUPS(r, operand.Mem{Base: d, Index: i, Scale: size})
	})
}

// wholeVectorKernel emits a kernel of signature sig, whose first
// parameter is the slice dst, that returns how many elements it covered:
// the whole vectors of dst. load loads the other parameters; body
// handles the vector at element i.
func (s *isa) wholeVectorKernel(name, sig string, load func(), body func(d, i reg.Register)) {
	c := s.c
	c.Function(name + s.name)
	c.Attributes(attr.NOSPLIT)
	c.SignatureExpr(sig)
	d := c.Load(c.Param("dst").Base(), c.GP64())
	n := c.Load(c.Param("dst").Len(), c.GP64())
	load()
	c.ANDQ(operand.I32(-s.lanes()), n)
	i := c.GP64()
	c.XORQ(i, i)
	c.Label("loop")
	c.CMPQ(i, n)
	c.JAE(operand.LabelRef("done"))
	body(d, i)
	c.ADDQ(operand.U32(s.lanes()), i)
	c.JMP(operand.LabelRef("loop"))
	c.Label("done")
	c.Store(i, c.ReturnIndex(0))
	c.VZEROUPPER()
	c.RET()
}

// tripleFns are the kernels of dst[i] = second(a[i]*b[i], c[i]) and, with
// an S after name, of the same with the scalar b. doc has %s where b's
// element goes.
func tripleFns(name, doc string, second func(s *isa, a, b operand.Op) reg.Register) []lineFn {
	core := func(s *isa, v []reg.Register) reg.Register { return second(s, s.mul(v[0], v[1]), v[2]) }
	fn := func(suffix, b, operands, sig string) lineFn {
		return lineFn{name + suffix, sig,
			"sets dst[i] to " + fmt.Sprintf(doc, b) + " for the whole vectors of dst and returns the number of elements written",
			func(s *isa, name string, _ []string) { s.tileKernel(name, operands, core) }}
	}
	return []lineFn{
		fn("", "b[i]", "abc", "(dst, a, b, c []float32) int"),
		fn("S", "b", "aBc", "(dst, a []float32, b float32, c []float32) int"),
	}
}

// scalarFn is the kernel of binFns' op with the scalar b as its second
// operand, or its first if swap.
func scalarFn(name, doc, op string, swap bool) lineFn {
	var core func(s *isa, a, b reg.Register) reg.Register
	for _, f := range binFns {
		if f.name == op {
			core = f.core
		}
	}
	return lineFn{name, "(dst, a []float32, b float32) int",
		"sets dst[i] to " + doc + " for the whole vectors of dst and returns the number of elements written",
		func(s *isa, name string, _ []string) {
			s.tileKernel(name, "aB", func(s *isa, v []reg.Register) reg.Register {
				if swap {
					return core(s, v[1], v[0])
				}
				return core(s, v[0], v[1])
			})
		}}
}

// tileKernel emits a loop over the whole vectors of dst, four at a time
// while it can, that returns how many elements it wrote. operands names
// the parameters after dst, in order: a lower-case letter is a slice read
// at the loop's index, an upper-case one a float32 broadcast once, before
// the loop. core combines one vector of each into the result. With s.nt
// the results are stored around the caches, to a dst aligned to a
// vector, and the name ends in NT.
func (s *isa) tileKernel(name, operands string, core func(s *isa, v []reg.Register) reg.Register) {
	c := s.c
	c.Function(name + s.name + s.ntSuffix())
	c.Attributes(attr.NOSPLIT)
	var sig []string
	for _, p := range operands {
		if p >= 'A' && p <= 'Z' {
			sig = append(sig, strings.ToLower(string(p))+" float32")
		} else {
			sig = append(sig, string(p)+" []float32")
		}
	}
	c.SignatureExpr("func(dst []float32, " + strings.Join(sig, ", ") + ") int")
	d := c.Load(c.Param("dst").Base(), c.GP64())
	n := c.Load(c.Param("dst").Len(), c.GP64())
	ptrs := make([]reg.Register, len(operands))
	bcast := make([]reg.Register, len(operands))
	for j, p := range operands {
		if p >= 'A' && p <= 'Z' {
			bcast[j] = s.param(strings.ToLower(string(p)))
		} else {
			ptrs[j] = c.Load(c.Param(string(p)).Base(), c.GP64())
		}
	}
	n4 := c.GP64()
	c.MOVQ(n, n4)
	c.ANDQ(operand.I32(-4*s.width), n4)
	c.ANDQ(operand.I32(-s.width), n)
	i := c.GP64()
	c.XORQ(i, i)
	step := func(vectors int) {
		for v := range vectors {
			at := func(p reg.Register) operand.Mem {
				return operand.Mem{Base: p, Index: i, Scale: 4, Disp: 4 * s.width * v}
			}
			vals := make([]reg.Register, len(operands))
			for j := range operands {
				if bcast[j] != nil {
					vals[j] = bcast[j]
				} else {
					vals[j] = s.copy(at(ptrs[j]))
				}
			}
			s.store(core(s, vals), at(d))
		}
		c.ADDQ(operand.U32(vectors*s.width), i)
	}
	c.Label("loop4")
	c.CMPQ(i, n4)
	c.JAE(operand.LabelRef("loop1"))
	step(4)
	c.JMP(operand.LabelRef("loop4"))
	c.Label("loop1")
	c.CMPQ(i, n)
	c.JAE(operand.LabelRef("done"))
	step(1)
	c.JMP(operand.LabelRef("loop1"))
	c.Label("done")
	c.Store(i, c.ReturnIndex(0))
	c.VZEROUPPER()
	c.RET()
}

// memFns move the interpreter's tiles: prefetching an input into L2 a few
// tiles ahead, which the hardware prefetchers do not do for a stream read
// in bursts with long gaps; and storing a large output around the caches,
// which saves the read of every line an ordinary store fetches before
// overwriting it.
var memFns = []lineFn{
	{"prefetch", "(p []byte)",
		"asks for the cache lines of p to be brought into L2, without waiting for them",
		func(s *isa, name string, _ []string) { s.prefetchKernel(name) }},
	{"copyNT", "(dst, src []float32) int",
		"copies the whole vectors of src to dst, which must be 64-byte aligned, with non-temporal stores, and returns the number of elements copied",
		func(s *isa, name string, _ []string) { s.copyNTKernel(name) }},
	{"storeFence", "()",
		"orders the non-temporal stores before it before every store after it",
		func(s *isa, name string, _ []string) { s.storeFenceKernel(name) }},
}

// storeFenceKernel is an SFENCE. copyNT leaves it to its callers, who
// fence once for a batch of copies: a fence waits for the stores before it
// to reach memory, and one after every interpreter tile kept them from
// overlapping the next tile's arithmetic.
func (s *isa) storeFenceKernel(name string) {
	c := s.c
	c.Function(name + s.name)
	c.Attributes(attr.NOSPLIT)
	c.SignatureExpr("func()")
	c.SFENCE()
	c.RET()
}

func (s *isa) prefetchKernel(name string) {
	c := s.c
	c.Function(name + s.name)
	c.Attributes(attr.NOSPLIT)
	c.SignatureExpr("func(p []byte)")
	p := c.Load(c.Param("p").Base(), c.GP64())
	n := c.Load(c.Param("p").Len(), c.GP64())
	i := c.GP64()
	c.XORQ(i, i)
	c.Label("loop")
	c.CMPQ(i, n)
	c.JAE(operand.LabelRef("done"))
	c.PREFETCHT1(operand.Mem{Base: p, Index: i, Scale: 1})
	c.ADDQ(operand.U32(64), i)
	c.JMP(operand.LabelRef("loop"))
	c.Label("done")
	c.RET()
}

func (s *isa) copyNTKernel(name string) {
	c := s.c
	var src reg.Register
	s.wholeVectorKernel(name, "func(dst, src []float32) int", func() {
		src = c.Load(c.Param("src").Base(), c.GP64())
	}, func(d, i reg.Register) {
		at := func(p reg.Register) operand.Mem { return operand.Mem{Base: p, Index: i, Scale: 4} }
		c.VMOVNTPS(s.copy(at(src)), at(d))
	})
}
