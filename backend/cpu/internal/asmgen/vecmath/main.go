// Command vecmath generates the vectorised float32 kernels of package cpu
// with avo: vecmath_amd64.s, with an AVX2+FMA kernel (8 lanes) and an
// AVX-512 kernel (16 lanes) for each of exp, expm1, log, log1p, tanh,
// sigmoid, erf, sin, cos and sqrt, of Add, Sub, Mul, Div, Maximum and
// Minimum, of the Max and Min reductions, and of the loops of ArgMax and
// ArgMin (float32 and float64) and of the softmax family (lineFns), of
// the fused interpreter's tiles (tileFns), the AVX-512 chain kernel
// (chain.go), and vecmath_amd64.go, their declarations and the table
// vecmath.go
// dispatches through. Both outputs are committed; regenerate
// them after changing this file or vecmath_fallback.go with
//
//	go generate ./backend/cpu
//
// which runs, in backend/cpu,
//
//	go run ./internal/asmgen/vecmath -out vecmath_amd64.s -go vecmath_amd64.go
//
// Each function kernel is written once below against a small vector
// vocabulary (isa) and emitted for both instruction sets. It follows its
// scalar twin in vecmath_fallback.go (expCore and goExp, ...) step for
// step, and takes its constants and polynomial coefficients from that
// file, which it parses, so the two cannot disagree on them. It runs over
// the whole vectors, then over the remaining elements as one vector under
// a mask, so that an element's result does not depend on its position.
//
// Kernels keep their most used constants in registers across the loop,
// as many as register allocation allows, found by compiling trials; the
// rest are memory operands into a table where each constant fills 64
// bytes, so that an AVX2 instruction reads its first 32 and an AVX-512
// one all of them.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/constant"
	"go/format"
	"go/parser"
	"go/token"
	"log"
	"math"
	"os"
	"slices"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/gotypes"
	"github.com/mmcloughlin/avo/ir"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/pass"
	"github.com/mmcloughlin/avo/printer"
	"github.com/mmcloughlin/avo/reg"

	"github.com/fathom-go/fathom/backend/cpu/internal/asmgen"
)

// Kernel-only constants: π/2 as a sum of three float32s. With fused
// multiply-adds a - n*pio2A is exact, and the two corrections keep
// r = a - n π/2 accurate to the last bit for every n the kernels meet
// (n < 2^16); the pure-Go fallback reduces in float64 instead.
const (
	pio2A = 1.57079637
	pio2B = -4.37113883e-08
	pio2C = -1.71512451e-15
)

const (
	signBit  = 0x80000000
	mantMask = 1<<23 - 1
)

// Comparison predicates of VCMPPS.
const (
	cmpEQ  = 0x00 // ordered, equal
	cmpUNO = 0x03 // unordered: either is NaN
	cmpNEQ = 0x04 // unordered or not equal
	cmpNLT = 0x05 // unordered or not less than
	cmpLT  = 0x11 // ordered, less than
	cmpLE  = 0x12 // ordered, less than or equal
	cmpGE  = 0x1d // ordered, greater than or equal
	cmpGT  = 0x1e // ordered, greater than
)

// shared are the constants and arrays of vecmath_fallback.go.
var shared = struct {
	consts map[string]constant.Value
	arrays map[string][]float32 // flattened row by row
}{map[string]constant.Value{}, map[string][]float32{}}

// readShared parses the constant declarations and the float32 array
// variables of the Go file name.
func readShared(name string) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, nil, 0)
	if err != nil {
		log.Fatal(err)
	}
	var eval func(e ast.Expr) constant.Value
	eval = func(e ast.Expr) constant.Value {
		switch e := e.(type) {
		case *ast.BasicLit:
			return constant.MakeFromLiteral(e.Value, e.Kind, 0)
		case *ast.Ident:
			if v, ok := shared.consts[e.Name]; ok {
				return v
			}
		case *ast.ParenExpr:
			return eval(e.X)
		case *ast.UnaryExpr:
			return constant.UnaryOp(e.Op, eval(e.X), 0)
		case *ast.BinaryExpr:
			x, y := eval(e.X), eval(e.Y)
			if e.Op == token.SHL || e.Op == token.SHR {
				n, _ := constant.Uint64Val(y)
				return constant.Shift(x, e.Op, uint(n))
			}
			return constant.BinaryOp(x, e.Op, y)
		}
		log.Fatalf("%v: not a constant expression this generator evaluates", fset.Position(e.Pos()))
		return nil
	}
	var flatten func(e ast.Expr) []float32
	flatten = func(e ast.Expr) []float32 {
		if lit, ok := e.(*ast.CompositeLit); ok {
			var out []float32
			for _, el := range lit.Elts {
				out = append(out, flatten(el)...)
			}
			return out
		}
		v, _ := constant.Float32Val(constant.ToFloat(eval(e)))
		return []float32{v}
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, spec := range g.Specs {
			vs, ok := spec.(*ast.ValueSpec)
			if !ok || len(vs.Values) != len(vs.Names) {
				continue
			}
			for i, name := range vs.Names {
				switch v := vs.Values[i].(type) {
				case *ast.CompositeLit:
					if g.Tok == token.VAR {
						shared.arrays[name.Name] = flatten(v)
					}
				default:
					if g.Tok == token.CONST {
						shared.consts[name.Name] = eval(v)
					}
				}
			}
		}
	}
}

func value(name string) constant.Value {
	v, ok := shared.consts[name]
	if !ok {
		log.Fatalf("constant %s not found", name)
	}
	return v
}

// f32 returns the constant name rounded to float32, as Go rounds it where
// a float32 meets it.
func f32(name string) float32 {
	f, _ := constant.Float32Val(constant.ToFloat(value(name)))
	return f
}

// i32 returns the integer constant name.
func i32(name string) int32 {
	i, _ := constant.Int64Val(value(name))
	return int32(i)
}

func array(name string) []float32 {
	a, ok := shared.arrays[name]
	if !ok {
		log.Fatalf("array %s not found", name)
	}
	return a
}

// data is the read-only table of 64-byte entries the kernels read their
// constants from.
var data struct {
	entries [][16]uint32
	index   map[string]int
}

var dataBase = operand.NewDataAddr(operand.NewStaticSymbol("vmconst"), 0)

// entry returns the offset of the table entry key, adding vals under it.
func entry(key string, vals [16]uint32) int {
	if data.index == nil {
		data.index = map[string]int{}
	}
	i, ok := data.index[key]
	if !ok {
		i = len(data.entries)
		data.entries = append(data.entries, vals)
		data.index[key] = i
	}
	return 64 * i
}

func emitData(c *build.Context) {
	c.StaticGlobal("vmconst")
	c.DataAttributes(attr.RODATA | attr.NOPTR)
	for i, e := range data.entries {
		for l, v := range e {
			c.AddDatum(64*i+4*l, operand.U32(v))
		}
	}
}

// isa emits vector code for one instruction set into a build context. Its
// operations take registers or, for the operand an instruction can read
// from memory, constants, and return fresh virtual registers, which avo
// allocates. Masks are vector registers (the sign bit of each lane) under
// AVX2 and opmask registers under AVX-512.
type isa struct {
	name  string // kernel name suffix
	width int    // float32 lanes
	wide  bool   // AVX-512
	f64   bool   // float64 and int64 lanes, for cmp, blend and gti
	nt    bool   // kernel's whole vectors are stored around the caches
	// chain: blends write a copy of their first operand (see blend)
	chain bool

	c      *build.Context
	hoist  map[string]reg.Register // constants held in registers
	uses   map[string]int          // constant operands used, when counting
	order  []string                // the keys of uses in first-use order
	memory map[string]operand.Mem  // every constant's memory operand
}

func (s *isa) vec() reg.VecVirtual {
	if s.wide {
		return s.c.ZMM()
	}
	return s.c.YMM()
}

// constant returns the operand of the 64-byte table entry key, half h
// (AVX2 tables have two): its register if hoisted, else its memory.
func (s *isa) constant(key string, vals [16]uint32, h int) operand.Op {
	k := fmt.Sprintf("%s/%d", key, h)
	if r, ok := s.hoist[k]; ok {
		return r
	}
	m := dataBase.Offset(entry(key, vals) + 32*h)
	s.memory[k] = m
	if s.uses != nil {
		if s.uses[k] == 0 {
			s.order = append(s.order, k)
		}
		s.uses[k]++
	}
	return m
}

func (s *isa) cu(b uint32) operand.Op {
	var v [16]uint32
	for i := range v {
		v[i] = b
	}
	return s.constant(fmt.Sprintf("%#08x", b), v, 0)
}

func (s *isa) cf(f float32) operand.Op { return s.cu(math.Float32bits(f)) }
func (s *isa) ci(i int32) operand.Op   { return s.cu(uint32(i)) }

// reg returns x in a register, loading it if it is a memory operand.
func (s *isa) reg(x operand.Op) operand.Op {
	if operand.IsRegister(x) {
		return x
	}
	return s.copy(x)
}

func (s *isa) copy(x operand.Op) reg.Register {
	r := s.vec()
	s.c.VMOVUPS(x, r)
	return r
}

func (s *isa) add(a, b operand.Op) reg.Register { r := s.vec(); s.c.VADDPS(b, a, r); return r }
func (s *isa) sub(a, b operand.Op) reg.Register { r := s.vec(); s.c.VSUBPS(b, s.reg(a), r); return r }
func (s *isa) mul(a, b operand.Op) reg.Register { r := s.vec(); s.c.VMULPS(b, a, r); return r }
func (s *isa) div(a, b operand.Op) reg.Register { r := s.vec(); s.c.VDIVPS(b, s.reg(a), r); return r }

