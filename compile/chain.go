package compile

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
)

// chainMemo is chainOf's answer for one call's scalar inputs (sc).
type chainMemo struct {
	sc []string // each scalar input's bytes; "" for the others
	ch *cpu.Chain
	x  int
}

// chainFor is chainOf, answered from the last call's when the scalar
// inputs are the same ones with the same values, as a compiled function's
// constants are: building the chain took 8% of a 16-element GELU call.
func (c *Compiled) chainFor(sc [][]byte) (*cpu.Chain, int) {
	if m := c.chain.Load(); m != nil && sameScalars(m.sc, sc) {
		return m.ch, m.x
	}
	m := &chainMemo{sc: make([]string, len(sc))}
	for i, b := range sc {
		m.sc[i] = string(b)
	}
	m.ch, m.x = c.chainOf(sc)
	c.chain.Store(m)
	return m.ch, m.x
}

func sameScalars(memo []string, sc [][]byte) bool {
	for i, b := range sc {
		if (b == nil) != (memo[i] == "") || string(b) != memo[i] {
			return false
		}
	}
	return true
}

// chainOf returns the program as a cpu.Chain, and the input x it runs
// over, for a call whose one-element inputs are those with sc[i] set; or
// nil if the program is not a chain in this call. A chain has
// one float32 input that is not a scalar, x, and one output, and each
// instruction takes the last one's result (x for the first) with x, a
// scalar or a product of x and a scalar that nothing else reads; the
// Chain runs it with the value in registers (tanh-GELU is one). Whether
// a program is one depends on which inputs are scalars, so it is asked
// per call.
func (c *Compiled) chainOf(sc [][]byte) (*cpu.Chain, int) {
	nIn := len(c.InDTypes)
	if len(c.Outputs) != 1 {
		return nil, 0
	}
	x := -1
	for i, dt := range c.InDTypes {
		switch {
		case dt != array.Float32:
			return nil, 0
		case sc[i] == nil && x >= 0:
			return nil, 0
		case sc[i] == nil:
			x = i
		}
	}
	ch := cpu.NewChain()
	if x < 0 || ch == nil {
		return nil, 0
	}
	reads := make([]int, nIn+len(c.Instrs))
	for _, in := range c.Instrs {
		for _, a := range in.Args {
			reads[a]++
		}
	}
	scalar := func(r int) (float32, bool) {
		if r < nIn && sc[r] != nil {
			return cpu.Elems[float32](cpu.Buf{Data: sc[r]})[0], true
		}
		return 0, false
	}
	// products x*s that one later instruction reads, not yet taken in
	leaves := map[int]float32{}
	acc := -1 // the register whose value the chain holds
	// takes reports whether an instruction can take register r as the
	// chain's value, starting the chain at x or a leaf if there is none
	takes := func(r int) bool {
		switch s, leaf := leaves[r]; {
		case acc >= 0:
			return r == acc && reads[acc] == 1
		case r == x:
			return true
		case leaf:
			delete(leaves, r)
			return ch.Binary(cpu.Mul, cpu.ChainScalar, s, false)
		}
		return false
	}
	for k, in := range c.Instrs {
		r := nIn + k
		if in.DType != array.Float32 {
			return nil, 0
		}
		switch in.Kind {
		case KindUnary:
			if !takes(in.Args[0]) || !ch.Unary(cpu.UnaryOp(in.Op)) {
				return nil, 0
			}
		case KindBinary:
			op := cpu.BinaryOp(in.Op)
			a, b := in.Args[0], in.Args[1]
			if op == cpu.Mul && a != acc && b != acc && reads[r] == 1 && r != c.Outputs[0] {
				if s, ok := scalar(b); ok && a == x {
					leaves[r] = s
					continue
				}
				if s, ok := scalar(a); ok && b == x {
					leaves[r] = s
					continue
				}
			}
			other, second := b, false
			if !takes(a) {
				if !takes(b) {
					return nil, 0
				}
				other, second = a, true
			}
			var ok bool
			s, isScalar := scalar(other)
			leaf, isLeaf := leaves[other]
			switch {
			case other == x:
				ok = ch.Binary(op, cpu.ChainX, 0, second)
			case isScalar:
				ok = ch.Binary(op, cpu.ChainScalar, s, second)
			case isLeaf:
				delete(leaves, other)
				ok = ch.Binary(op, cpu.ChainXScalar, leaf, second)
			}
			if !ok {
				return nil, 0
			}
		default:
			return nil, 0
		}
		acc = r
	}
	if acc != c.Outputs[0] || len(leaves) > 0 {
		return nil, 0
	}
	return ch, x
}
