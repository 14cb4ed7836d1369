package main

import (
	"fmt"
	"strings"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The chain kernel (cpu's chain) runs a program of float32 operations on an
// accumulator kept in registers: a block of chainVecs vectors at a time,
// it loads one of its inputs, applies the program's operations one after
// another, each with an input, a scalar, an input times a scalar or a
// block saved in the scratch as its other operand, and stores the block.
// The fused interpreter runs a program with it in one pass, where its tile
// kernels take a pass, and a store, per operation. Each operation is done
// as its tile kernel does it, so the results are the same. It is AVX-512
// only: AVX2's 16 registers do not hold the accumulator and a function's
// temporaries.

// chainVecs is the vectors of a block: as many as leave the functions'
// temporaries enough registers, so that the dispatch of an operation is
// shared by 128 elements.
const chainVecs = 8

// chainOperand is where an operation's other operand comes from
// (cpu's chainOperand).
type chainOperand int

const (
	chainX       chainOperand = iota // the block of an input
	chainScalar                      // a scalar
	chainXScalar                     // an input times a scalar, rounded
	chainSlot                        // a block saved in the scratch
)

var chainOperandNames = [...]string{"chainX", "chainScalar", "chainXScalar", "chainSlot"}

// The opcodes that are not in chainOps, as cpu numbers them: the end of
// the program, which stores the block, the load of an input, and the save
// of the accumulator to a slot of the scratch and its load back. chainOps
// follow from chainFixed on.
const (
	chainEnd = iota
	chainLoad
	chainSave
	chainLoadSlot
	chainFixed
)

// chainOp is an operation of the chain kernel, opcode chainFixed on in
// chainOps' order. emit gets the accumulator and the instruction's
// operands (see chainEnv).
type chainOp struct {
	step string // its cpu.chainStep, as Go
	emit func(s *isa, acc []reg.Register, e chainEnv)
}

// chainEnv gives a handler its instruction's operands: input and slot
// return the block of its input or scratch slot (vector j of it), scalar
// its scalar in every lane.
type chainEnv struct {
	input, slot func() func(j int) operand.Mem
	scalar      func() reg.Register
}

func chainOps() []chainOp {
	var ops []chainOp
	unary := func(name string, f func(s *isa, a reg.Register) reg.Register) {
		ops = append(ops, chainOp{fmt.Sprintf("{op: uint8(opset.%s)}", name), func(s *isa, acc []reg.Register, _ chainEnv) {
			for _, a := range acc {
				s.c.VMOVUPS(f(s, a), a)
			}
		}})
	}
	unary("Neg", func(s *isa, a reg.Register) reg.Register { return s.xor(a, s.cu(signBit)) })
	unary("Square", func(s *isa, a reg.Register) reg.Register { return s.mul(a, a) })
	for _, f := range fns {
		if f.bail == nil {
			// opset's UnaryOp: exp is Exp, log1p Log1p
			unary(strings.ToUpper(f.name[:1])+f.name[1:], f.core)
		}
	}
	// the arithmetic of the tile kernels (binFns), so that it rounds and
	// picks among NaNs and zeros alike; those that do not commute exactly
	// (Sub, Div, and Maximum and Minimum, for a NaN or zeros either side)
	// have the accumulator second too
	for _, f := range binFns {
		both := f.op != "Add" && f.op != "Mul"
		for o := chainX; o <= chainSlot; o++ {
			for _, second := range []bool{false, true} {
				if second && !both {
					continue
				}
				step := fmt.Sprintf("{binary: true, op: uint8(opset.%s), operand: %s, accSecond: %v}", f.op, chainOperandNames[o], second)
				ops = append(ops, chainOp{step, func(s *isa, acc []reg.Register, e chainEnv) {
					var k reg.Register
					var x func(int) operand.Mem
					switch o {
					case chainX:
						x = e.input()
					case chainScalar:
						k = e.scalar()
					case chainXScalar:
						k, x = e.scalar(), e.input()
					case chainSlot:
						x = e.slot()
					}
					for j, a := range acc {
						var v reg.Register
						switch o {
						case chainX, chainSlot:
							v = s.copy(x(j))
						case chainScalar:
							v = k
						default:
							v = s.mul(k, x(j))
						}
						if second {
							s.c.VMOVUPS(f.core(s, v, a), a)
						} else {
							s.c.VMOVUPS(f.core(s, a, v), a)
						}
					}
				}})
			}
		}
	}
	return ops
}

// chainKernel emits the chain kernel for s (AVX-512): func(dst []float32,
// srcs []*float32, code []uint32, scalars, scratch []float32), over the
// whole blocks of dst, with srcs the inputs, as long as dst, and scratch
// the slots, a block each. An instruction of code is an opcode in its low
// byte, the index in srcs of its input (or its slot) in the next, and the
// index in scalars of its scalar in the upper half. With s.nt the blocks
// are stored around the caches (dst aligned to 64 bytes).
func (s *isa) chainKernel(ops []chainOp) {
	c := s.c
	c.Function("chain" + s.name + s.ntSuffix())
	c.Attributes(attr.NOSPLIT)
	c.SignatureExpr("func(dst []float32, srcs []*float32, code []uint32, scalars, scratch []float32)")
	d := c.Load(c.Param("dst").Base(), c.GP64())
	n := c.Load(c.Param("dst").Len(), c.GP64())
	sp := c.Load(c.Param("srcs").Base(), c.GP64())
	cb := c.Load(c.Param("code").Base(), c.GP64())
	sb := c.Load(c.Param("scalars").Base(), c.GP64())
	tb := c.Load(c.Param("scratch").Base(), c.GP64())
	// the accumulator is live in every handler: defined here, it keeps
	// its registers throughout
	acc := make([]reg.Register, chainVecs)
	for j := range acc {
		acc[j] = s.vec()
		c.VPXORD(acc[j], acc[j], acc[j])
	}
	i, pc, end := c.GP64(), c.GP64(), c.GP64()
	op, in, idx := c.GP32(), c.GP64(), c.GP64()
	c.XORQ(i, i)
	const blockLen = 16 * chainVecs
	c.Label("block")
	c.LEAQ(operand.Mem{Base: i, Disp: blockLen}, end)
	c.CMPQ(end, n)
	c.JA(operand.LabelRef("done"))
	c.XORQ(pc, pc)
	c.Label("next")
	c.MOVL(operand.Mem{Base: cb, Index: pc, Scale: 4}, op)
	c.INCQ(pc)
	c.MOVL(op, idx.As32())
	c.SHRL(operand.U8(16), idx.As32())
	c.MOVL(op, in.As32())
	c.SHRL(operand.U8(8), in.As32())
	c.ANDL(operand.U32(0xff), in.As32())
	c.ANDL(operand.U32(0xff), op)
	input := func() func(int) operand.Mem {
		p := c.GP64()
		c.MOVQ(operand.Mem{Base: sp, Index: in, Scale: 8}, p)
		return func(j int) operand.Mem { return operand.Mem{Base: p, Index: i, Scale: 4, Disp: 64 * j} }
	}
	slot := func() func(int) operand.Mem {
		p := c.GP64()
		c.MOVQ(in, p)
		c.SHLQ(operand.U8(9), p) // a block's bytes
		c.ADDQ(tb, p)
		return func(j int) operand.Mem { return operand.Mem{Base: p, Disp: 64 * j} }
	}
	scalar := func() reg.Register {
		r := s.vec()
		c.VBROADCASTSS(operand.Mem{Base: sb, Index: idx, Scale: 4}, r)
		return r
	}
	// a binary search over the opcodes; every branch is taken the same
	// way for each block, so the predictor learns the program
	handler := func(k int) string { return fmt.Sprintf("op%d", k) }
	var dispatch func(lo, hi int)
	dispatch = func(lo, hi int) {
		if lo == hi {
			c.JMP(operand.LabelRef(handler(lo)))
			return
		}
		mid := (lo + hi + 1) / 2
		right := fmt.Sprintf("d%d_%d", mid, hi)
		c.CMPL(op, operand.U32(mid))
		c.JAE(operand.LabelRef(right))
		dispatch(lo, mid-1)
		c.Label(right)
		dispatch(mid, hi)
	}
	dispatch(0, len(ops)+chainFixed-1)
	c.Label(handler(chainEnd))
	for j, a := range acc {
		s.store(a, operand.Mem{Base: d, Index: i, Scale: 4, Disp: 64 * j})
	}
	c.MOVQ(end, i)
	c.JMP(operand.LabelRef("block"))
	// the accumulator from an input or slot, and to a slot
	moves := []struct {
		op    int
		mem   func() func(int) operand.Mem
		store bool
	}{{chainLoad, input, false}, {chainSave, slot, true}, {chainLoadSlot, slot, false}}
	for _, mv := range moves {
		c.Label(handler(mv.op))
		m := mv.mem()
		for j, a := range acc {
			if mv.store {
				c.VMOVUPS(a, m(j))
			} else {
				c.VMOVUPS(m(j), a)
			}
		}
		c.JMP(operand.LabelRef("next"))
	}
	for k, o := range ops {
		c.Label(handler(k + chainFixed))
		o.emit(s, acc, chainEnv{input, slot, scalar})
		c.JMP(operand.LabelRef("next"))
	}
	c.Label("done")
	c.VZEROUPPER()
	c.RET()
}

// emitChain adds the chain kernel for spec to ctx, its constants in
// memory: a register held for one function's constants would be lost to
// the others.
func emitChain(ctx *build.Context, spec isa, ops []chainOp) {
	spec.c = ctx
	spec.chain = true
	spec.hoist = nil
	spec.uses, spec.order = nil, nil
	spec.memory = map[string]operand.Mem{}
	spec.chainKernel(ops)
}