// fma returns a*b + c rounded once. a is a register; b or c may be a
// constant.
func (s *isa) fma(a, b, c operand.Op) reg.Register {
	if operand.IsRegister(b) {
		r := s.copy(a)
		s.c.VFMADD213PS(c, b, r)
		return r
	}
	r := s.copy(c)
	s.c.VFMADD231PS(b, a, r)
	return r
}

// fmaTo sets p = p*b + c: for a p nothing else reads, as in Horner's
// scheme, where a fresh register would cost a copy.
func (s *isa) fmaTo(p reg.Register, b, c operand.Op) reg.Register {
	s.c.VFMADD213PS(c, b, p)
	return p
}

// maxc and minc clamp x against a constant; a NaN x stays NaN, because
// VMAXPS and VMINPS return their second source when either is NaN.
func (s *isa) maxc(x operand.Op, c float32) reg.Register {
	r := s.vec()
	s.c.VMAXPS(x, s.reg(s.cf(c)), r)
	return r
}

func (s *isa) minc(x operand.Op, c float32) reg.Register {
	r := s.vec()
	s.c.VMINPS(x, s.reg(s.cf(c)), r)
	return r
}

// round rounds to the nearest integer, ties to even.
func (s *isa) round(x operand.Op) reg.Register {
	r := s.vec()
	if s.wide {
		s.c.VRNDSCALEPS(operand.U8(0), x, r)
	} else {
		s.c.VROUNDPS(operand.U8(0), x, r)
	}
	return r
}

func (s *isa) toInt(x operand.Op) reg.Register   { r := s.vec(); s.c.VCVTTPS2DQ(x, r); return r }
func (s *isa) toFloat(x operand.Op) reg.Register { r := s.vec(); s.c.VCVTDQ2PS(x, r); return r }
func (s *isa) addi(a, b operand.Op) reg.Register { r := s.vec(); s.c.VPADDD(b, a, r); return r }
func (s *isa) subi(a, b operand.Op) reg.Register { r := s.vec(); s.c.VPSUBD(b, a, r); return r }
func (s *isa) maxi(a, b operand.Op) reg.Register { r := s.vec(); s.c.VPMAXSD(b, a, r); return r }

func (s *isa) shl(a operand.Op, n uint8) reg.Register {
	r := s.vec()
	s.c.VPSLLD(operand.U8(n), a, r)
	return r
}

func (s *isa) shr(a operand.Op, n uint8) reg.Register {
	r := s.vec()
	s.c.VPSRLD(operand.U8(n), a, r)
	return r
}

func (s *isa) sra(a operand.Op, n uint8) reg.Register {
	r := s.vec()
	s.c.VPSRAD(operand.U8(n), a, r)
	return r
}

func (s *isa) and(a, b operand.Op) reg.Register { return s.bitwise(s.c.VPANDD, s.c.VPAND, a, b) }
func (s *isa) or(a, b operand.Op) reg.Register  { return s.bitwise(s.c.VPORD, s.c.VPOR, a, b) }
func (s *isa) xor(a, b operand.Op) reg.Register { return s.bitwise(s.c.VPXORD, s.c.VPXOR, a, b) }

// bitwise emits a bitwise operation of a and b: its EVEX form under
// AVX-512 (which reaches every register), its VEX form under AVX2.
func (s *isa) bitwise(evex func(...operand.Op), vex func(b, a, r operand.Op), a, b operand.Op) reg.Register {
	r := s.vec()
	if s.wide {
		evex(b, a, r)
	} else {
		vex(b, a, r)
	}
	return r
}

// cmp returns the mask of the lanes where a pred b holds.
func (s *isa) cmp(pred uint8, a, b operand.Op) reg.Register {
	vcmp := s.c.VCMPPS
	if s.f64 {
		vcmp = s.c.VCMPPD
	}
	if s.wide {
		k := s.c.K()
		vcmp(operand.U8(pred), b, a, k)
		return k
	}
	r := s.vec()
	vcmp(operand.U8(pred), b, a, r)
	return r
}

// blend returns b where m is set and a elsewhere.
func (s *isa) blend(m, a, b operand.Op) reg.Register {
	if s.wide && s.chain {
		// avo takes a masked instruction's destination for an operand
		// too, so a fresh one is live from the function's entry: through
		// the chain kernel's every handler, whose registers ran out. The
		// other kernels keep the fresh register: the copies made some of
		// them slower (docs/performance.md, What did not help).
		r := s.copy(a)
		s.c.VBLENDMPS(b, r, m, r)
		return r
	}
	r := s.vec()
	switch {
	case s.wide && s.f64:
		s.c.VBLENDMPD(b, s.reg(a), m, r)
	case s.wide:
		s.c.VBLENDMPS(b, s.reg(a), m, r)
	case s.f64:
		s.c.VBLENDVPD(m, b, s.reg(a), r)
	default:
		s.c.VBLENDVPS(m, b, s.reg(a), r)
	}
	return r
}

// blendTo sets a to b where m is set.
func (s *isa) blendTo(m, a, b reg.Register) {
	switch {
	case s.wide && s.f64:
		s.c.VBLENDMPD(b, a, m, a)
	case s.wide:
		s.c.VBLENDMPS(b, a, m, a)
	case s.f64:
		s.c.VBLENDVPD(m, b, a, a)
	default:
		s.c.VBLENDVPS(m, b, a, a)
	}
}

// odd returns the mask of the odd lanes of the int32 vector q.
func (s *isa) odd(q operand.Op) reg.Register {
	if s.wide {
		k := s.c.K()
		s.c.VPTESTMD(s.ci(1), q, k)
		return k
	}
	return s.shl(q, 31)
}

// index is a vector of table indices for lookup: the int32 lanes i (only
// their low four bits count) and, for AVX2, the mask of the lanes with
// bit 3 set.
type index struct{ i, hi reg.Register }

func (s *isa) index(i reg.Register) index {
	if s.wide {
		return index{i: i}
	}
	return index{i, s.shl(i, 28)}
}

// lookup returns tab[i] for the 16-entry table tab: one permutation with
// AVX-512; with AVX2, whose permutations take eight entries, one per half
// and a blend.
func (s *isa) lookup(key string, tab []float32, i index) reg.Register {
	var v [16]uint32
	for j, x := range tab {
		v[j] = math.Float32bits(x)
	}
	r := s.vec()
	s.c.VPERMPS(s.constant(key, v, 0), i.i, r)
	if s.wide {
		return r
	}
	hi := s.vec()
	s.c.VPERMPS(s.constant(key, v, 1), i.i, hi)
	return s.blend(i.hi, r, hi)
}

func (s *isa) abs(x operand.Op) reg.Register { return s.and(x, s.cu(^uint32(signBit))) }

// withSign flips the sign of y where x is negative.
func (s *isa) withSign(y, x operand.Op) reg.Register { return s.xor(y, s.and(x, s.cu(signBit))) }

// horner evaluates c[0] + c[1] x + ... at x.
func (s *isa) horner(c []float32, x reg.Register) reg.Register {
	n := len(c)
	p := s.fma(x, s.cf(c[n-1]), s.cf(c[n-2]))
	for i := n - 3; i >= 0; i-- {
		p = s.fmaTo(p, x, s.cf(c[i]))
	}
	return p
}

// pow2 returns 2^k for int32 lanes k in [-126, 127].
func (s *isa) pow2(k operand.Op) reg.Register { return s.shl(s.addi(k, s.ci(127)), 23) }

// scale returns y 2^n, rounded once, for integral float lanes n in
// [-150, 128]: AVX-512 has the instruction; AVX2 applies 2^n in two
// halves, each a normal power of two, so the product only rounds (to a
// subnormal or to infinity) at the second.
func (s *isa) scale(y, n operand.Op) reg.Register {
	if s.wide {
		r := s.vec()
		s.c.VSCALEFPS(n, s.reg(y), r)
		return r
	}
	k := s.toInt(n)
	k1 := s.sra(k, 1)
	return s.mul(s.mul(y, s.pow2(k1)), s.pow2(s.subi(k, k1)))
}

// halfPow2 returns 2^(n-1) for integral float lanes n in [-125, 128].
func (s *isa) halfPow2(n reg.Register) reg.Register {
	if s.wide {
		return s.scale(s.cf(0.5), n)
	}
	return s.pow2(s.subi(s.toInt(n), s.ci(1)))
}

// expReduce is expReduce.
func (s *isa) expReduce(x reg.Register) (n, r reg.Register) {
	n = s.round(s.mul(x, s.cf(f32("log2e"))))
	r = s.fma(n, s.cf(-f32("ln2Hi")), x)
	r = s.fma(n, s.cf(-f32("ln2Lo")), r)
	return n, r
}

// expCore is goExp.
func (s *isa) expCore(x operand.Op) reg.Register {
	c := s.minc(s.maxc(x, f32("expLo")), f32("expHi"))
	n, r := s.expReduce(c)
	y := s.fma(s.horner(array("expP"), r), s.mul(r, r), r)
	return s.scale(s.add(y, s.cf(1)), n)
}

// expm1Core is goExpm1.
func (s *isa) expm1Core(x reg.Register) reg.Register {
	c := s.minc(s.maxc(x, f32("expm1Lo")), f32("expHi"))
	n, r := s.expReduce(c)
	t := s.fma(s.horner(array("expP"), r), s.mul(r, r), r)
	h := s.halfPow2(n)
	y := s.fma(h, t, s.sub(h, s.cf(0.5)))
	y = s.add(y, y)
	return s.blend(s.cmp(cmpLT, s.abs(x), s.cf(f32("tinyArg"))), y, x)
}

// logCore is goLog.
func (s *isa) logCore(x reg.Register) reg.Register {
	den := s.cmp(cmpLT, x, s.cf(0x1p-126))
	xs := s.blend(den, x, s.mul(x, s.cf(0x1p23)))
	kadj := s.blend(den, s.ci(0), s.ci(-23))
	sqrtHalf := s.cu(uint32(i32("sqrtHalf")))
	ix := s.subi(xs, sqrtHalf)
	k := s.addi(s.sra(ix, 23), kadj)
	f := s.sub(s.addi(s.and(ix, s.cu(mantMask)), sqrtHalf), s.cf(1))
	z := s.mul(f, f)
	y := s.mul(s.mul(s.horner(array("logP"), f), f), z)
	fk := s.toFloat(k)
	y = s.fma(fk, s.cf(f32("ln2Lo")), y)
	y = s.fma(z, s.cf(-0.5), y)
	y = s.add(f, y)
	y = s.fma(fk, s.cf(f32("ln2Hi")), y)
	y = s.blend(s.cmp(cmpNLT, x, s.cf(float32(math.Inf(1)))), y, x)
	y = s.blend(s.cmp(cmpEQ, x, s.cf(0)), y, s.cf(float32(math.Inf(-1))))
	return s.blend(s.cmp(cmpLT, x, s.cf(0)), y, s.cu(0x7fc00000))
}

// log1pCore is goLog1p.
func (s *isa) log1pCore(x reg.Register) reg.Register {
	u := s.add(x, s.cf(1))
	b := s.sub(u, s.cf(1))
	a := s.sub(u, b)
	e := s.add(s.sub(s.cf(1), a), s.sub(x, b))
	y := s.add(s.logCore(u), s.div(e, u))
	y = s.blend(s.cmp(cmpEQ, x, s.cf(float32(math.Inf(1)))), y, x)
	y = s.blend(s.cmp(cmpEQ, x, s.cf(-1)), y, s.cf(float32(math.Inf(-1))))
	return s.blend(s.cmp(cmpLT, s.abs(x), s.cf(f32("tinyArg"))), y, x)
}

// tanhCore is goTanh.
func (s *isa) tanhCore(x reg.Register) reg.Register {
	a := s.minc(s.abs(x), f32("tanhMax"))
	i := s.index(s.maxi(s.subi(s.shr(a, 22), s.ci(i32("tanhBase"))), s.ci(0)))
	tab := array("tanhTab")
	const rows, cols = 16, 9
	column := func(j int) reg.Register {
		col := make([]float32, rows)
		for r := range col {
			col[r] = tab[r*cols+j]
		}
		return s.lookup(fmt.Sprintf("tanhTab[%d]", j), col, i)
	}
	t := s.sub(a, column(0))
	p := s.fma(t, column(cols-1), column(cols-2))
	for j := cols - 3; j >= 1; j-- {
		p = s.fmaTo(p, t, column(j))
	}
	return s.withSign(p, x)
}

// sigmoidCore is goSigmoid.
func (s *isa) sigmoidCore(x reg.Register) reg.Register {
	e := s.expCore(s.or(x, s.cu(signBit)))
	num := s.blend(s.cmp(cmpLT, x, s.cf(0)), s.cf(1), e)
	return s.div(num, s.add(e, s.cf(1)))
}

// erfCore is goErf.
func (s *isa) erfCore(x reg.Register) reg.Register {
	a := s.abs(x)
	small := s.fma(s.horner(array("erfP"), s.mul(a, a)), a, a)
	big := s.sub(s.cf(1), s.expCore(s.horner(array("erfQ"), s.minc(a, f32("erfHi")))))
	y := s.blend(s.cmp(cmpLT, a, s.cf(f32("erfSmall"))), big, small)
	return s.withSign(y, x)
}

// sinCosCore is goSin (quadrant 0) and goCos (quadrant 1) for |x| <=
// sinCosMax; the kernel loop hands vectors with larger lanes back to Go.
func (s *isa) sinCosCore(x reg.Register, quadrant int32) reg.Register {
	a := s.abs(x)
	n := s.round(s.mul(a, s.cf(f32("twoOverPi"))))
	r := s.fma(n, s.cf(-pio2A), a)
	r = s.fma(n, s.cf(-pio2B), r)
	r = s.fma(n, s.cf(-pio2C), r)
	q := s.toInt(n)
	if quadrant != 0 {
		q = s.addi(q, s.ci(quadrant))
	}
	z := s.mul(r, r)
	sin := s.fma(s.mul(s.horner(array("sinP"), z), z), r, r)
	cos := s.horner(array("cosP"), z)
	y := s.blend(s.odd(q), sin, cos)
	y = s.xor(y, s.and(s.shl(q, 30), s.cu(signBit)))
	if quadrant == 0 {
		y = s.withSign(y, x)
	}
	return y
}

// fn is one generated function.
type fn struct {
	name string // kernel name prefix: exp gives expAVX2 and expAVX512
	op   string // its vecOp
	core func(s *isa, x reg.Register) reg.Register
	// bail, if set, returns the mask of lanes the kernel must not compute.
	bail func(s *isa, x reg.Register) reg.Register
	// stream gives the function a twin that stores around the caches
	// (name ending in NT), for results too large for them. Only the
	// cheaper functions have one: log gained nothing from it, and erf and
	// log1p, which take longer to compute than their memory traffic, lost
	// (docs/performance.md, Elementwise float32 math).
	stream bool
}

func sinCosBail(s *isa, x reg.Register) reg.Register {
	return s.cmp(cmpGT, s.abs(x), s.cf(f32("sinCosMax")))
}

var fns = []fn{
	{"exp", "vecExp", func(s *isa, x reg.Register) reg.Register { return s.expCore(x) }, nil, true},
	{"expm1", "vecExpm1", (*isa).expm1Core, nil, true},
	{"log", "vecLog", (*isa).logCore, nil, false},
	{"log1p", "vecLog1p", (*isa).log1pCore, nil, false},
	{"tanh", "vecTanh", (*isa).tanhCore, nil, true},
	{"sigmoid", "vecSigmoid", (*isa).sigmoidCore, nil, true},
	{"erf", "vecErf", (*isa).erfCore, nil, false},
	{"sin", "vecSin", func(s *isa, x reg.Register) reg.Register { return s.sinCosCore(x, 0) }, sinCosBail, true},
	{"cos", "vecCos", func(s *isa, x reg.Register) reg.Register { return s.sinCosCore(x, 1) }, sinCosBail, true},
	{"sqrt", "vecSqrt", func(s *isa, x reg.Register) reg.Register { r := s.vec(); s.c.VSQRTPS(x, r); return r }, nil, true},
}

var isas = []isa{{name: "AVX2", width: 8}, {name: "AVX512", width: 16, wide: true}}

// kernel emits f into s.c: a loop over the whole vectors of dst, then the
// remaining elements as one vector under a mask, with the constants keyed
// in hoist loaded into registers first. It returns how many elements it
// wrote: all of them unless f.bail stopped it before a vector. With s.nt
// the whole vectors are stored around the caches (VMOVNTPS, which needs
// dst aligned to a vector) and the function's name ends in NT.
func (s *isa) kernel(f fn, hoist []string) {
	c := s.c
	c.Function(f.name + s.name + s.ntSuffix())
	c.Attributes(attr.NOSPLIT)
	c.SignatureExpr("func(dst, src []float32) int")
	d := c.Load(c.Param("dst").Base(), c.GP64())
	n := c.Load(c.Param("dst").Len(), c.GP64())
	p := c.Load(c.Param("src").Base(), c.GP64())
	whole := c.GP64()
	c.MOVQ(n, whole)
	c.ANDQ(operand.I32(-s.width), whole)
	s.hoistConsts(hoist)
	i := c.GP64()
	c.XORQ(i, i)
	bail := func(x reg.Register) {
		if f.bail == nil {
			return
		}
		m := f.bail(s, x)
		if s.wide {
			c.KORTESTW(m, m)
		} else {
			t := c.GP32()
			c.VMOVMSKPS(m, t)
			c.TESTL(t, t)
		}
		c.JNZ(operand.LabelRef("done"))
	}
	in, out := operand.Mem{Base: p, Index: i, Scale: 4}, operand.Mem{Base: d, Index: i, Scale: 4}
	c.Label("loop")
	c.CMPQ(i, whole)
	c.JAE(operand.LabelRef("tail"))
	x := s.copy(in)
	bail(x)
	s.store(f.core(s, x), out)
	c.ADDQ(operand.U32(s.width), i)
	c.JMP(operand.LabelRef("loop"))
	m := s.tail(i, n)
	x = s.maskedLoad(in, m)
	bail(x)
	s.maskedStore(f.core(s, x), m, out)
	c.MOVQ(n, i)
	c.Label("done")
	c.Store(i, c.ReturnIndex(0))
	c.VZEROUPPER()
	c.RET()
}

// store stores v at m: around the caches with s.nt.
func (s *isa) store(v reg.Register, m operand.Mem) {
	if s.nt {
		s.c.VMOVNTPS(v, m)
	} else {
		s.c.VMOVUPS(v, m)
	}
}

func (s *isa) ntSuffix() string {
	if s.nt {
		return "NT"
	}
	return ""
}

// tail emits the label "tail" of a loop over i up to n, which jumps to
// "done" when i has reached n and otherwise returns the mask of the n-i
// elements left.
func (s *isa) tail(i, n reg.Register) reg.Register {
	c := s.c
	c.Label("tail")
	c.CMPQ(i, n)
	c.JAE(operand.LabelRef("done"))
	rest := c.GP64()
	c.MOVQ(n, rest)
	c.SUBQ(i, rest)
	return s.tailMask(rest)
}

// tailMask returns the mask of the first rest lanes, for rest in [1,
// width): read from a table of 16-bit masks (their low halves) with
// AVX-512; with AVX2, eight lanes of a table of eight -1s then eight 0s,
// starting at 8-rest.
func (s *isa) tailMask(rest reg.Register) reg.Register {
	var tab [16]uint32
	base := s.c.GP64()
	if s.wide {
		for j := range tab {
			tab[j] = 1<<j - 1
		}
		s.c.LEAQ(dataBase.Offset(entry("tailmask16", tab)), base)
		k := s.c.K()
		s.c.KMOVW(operand.Mem{Base: base, Index: rest, Scale: 4}, k)
		return k
	}
	for j := range 8 {
		tab[j] = ^uint32(0)
	}
	s.c.LEAQ(dataBase.Offset(entry("tailmask8", tab)), base)
	off := s.c.GP64()
	s.c.MOVQ(operand.U32(8), off)
	s.c.SUBQ(rest, off)
	m := s.vec()
	s.c.VMOVUPS(operand.Mem{Base: base, Index: off, Scale: 4}, m)
	return m
}

// maskedLoad returns the lanes of m under mask (from tailMask), zeros in
// the others.
func (s *isa) maskedLoad(m operand.Mem, mask reg.Register) reg.Register {
	r := s.vec()
	if s.wide {
		s.c.VMOVUPS_Z(m, mask, r)
	} else {
		s.c.VMASKMOVPS(m, mask, r)
	}
	return r
}

// maskedStore stores the lanes of v under mask (from tailMask) to m.
func (s *isa) maskedStore(v, mask reg.Register, m operand.Mem) {
	if s.wide {
		s.c.VMOVUPS(v, mask, m)
	} else {
		s.c.VMASKMOVPS(v, mask, m)
	}
}

// hoistConsts loads the constants keyed in hoist into registers, where
// s.constant finds them from then on.
func (s *isa) hoistConsts(hoist []string) {
	s.hoist = map[string]reg.Register{}
	for _, k := range hoist {
		s.hoist[k] = s.copy(s.memory[k])
	}
}

// emit adds f for spec to ctx, hoisting the most used constants.
func emit(ctx *build.Context, spec isa, f fn) {
	emitHoisted(ctx, spec, f.name, func(s *isa, hoist []string) { s.kernel(f, hoist) })
}

// emitHoisted adds the kernel gen makes for spec to ctx, with the
// most used constants hoisted into registers: as many as register
// allocation succeeds with, found by compiling trial kernels.
func emitHoisted(ctx *build.Context, spec isa, name string, gen func(s *isa, hoist []string)) {
	count := spec
	count.c = build.NewContext()
	count.uses, count.memory = map[string]int{}, map[string]operand.Mem{}
	gen(&count, nil)
	keys := slices.Clone(count.order)
	slices.SortStableFunc(keys, func(a, b string) int { return count.uses[b] - count.uses[a] })
	for n := len(keys); n >= 0; n-- {
		trial := spec
		trial.c, trial.memory = build.NewContext(), count.memory
		gen(&trial, keys[:n])
		if !allocates(trial) {
			continue
		}
		out := spec
		out.c, out.memory = ctx, count.memory
		gen(&out, keys[:n])
		return
	}
	log.Fatalf("%s%s: no register allocation", name, spec.name)
}

// emitLine adds the kernel f for spec to ctx. A build that ignores its
// hoist list comes out of emitHoisted's first trial as it is.
func emitLine(ctx *build.Context, spec isa, f lineFn) {
	emitHoisted(ctx, spec, f.name, func(s *isa, hoist []string) { f.build(s, f.name, hoist) })
}

// allocates reports whether the function built in s.c compiles: whether
// its registers can be allocated, AVX2 ones among the 16 that VEX
// encodings reach (avo allocates from all 32).
func allocates(s isa) bool {
	file, err := s.c.Result()
	if err != nil {
		log.Fatal(err)
	}
	return pass.Compile.Execute(file) == nil && (s.wide || !highVectors(file))
}

// binFn is one generated binary operation.
type binFn struct {
	name string // kernel name prefix: add gives addAVX2 and addAVX512
	op   string // its opset.BinaryOp
	doc  string
	core func(s *isa, a, b reg.Register) reg.Register
}

// maxMin returns VMAXPS or VMINPS of b and a, which gives a where either
// is NaN (and for equal a and b, so a for -0 and +0), with the NaNs of b
// put back: the semantics of binary.go's maxKernel and minKernel.
func maxMin(max bool) func(s *isa, a, b reg.Register) reg.Register {
	return func(s *isa, a, b reg.Register) reg.Register {
		r := s.vec()
		if max {
			s.c.VMAXPS(a, b, r)
		} else {
			s.c.VMINPS(a, b, r)
		}
		return s.blend(s.cmp(cmpUNO, b, b), r, b)
	}
}

var binFns = []binFn{
	{"add", "Add", "a[i] + b[i]", func(s *isa, a, b reg.Register) reg.Register { return s.add(a, b) }},
	{"sub", "Sub", "a[i] - b[i]", func(s *isa, a, b reg.Register) reg.Register { return s.sub(a, b) }},
	{"mul", "Mul", "a[i] * b[i]", func(s *isa, a, b reg.Register) reg.Register { return s.mul(a, b) }},
	{"div", "Div", "a[i] / b[i]", func(s *isa, a, b reg.Register) reg.Register { return s.div(a, b) }},
	{"max", "Maximum", "the larger of a[i] and b[i], or the NaN among them", maxMin(true)},
	{"min", "Minimum", "the smaller of a[i] and b[i], or the NaN among them", maxMin(false)},
}

// binKernel emits f into s.c: tileKernel's loop over the slices a and b.
func (s *isa) binKernel(f binFn) {
	s.tileKernel(f.name, "ab", func(s *isa, v []reg.Register) reg.Register { return f.core(s, v[0], v[1]) })
}

func emitBinary(ctx *build.Context, spec isa, f binFn) {
	trial := spec
	trial.c = build.NewContext()
	trial.binKernel(f)
	if !allocates(trial) {
		log.Fatalf("%s%s: no register allocation", f.name, spec.name)
	}
	out := spec
	out.c = ctx
	out.binKernel(f)
}

// redFn is one generated float32 reduction.
type redFn struct {
	name string // kernel name prefix: maxRed gives maxRedAVX2 and maxRedAVX512
	op   string // its opset.ReduceOp in vecImpl.reduce, or "" for a vecImpl field named name
	doc  string // what it does to acc, with the lane count twice for %d
	step func(s *isa, acc, x reg.Register)
}

var redFns = []redFn{
	{"maxRed", "Max", "sets each of the first %d lanes of acc to the larger of it and the elements of x's whole %d-lane vectors in that lane, or to a NaN among them", func(s *isa, acc, x reg.Register) { s.redStep(true, acc, x) }},
	{"minRed", "Min", "sets each of the first %d lanes of acc to the smaller of it and the elements of x's whole %d-lane vectors in that lane, or to a NaN among them", func(s *isa, acc, x reg.Register) { s.redStep(false, acc, x) }},
	// Each lane adds a quarter of the elements in order; reduce.go's
	// pairwise sum keeps the runs it hands over short (see vecSumFunc).
	{"sumRed", "", "adds to each of the first %d lanes of acc the elements of x's whole %d-lane vectors in that lane, four vectors to an accumulator", func(s *isa, acc, x reg.Register) { s.c.VADDPS(x, acc, acc) }},
}

// redStep sets acc to the larger (smaller) of acc and x lane by lane,
// NaN-propagating as reduce.go's maxRun and minRun: VMAXPS and VMINPS
// keep acc where either is NaN (and where the two are equal, as the Go
// loops do), then x's NaNs are blended in.
func (s *isa) redStep(max bool, acc, x reg.Register) {
	t := s.vec()
	if max {
		s.c.VMAXPS(acc, x, t)
	} else {
		s.c.VMINPS(acc, x, t)
	}
	m := s.cmp(cmpUNO, x, x)
	if s.wide {
		s.c.VBLENDMPS(x, t, m, acc)
	} else {
		s.c.VBLENDVPS(m, x, t, acc)
	}
}

// redKernel emits f into s.c: starting from the lanes of *acc, a fold of
// the whole vectors of x into four accumulators, four vectors at a time
// while it can, then into one, whose lanes it stores back to *acc. It
// returns how many elements of x it read.
func (s *isa) redKernel(f redFn) {
	c := s.c
	c.Function(f.name + s.name)
	c.Attributes(attr.NOSPLIT)
	c.SignatureExpr("func(acc *[16]float32, x []float32) int")
	pacc := c.Load(c.Param("acc"), c.GP64())
	px := c.Load(c.Param("x").Base(), c.GP64())
	n := c.Load(c.Param("x").Len(), c.GP64())
	n4 := c.GP64()
	c.MOVQ(n, n4)
	c.ANDQ(operand.I32(-4*s.width), n4)
	c.ANDQ(operand.I32(-s.width), n)
	var acc [4]reg.Register
	acc[0] = s.copy(operand.Mem{Base: pacc})
	for v := 1; v < 4; v++ {
		acc[v] = s.copy(acc[0])
	}
	i := c.GP64()
	c.XORQ(i, i)
	at := func(v int) operand.Mem { return operand.Mem{Base: px, Index: i, Scale: 4, Disp: 4 * s.width * v} }
	c.Label("loop4")
	c.CMPQ(i, n4)
	c.JAE(operand.LabelRef("loop1"))
	for v := range 4 {
		f.step(s, acc[v], s.copy(at(v)))
	}
	c.ADDQ(operand.U32(4*s.width), i)
	c.JMP(operand.LabelRef("loop4"))
	c.Label("loop1")
	c.CMPQ(i, n)
	c.JAE(operand.LabelRef("done"))
	f.step(s, acc[0], s.copy(at(0)))
	c.ADDQ(operand.U32(s.width), i)
	c.JMP(operand.LabelRef("loop1"))
	c.Label("done")
	f.step(s, acc[0], acc[1])
	f.step(s, acc[2], acc[3])
	f.step(s, acc[0], acc[2])
	c.VMOVUPS(acc[0], operand.Mem{Base: pacc})
	c.Store(i, c.ReturnIndex(0))
	c.VZEROUPPER()
	c.RET()
}

func emitReduce(ctx *build.Context, spec isa, f redFn) {
	trial := spec
	trial.c = build.NewContext()
	trial.redKernel(f)
	if !allocates(trial) {
		log.Fatalf("%s%s: no register allocation", f.name, spec.name)
	}
	out := spec
	out.c = ctx
	out.redKernel(f)
}

// highVectors reports whether f uses a vector register above 15, which
// only EVEX (AVX-512) encodings reach: avo allocates from all 32.
func highVectors(f *ir.File) bool {
	for _, fn := range f.Functions() {
		for _, i := range fn.Instructions() {
			for _, r := range i.Registers() {
				if p := reg.ToPhysical(r); p != nil && p.Kind() == reg.KindVector && p.PhysicalIndex() > 15 {
					return true
				}
			}
		}
	}
	return false
}

// pruneVectorSelfMoves removes the copies of a register onto itself that
// allocation leaves where an operation copies an operand that then dies
// into the same register: no-ops that would still take issue slots in
// every iteration.
func pruneVectorSelfMoves(fn *ir.Function) error {
	fn.Nodes = slices.DeleteFunc(fn.Nodes, func(n ir.Node) bool {
		i, ok := n.(*ir.Instruction)
		return ok && i.Opcode == "VMOVUPS" && operand.IsRegister(i.Operands[0]) && i.Operands[0] == i.Operands[1]
	})
	return nil
}

func main() {
	// avo's build package claims flag.CommandLine's -out for itself
	fs := flag.NewFlagSet("vecmath", flag.ExitOnError)
	asmOut := fs.String("out", "vecmath_amd64.s", "write the assembly to `file`")
	goOut := fs.String("go", "vecmath_amd64.go", "write the Go declarations to `file`")
	fallback := fs.String("fallback", "vecmath_fallback.go", "read the constants and coefficients from `file`")
	if err := fs.Parse(os.Args[1:]); err != nil {
		log.Fatal(err)
	}
	readShared(*fallback)
	ctx := build.NewContext()
	ctx.ConstraintExpr("amd64,!noasm")
	for _, s := range isas {
		nt := s
		nt.nt = true
		for _, f := range fns {
			emit(ctx, s, f)
			if f.stream {
				emit(ctx, nt, f)
			}
		}
		for _, f := range binFns {
			emitBinary(ctx, s, f)
			emitBinary(ctx, nt, f)
		}
		for _, f := range scalarFns {
			emitLine(ctx, nt, f)
		}
		for _, f := range tripleSet {
			emitLine(ctx, nt, f)
		}
	}
	for _, s := range isas {
		for _, f := range redFns {
			emitReduce(ctx, s, f)
		}
		for _, f := range slices.Concat(lineFns, tileFns, memFns) {
			emitLine(ctx, s, f)
		}
	}
	ops := chainOps()
	for _, s := range isas {
		if s.wide {
			nt := s
			nt.nt = true
			emitChain(ctx, s, ops)
			emitChain(ctx, nt, ops)
		}
	}
	emitData(ctx)
	w, err := os.Create(*asmOut)
	if err != nil {
		log.Fatal(err)
	}
	// Without Argv, avo's printer names Name as the generator.
	pc := printer.Config{Name: asmgen.GeneratedBy("vecmath"), Pkg: "cpu"}
	cfg := &build.Config{ErrOut: os.Stderr, MaxErrors: 10, Passes: []pass.Interface{
		pass.Compile,
		pass.FunctionPass(pruneVectorSelfMoves),
		&pass.Output{Writer: w, Printer: printer.NewGoAsm(pc)},
	}}
	if build.Main(cfg, ctx) != 0 {
		os.Exit(1)
	}
	if err := os.WriteFile(*goOut, goFile(), 0o644); err != nil {
		log.Fatal(err)
	}
}

// declareNT writes the declaration of the twin of kernel name for s that
// stores around the caches, whose signature is sig.
func declareNT(b *bytes.Buffer, name string, s isa, sig string) {
	fmt.Fprintf(b, "\n// %s%sNT is %s%s with the whole vectors stored around the caches:\n", name, s.name, name, s.name)
	fmt.Fprintf(b, "// dst must be %d-byte aligned.\n//\n//go:noescape\nfunc %s%sNT%s\n", 4*s.width, name, s.name, sig)
}

// goFile returns the Go side of the kernels: declarations and asmImpls.
func goFile() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\n\n", asmgen.Header("vecmath"))
	fmt.Fprintf(&b, "//go:build amd64 && !noasm\n\npackage cpu\n\nimport (\n\t\"github.com/fathom-go/fathom/internal/opset\"\n\t\"golang.org/x/sys/cpu\"\n)\n\n")
	fmt.Fprintf(&b, "// asmImpls returns the kernel sets of vecmath_amd64.s that this CPU runs,\n// fastest first.\n")
	fmt.Fprintf(&b, "func asmImpls() []vecImpl {\n\tvar impls []vecImpl\n")
	for i := len(isas) - 1; i >= 0; i-- {
		s := isas[i]
		cond := "cpu.X86.HasAVX2 && cpu.X86.HasFMA"
		if s.wide {
			cond = "cpu.X86.HasAVX512F"
		}
		fmt.Fprintf(&b, "\tif %s {\n\t\timpls = append(impls, vecImpl{name: %q, width: %d, kernels: [numVecOps]vecKernel{\n", cond, s.name, s.width)
		for _, f := range fns {
			fmt.Fprintf(&b, "\t\t\t%s: %s%s,\n", f.op, f.name, s.name)
		}
		fmt.Fprintf(&b, "\t\t}, kernelsNT: [numVecOps]vecKernel{\n")
		for _, f := range fns {
			if f.stream {
				fmt.Fprintf(&b, "\t\t\t%s: %s%sNT,\n", f.op, f.name, s.name)
			}
		}
		fmt.Fprintf(&b, "\t\t}, binary: map[opset.BinaryOp]vecBinKernel{\n")
		for _, f := range binFns {
			fmt.Fprintf(&b, "\t\t\topset.%s: %s%s,\n", f.op, f.name, s.name)
		}
		fmt.Fprintf(&b, "\t\t}, binaryNT: map[opset.BinaryOp]vecBinKernel{\n")
		for _, f := range binFns {
			fmt.Fprintf(&b, "\t\t\topset.%s: %s%sNT,\n", f.op, f.name, s.name)
		}
		fmt.Fprintf(&b, "\t\t}, reduce: map[opset.ReduceOp]vecRedKernel{\n")
		for _, f := range redFns {
			if f.op != "" {
				fmt.Fprintf(&b, "\t\t\topset.%s: %s%s,\n", f.op, f.name, s.name)
			}
		}
		fmt.Fprintf(&b, "\t\t},\n")
		for _, f := range redFns {
			if f.op == "" {
				fmt.Fprintf(&b, "\t\t\t%s: %s%s,\n", f.name, f.name, s.name)
			}
		}
		for _, f := range slices.Concat(lineFns, tileFns, memFns) {
			fmt.Fprintf(&b, "\t\t\t%s: %s%s,\n", f.name, f.name, s.name)
		}
		for _, f := range slices.Concat(scalarFns, tripleSet) {
			fmt.Fprintf(&b, "\t\t\t%sNT: %s%sNT,\n", f.name, f.name, s.name)
		}
		if s.wide {
			fmt.Fprintf(&b, "\t\t\tchainCodes: map[chainStep]uint32{\n")
			for k, o := range chainOps() {
				fmt.Fprintf(&b, "\t\t\t\t%s: %d,\n", o.step, k+chainFixed)
			}
			fmt.Fprintf(&b, "\t\t\t},\n")
		}
		fmt.Fprintf(&b, "\t\t})\n\t}\n")
	}
	fmt.Fprintf(&b, "\treturn impls\n}\n")
	for _, s := range isas {
		for _, f := range fns {
			fmt.Fprintf(&b, "\n// %s%s sets dst[i] to %s(src[i]) for the whole %d-lane vectors of dst\n", f.name, s.name, f.name, s.width)
			if f.bail != nil {
				fmt.Fprintf(&b, "// up to the first with an argument beyond sinCosMax (or ±Inf)\n")
			}
			fmt.Fprintf(&b, "// and returns the number of elements written.\n//\n//go:noescape\nfunc %s%s(dst, src []float32) int\n", f.name, s.name)
			if f.stream {
				declareNT(&b, f.name, s, "(dst, src []float32) int")
			}
		}
		for _, f := range binFns {
			fmt.Fprintf(&b, "\n// %s%s sets dst[i] to %s for the whole %d-lane vectors of dst\n", f.name, s.name, f.doc, s.width)
			fmt.Fprintf(&b, "// and returns the number of elements written.\n//\n//go:noescape\nfunc %s%s(dst, a, b []float32) int\n", f.name, s.name)
			declareNT(&b, f.name, s, "(dst, a, b []float32) int")
		}
	}
	for _, s := range isas {
		for _, f := range redFns {
			fmt.Fprintf(&b, "\n// %s%s %s, and returns the number of elements read.\n", f.name, s.name, fmt.Sprintf(f.doc, s.width, s.width))
			fmt.Fprintf(&b, "//\n//go:noescape\nfunc %s%s(acc *[16]float32, x []float32) int\n", f.name, s.name)
		}
		for _, f := range slices.Concat(lineFns, tileFns, memFns) {
			fmt.Fprintf(&b, "\n// %s%s %s.\n//\n//go:noescape\nfunc %s%s%s\n", f.name, s.name, f.doc, f.name, s.name, f.sig)
		}
		for _, f := range slices.Concat(scalarFns, tripleSet) {
			declareNT(&b, f.name, s, f.sig)
		}
	}
	for _, s := range isas {
		if s.wide {
			fmt.Fprintf(&b, "\n// chain%s runs code over the whole %d-element blocks of dst (see chain).\n//\n//go:noescape\nfunc chain%s(dst []float32, srcs []*float32, code []uint32, scalars, scratch []float32)\n", s.name, 16*chainVecs, s.name)
			declareNT(&b, "chain", s, "(dst []float32, srcs []*float32, code []uint32, scalars, scratch []float32)")
		}
	}
	out, err := format.Source(b.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	return out
}

// The kernels of ArgMax and ArgMin (argreduce.go) and of the softmax
// family (softmax.go).

// Further comparison predicates of VCMPPS and VCMPPD, for the argument
// reductions.
const (
	cmpNLE = 0x06 // unordered or not less than or equal
	cmpNGE = 0x09 // unordered or not greater than or equal
	cmpORD = 0x07 // ordered: neither is NaN
)

// maskAnd and maskOr combine masks.
func (s *isa) maskAnd(a, b reg.Register) reg.Register { return s.maskOp(s.c.KANDW, s.and, a, b) }
func (s *isa) maskOr(a, b reg.Register) reg.Register  { return s.maskOp(s.c.KORW, s.or, a, b) }

// maskOp combines masks with kop under AVX-512, whose masks are K
// registers, else with the vector operation vop.
func (s *isa) maskOp(kop func(b, a, k operand.Op), vop func(a, b operand.Op) reg.Register, a, b reg.Register) reg.Register {
	if s.wide {
		k := s.c.K()
		kop(b, a, k)
		return k
	}
	return vop(a, b)
}

// gti returns the mask of the integer lanes where a > b.
func (s *isa) gti(a, b operand.Op) reg.Register {
	gt := s.c.VPCMPGTD
	if s.f64 {
		gt = s.c.VPCMPGTQ
	}
	if s.wide {
		k := s.c.K()
		gt(b, a, k)
		return k
	}
	r := s.vec()
	gt(b, a, r)
	return r
}

// anySet jumps to label if a lane of m or of m2 is set.
func (s *isa) anySet(m, m2 reg.Register, label string) {
	switch {
	case s.wide:
		s.c.KORTESTW(m2, m)
	case m == m2:
		s.c.VTESTPS(m, m)
	default:
		t := s.or(m, m2)
		s.c.VTESTPS(t, t)
	}
	s.c.JNZ(operand.LabelRef(label))
}

// addr returns the memory operand of an argument or result.
func (s *isa) addr(v gotypes.Component) operand.Mem {
	b, err := v.Resolve()
	if err != nil {
		log.Fatal(err)
	}
	return b.Addr
}

// param loads the float32 (with f64, float64) argument name into every
// lane of a vector. Arguments and results move through memory operands
// rather than Load and Store, whose SSE moves cannot reach the registers
// above 15 that AVX-512 kernels may get.
func (s *isa) param(name string) reg.Register {
	r := s.vec()
	if s.f64 {
		s.c.VBROADCASTSD(s.addr(s.c.Param(name)), r)
		return r
	}
	s.c.VBROADCASTSS(s.addr(s.c.Param(name)), r)
	return r
}

// zero returns a vector of zeros.
func (s *isa) zero() reg.Register {
	r := s.vec()
	if s.wide {
		s.c.VPXORD(r, r, r)
	} else {
		s.c.VPXOR(r, r, r)
	}
	return r
}

// lanes is the number of elements in a vector.
func (s *isa) lanes() int {
	if s.f64 {
		return s.width / 2
	}
	return s.width
}

// elems returns the constant vector whose element j (an int32 or, with
// f64, a 64-bit element) holds the bits f(j).
func (s *isa) elems(key string, f func(j int) uint64) operand.Op {
	var v [16]uint32
	if !s.f64 {
		for j := range v {
			v[j] = uint32(f(j))
		}
		return s.constant(key, v, 0)
	}
	for j := range 8 {
		b := f(j)
		v[2*j], v[2*j+1] = uint32(b), uint32(b>>32)
	}
	return s.constant(key+"/64", v, 0)
}

// iota returns the constant vector of integer lanes from + j.
func (s *isa) iota(from int) operand.Op {
	return s.elems(fmt.Sprintf("iota%d", from), func(j int) uint64 { return uint64(from + j) })
}

// addLanes adds the integer lanes of b to a.
func (s *isa) addLanes(a reg.Register, b operand.Op) {
	if s.f64 {
		s.c.VPADDQ(b, a, a)
	} else {
		s.c.VPADDD(b, a, a)
	}
}

// argSet is one accumulator of an argument reduction: the best value
// each lane has seen and where.
type argSet struct{ v, i reg.Register }

// argBetter returns the mask of the lanes where b beats a: a larger
// (smaller) value, or an equal one met earlier.
func (s *isa) argBetter(max bool, a, b argSet) reg.Register {
	pred := uint8(cmpLT)
	if max {
		pred = cmpGT
	}
	return s.maskOr(s.cmp(pred, b.v, a.v), s.maskAnd(s.cmp(cmpEQ, b.v, a.v), s.gti(a.i, b.i)))
}

func (s *isa) argJoin(max bool, a, b argSet) argSet {
	m := s.argBetter(max, a, b)
	return argSet{s.blend(m, a.v, b.v), s.blend(m, a.i, b.i)}
}

// argKernel emits the ArgMax (max) or ArgMin kernel over the whole
// vectors of x (float32, or float64 with s.f64): sets of accumulators
// of the best value in each lane and the offset of the vector it came
// from, as many vectors a step as sets while it can, then one. A strict
// comparison keeps the first of equal values. A vector holding a NaN
// stops the kernel: it returns the offset of the step with it, and Go
// finds the first NaN from there. Otherwise it turns offsets into
// indices, joins the sets and then the lanes (the best value, the
// smallest index among equal ones) and returns len(x) rounded down to
// whole vectors, the best value and its index.
func (s *isa) argKernel(name string, max bool, sets int) {
	c := s.c
	c.Function(name + s.name)
	c.Attributes(attr.NOSPLIT)
	t, size := "float32", 4
	if s.f64 {
		t, size = "float64", 8
	}
	c.SignatureExpr(fmt.Sprintf("func(x []%s) (n int, best %s, at int)", t, t))
	lanes := s.lanes()
	px := c.Load(c.Param("x").Base(), c.GP64())
	n := c.Load(c.Param("x").Len(), c.GP64())
	nk := c.GP64()
	c.MOVQ(n, nk)
	c.ANDQ(operand.I32(-sets*lanes), nk)
	c.ANDQ(operand.I32(-lanes), n)
	pred, start := uint8(cmpLT), math.Inf(1)
	if max {
		pred, start = cmpGT, math.Inf(-1)
	}
	init := s.cf(float32(start))
	if s.f64 {
		init = s.elems(fmt.Sprint(start), func(int) uint64 { return math.Float64bits(start) })
	}
	acc := make([]argSet, sets)
	for v := range acc {
		acc[v] = argSet{s.copy(init), s.zero()}
	}
	off := s.zero()
	i := c.GP64()
	c.XORQ(i, i)
	at := func(v int) operand.Mem {
		return operand.Mem{Base: px, Index: i, Scale: uint8(size), Disp: size * lanes * v}
	}
	step := func(a argSet, x reg.Register) {
		m := s.cmp(pred, x, a.v)
		s.blendTo(m, a.v, x)
		s.blendTo(m, a.i, off)
	}
	c.Label("loopk")
	c.CMPQ(i, nk)
	c.JAE(operand.LabelRef("loop1"))
	xs := make([]reg.Register, sets)
	for v := range xs {
		xs[v] = s.copy(at(v))
	}
	u := s.cmp(cmpUNO, xs[0], xs[1])
	for v := 2; v < sets; v += 2 {
		u2 := s.cmp(cmpUNO, xs[v], xs[v+1])
		if v+2 < sets {
			u = s.maskOr(u, u2)
			continue
		}
		s.anySet(u, u2, "nan")
	}
	if sets == 2 {
		s.anySet(u, u, "nan")
	}
	for v, x := range xs {
		step(acc[v], x)
	}
	step4 := sets * lanes
	s.addLanes(off, s.elems(fmt.Sprint("step", step4), func(int) uint64 { return uint64(step4) }))
	c.ADDQ(operand.U32(sets*lanes), i)
	c.JMP(operand.LabelRef("loopk"))
	c.Label("loop1")
	c.CMPQ(i, n)
	c.JAE(operand.LabelRef("done"))
	x := s.copy(at(0))
	u = s.cmp(cmpUNO, x, x)
	s.anySet(u, u, "nan")
	step(acc[0], x)
	s.addLanes(off, s.elems(fmt.Sprint("step", lanes), func(int) uint64 { return uint64(lanes) }))
	c.ADDQ(operand.U32(lanes), i)
	c.JMP(operand.LabelRef("loop1"))
	c.Label("done")
	for v := range acc {
		s.addLanes(acc[v].i, s.iota(v*lanes))
	}
	for len(acc) > 1 {
		for v := 0; v < len(acc)/2; v++ {
			acc[v] = s.argJoin(max, acc[2*v], acc[2*v+1])
		}
		acc = acc[:len(acc)/2]
	}
	best := acc[0]
	for h := lanes / 2; h >= 1; h /= 2 {
		other := argSet{s.vec(), s.vec()}
		switch {
		case s.f64 && !s.wide:
			// VPERMPD's immediate form: swap the halves, then the pairs
			imm := operand.U8(0x4e)
			if h == 1 {
				imm = operand.U8(0xb1)
			}
			c.VPERMPD(imm, best.v, other.v)
			c.VPERMPD(imm, best.i, other.i)
		default:
			p := s.reg(s.elems(fmt.Sprint("swap", h), func(j int) uint64 { return uint64(j ^ h) }))
			perm := c.VPERMPS
			if s.f64 {
				perm = c.VPERMPD
			}
			perm(best.v, p, other.v)
			perm(best.i, p, other.i)
		}
		best = s.argJoin(max, best, other)
	}
	c.Store(n, c.ReturnIndex(0))
	bv, bi := best.v.(reg.VecVirtual).AsX(), best.i.(reg.VecVirtual).AsX()
	if s.f64 {
		c.VMOVSD(bv, s.addr(c.ReturnIndex(1)))
		idx := c.GP64()
		c.VMOVQ(bi, idx)
		c.Store(idx, c.ReturnIndex(2))
	} else {
		c.VMOVSS(bv, s.addr(c.ReturnIndex(1)))
		idx := c.GP32()
		c.VMOVD(bi, idx)
		c.Store(idx.As64(), c.ReturnIndex(2))
	}
	c.VZEROUPPER()
	c.RET()
	c.Label("nan")
	c.Store(i, c.ReturnIndex(0))
	c.VZEROUPPER()
	c.RET()
}

// argRowsKernel emits the kernel that updates the best values and their
// row numbers of len(best) neighbouring lines with rows rows of them, the
// first at x[0] and the next stride further each, numbered from t0: a
// larger (smaller) value, or a NaN where the best is not one, replaces
// the best, so ties and later NaNs keep the first. It takes four rows at
// a time while it can, which keeps four streams of the input in flight
// and the best values in registers across them, then one; the last
// columns short of a vector are handled under a mask.
func (s *isa) argRowsKernel(name string, max bool) {
	c := s.c
	c.Function(name + s.name)
	c.Attributes(attr.NOSPLIT)
	c.SignatureExpr("func(best []float32, idx []int32, x []float32, stride, rows, t0 int)")
	pb := c.Load(c.Param("best").Base(), c.GP64())
	pi := c.Load(c.Param("idx").Base(), c.GP64())
	w := c.Load(c.Param("best").Len(), c.GP64())
	stride := c.Load(c.Param("stride"), c.GP64())
	c.SHLQ(operand.U8(2), stride)
	rows := c.Load(c.Param("rows"), c.GP64())
	var px [4]reg.Register
	px[0] = c.Load(c.Param("x").Base(), c.GP64())
	for k := 1; k < 4; k++ {
		px[k] = c.GP64()
		c.LEAQ(operand.Mem{Base: px[k-1], Index: stride, Scale: 1}, px[k])
	}
	stride4 := c.GP64()
	c.MOVQ(stride, stride4)
	c.SHLQ(operand.U8(2), stride4)
	var row [4]reg.Register
	row[0] = s.vec()
	c.VPBROADCASTD(s.addr(c.Param("t0")), row[0])
	for k := 1; k < 4; k++ {
		row[k] = s.addi(row[0], s.ci(int32(k)))
	}
	whole := c.GP64()
	c.MOVQ(w, whole)
	c.ANDQ(operand.I32(-s.width), whole)
	rest := c.GP64()
	c.MOVQ(w, rest)
	c.SUBQ(whole, rest)
	pred := uint8(cmpNGE)
	if max {
		pred = cmpNLE
	}
	var tail reg.Register
	c.CMPQ(rest, operand.U32(0))
	c.JE(operand.LabelRef("start"))
	tail = s.tailMask(rest)
	c.Label("start")
	j := c.GP64()
	// fold updates the best values and indices at j with n rows, under
	// the tail mask when masked.
	fold := func(n int, masked bool) {
		bm := operand.Mem{Base: pb, Index: j, Scale: 4}
		im := operand.Mem{Base: pi, Index: j, Scale: 4}
		load := func(m operand.Mem) reg.Register {
			if !masked {
				return s.copy(m)
			}
			return s.maskedLoad(m, tail)
		}
		b, i := load(bm), load(im)
		for k := range n {
			x := load(operand.Mem{Base: px[k], Index: j, Scale: 4})
			m := s.maskAnd(s.cmp(pred, x, b), s.cmp(cmpORD, b, b))
			b, i = s.blend(m, b, x), s.blend(m, i, row[k])
		}
		for _, st := range []struct {
			v reg.Register
			m operand.Mem
		}{{b, bm}, {i, im}} {
			if masked {
				s.maskedStore(st.v, tail, st.m)
			} else {
				c.VMOVUPS(st.v, st.m)
			}
		}
	}
	// pass folds n rows into every column, then moves on to the next.
	pass := func(n int, label string) {
		c.XORQ(j, j)
		c.Label(label + "cols")
		c.CMPQ(j, whole)
		c.JAE(operand.LabelRef(label + "last"))
		fold(n, false)
		c.ADDQ(operand.U32(s.width), j)
		c.JMP(operand.LabelRef(label + "cols"))
		c.Label(label + "last")
		c.CMPQ(rest, operand.U32(0))
		c.JE(operand.LabelRef(label + "next"))
		fold(n, true)
		c.Label(label + "next")
		step := stride
		if n == 4 {
			step = stride4
		}
		for k := range px {
			c.ADDQ(step, px[k])
		}
		for k := range row {
			c.VPADDD(s.ci(int32(n)), row[k], row[k])
		}
		c.SUBQ(operand.U32(n), rows)
	}
	c.Label("rows4")
	c.CMPQ(rows, operand.U32(4))
	c.JL(operand.LabelRef("rows1"))
	pass(4, "four")
	c.JMP(operand.LabelRef("rows4"))
	c.Label("rows1")
	c.CMPQ(rows, operand.U32(0))
	c.JLE(operand.LabelRef("done"))
	pass(1, "one")
	c.JMP(operand.LabelRef("rows1"))
	c.Label("done")
	c.VZEROUPPER()
	c.RET()
}

// sumWide adds the float32 lanes of t, converted to float64, to the
// float64 accumulators lo and hi (t's low and high halves).
func (s *isa) sumWide(lo, hi, t reg.Register) {
	c := s.c
	tv := t.(reg.VecVirtual)
	a, b := s.vec(), s.vec()
	if s.wide {
		h := c.YMM()
		c.VCVTPS2PD(tv.AsY(), a)
		c.VEXTRACTF64X4(operand.U8(1), t, h)
		c.VCVTPS2PD(h, b)
	} else {
		h := c.XMM()
		c.VCVTPS2PD(tv.AsX(), a)
		c.VEXTRACTF128(operand.U8(1), t, h)
		c.VCVTPS2PD(h, b)
	}
	c.VADDPD(a, lo, lo)
	c.VADDPD(b, hi, hi)
}

// sumLanes stores to the result the sum of the float64 lanes of lo and
// hi, always added in the same order. AVX-512 stays in 512-bit
// instructions, which need nothing beyond AVX512F at any register.
func (s *isa) sumLanes(lo, hi reg.Register) {
	c := s.c
	t := s.vec()
	c.VADDPD(hi, lo, t)
	if s.wide {
		for _, swap := range []func(p reg.Register){
			func(p reg.Register) { c.VSHUFF64X2(operand.U8(0x4e), t, t, p) },
			func(p reg.Register) { c.VSHUFF64X2(operand.U8(0xb1), t, t, p) },
			func(p reg.Register) { c.VPERMILPD(operand.U8(0x55), t, p) },
		} {
			p := s.vec()
			swap(p)
			c.VADDPD(p, t, t)
		}
	} else {
		h := c.XMM()
		c.VEXTRACTF128(operand.U8(1), t, h)
		x := t.(reg.VecVirtual).AsX()
		c.VADDPD(h, x, x)
		c.VUNPCKHPD(x, x, h)
		c.VADDSD(h, x, x)
	}
	c.VMOVSD(t.(reg.VecVirtual).AsX(), s.addr(c.ReturnIndex(0)))
}

// expKernel emits, with store, expScale: dst[i] = exp(src[i] - m) * c
// for i < len(dst), returning the sum of the exp(src[i] - m); without,
// expSum, which only returns the sum (of len(src) elements). The sum is
// taken four vectors at a time, pairwise in float32 (two roundings), then
// in float64 lane by lane, so its error stays within a few float32 ulps
// however long the line: every term is positive, so the float32
// additions err by at most 2·2^-24 of the total and the float64 ones by
// 2^-53 per term. The last elements short of a vector are handled under
// a mask, as zeros in the sum.
func (s *isa) expKernel(name string, store bool, hoist []string) {
	c := s.c
	c.Function(name + s.name)
	c.Attributes(attr.NOSPLIT)
	var pd, ps, n reg.Register
	if store {
		c.SignatureExpr("func(dst, src []float32, m, c float32) float64")
		pd = c.Load(c.Param("dst").Base(), c.GP64())
		n = c.Load(c.Param("dst").Len(), c.GP64())
	} else {
		c.SignatureExpr("func(src []float32, m float32) float64")
		n = c.Load(c.Param("src").Len(), c.GP64())
	}
	ps = c.Load(c.Param("src").Base(), c.GP64())
	m := s.param("m")
	var scale reg.Register
	if store {
		scale = s.param("c")
	}
	n4 := c.GP64()
	c.MOVQ(n, n4)
	c.ANDQ(operand.I32(-4*s.width), n4)
	whole := c.GP64()
	c.MOVQ(n, whole)
	c.ANDQ(operand.I32(-s.width), whole)
	lo, hi := s.zero(), s.zero()
	s.hoistConsts(hoist)
	i := c.GP64()
	c.XORQ(i, i)
	at := func(p reg.Register, v int) operand.Mem {
		return operand.Mem{Base: p, Index: i, Scale: 4, Disp: 4 * s.width * v}
	}
	// one computes a vector's exponential and stores it scaled.
	one := func(x reg.Register, v int) reg.Register {
		e := s.expCore(s.sub(x, m))
		if store {
			c.VMOVUPS(s.mul(e, scale), at(pd, v))
		}
		return e
	}
	c.Label("loop4")
	c.CMPQ(i, n4)
	c.JAE(operand.LabelRef("loop1"))
	var es [4]reg.Register
	for v := range es {
		es[v] = one(s.copy(at(ps, v)), v)
	}
	s.sumWide(lo, hi, s.add(s.add(es[0], es[1]), s.add(es[2], es[3])))
	c.ADDQ(operand.U32(4*s.width), i)
	c.JMP(operand.LabelRef("loop4"))
	c.Label("loop1")
	c.CMPQ(i, whole)
	c.JAE(operand.LabelRef("tail"))
	s.sumWide(lo, hi, one(s.copy(at(ps, 0)), 0))
	c.ADDQ(operand.U32(s.width), i)
	c.JMP(operand.LabelRef("loop1"))
	k := s.tail(i, n)
	e := s.expCore(s.sub(s.maskedLoad(at(ps, 0), k), m))
	if store {
		s.maskedStore(s.mul(e, scale), k, at(pd, 0))
	}
	// the masked-off lanes of e hold exp(-m), not zeros
	if s.wide {
		z := s.vec()
		c.VMOVUPS_Z(e, k, z)
		e = z
	} else {
		e = s.and(e, k)
	}
	s.sumWide(lo, hi, e)
	c.Label("done")
	s.sumLanes(lo, hi)
	c.VZEROUPPER()
	c.RET()
}

// affineKernel emits dst[i] = ((src[i] - a) * c) - b, rounding after
// each operation, so that a = b = 0 scales by c exactly as a product
// does and c = 1 subtracts exactly as two subtractions do. The last
// elements short of a vector are handled under a mask.
func (s *isa) affineKernel(name string) {
	c := s.c
	c.Function(name + s.name)
	c.Attributes(attr.NOSPLIT)
	c.SignatureExpr("func(dst, src []float32, a, c, b float32)")
	pd := c.Load(c.Param("dst").Base(), c.GP64())
	n := c.Load(c.Param("dst").Len(), c.GP64())
	ps := c.Load(c.Param("src").Base(), c.GP64())
	a, sc, b := s.param("a"), s.param("c"), s.param("b")
	n4 := c.GP64()
	c.MOVQ(n, n4)
	c.ANDQ(operand.I32(-4*s.width), n4)
	whole := c.GP64()
	c.MOVQ(n, whole)
	c.ANDQ(operand.I32(-s.width), whole)
	i := c.GP64()
	c.XORQ(i, i)
	at := func(p reg.Register, v int) operand.Mem {
		return operand.Mem{Base: p, Index: i, Scale: 4, Disp: 4 * s.width * v}
	}
	f := func(x reg.Register) reg.Register { return s.sub(s.mul(s.sub(x, a), sc), b) }
	c.Label("loop4")
	c.CMPQ(i, n4)
	c.JAE(operand.LabelRef("loop1"))
	for v := range 4 {
		c.VMOVUPS(f(s.copy(at(ps, v))), at(pd, v))
	}
	c.ADDQ(operand.U32(4*s.width), i)
	c.JMP(operand.LabelRef("loop4"))
	c.Label("loop1")
	c.CMPQ(i, whole)
	c.JAE(operand.LabelRef("tail"))
	c.VMOVUPS(f(s.copy(at(ps, 0))), at(pd, 0))
	c.ADDQ(operand.U32(s.width), i)
	c.JMP(operand.LabelRef("loop1"))
	k := s.tail(i, n)
	s.maskedStore(f(s.maskedLoad(at(ps, 0), k)), k, at(pd, 0))
	c.Label("done")
	c.VZEROUPPER()
	c.RET()
}

// lineFn is one kernel of argreduce.go or softmax.go: build emits it
// into an isa, with the constants keyed in hoist in registers for the
// kernels that take the hint.
type lineFn struct {
	name  string // kernel name prefix, also its vecImpl field
	sig   string // Go signature, without func
	doc   string // what it does, for its declaration
	build func(s *isa, name string, hoist []string)
}

var lineFns = []lineFn{
	{"argMax", "(x []float32) (n int, best float32, at int)",
		"is ArgMax over the whole vectors of x up to the first with a NaN (see argKernel)",
		func(s *isa, name string, _ []string) { s.argSets(name, true) }},
	{"argMin", "(x []float32) (n int, best float32, at int)",
		"is ArgMin over the whole vectors of x up to the first with a NaN (see argKernel)",
		func(s *isa, name string, _ []string) { s.argSets(name, false) }},
	{"argMax64", "(x []float64) (n int, best float64, at int)",
		"is ArgMax over the whole vectors of x up to the first with a NaN (see argKernel)",
		func(s *isa, name string, _ []string) { s.f64 = true; s.argSets(name, true) }},
	{"argMin64", "(x []float64) (n int, best float64, at int)",
		"is ArgMin over the whole vectors of x up to the first with a NaN (see argKernel)",
		func(s *isa, name string, _ []string) { s.f64 = true; s.argSets(name, false) }},
	{"argMaxRows", "(best []float32, idx []int32, x []float32, stride, rows, t0 int)",
		"folds rows rows of x into the running ArgMax of len(best) lines (see argRowsKernel)",
		func(s *isa, name string, _ []string) { s.argRowsKernel(name, true) }},
	{"argMinRows", "(best []float32, idx []int32, x []float32, stride, rows, t0 int)",
		"folds rows rows of x into the running ArgMin of len(best) lines (see argRowsKernel)",
		func(s *isa, name string, _ []string) { s.argRowsKernel(name, false) }},
	{"expScale", "(dst, src []float32, m, c float32) float64",
		"sets dst[i] = exp(src[i]-m)*c and returns the sum of the exp(src[i]-m) (see expKernel)",
		func(s *isa, name string, hoist []string) { s.expKernel(name, true, hoist) }},
	{"expSum", "(src []float32, m float32) float64",
		"returns the sum of the exp(src[i]-m) (see expKernel)",
		func(s *isa, name string, hoist []string) { s.expKernel(name, false, hoist) }},
	{"affine", "(dst, src []float32, a, c, b float32)",
		"sets dst[i] = ((src[i]-a)*c)-b, rounding each operation",
		func(s *isa, name string, _ []string) { s.affineKernel(name) }},
}

// argSets emits the argument reduction with four accumulators, or two
// where four do not fit the registers (AVX2's sixteen).
func (s *isa) argSets(name string, max bool) {
	trial := *s
	trial.c = build.NewContext()
	trial.argKernel(name, max, 4)
	if allocates(trial) {
		s.argKernel(name, max, 4)
		return
	}
	s.argKernel(name, max, 2)
}
