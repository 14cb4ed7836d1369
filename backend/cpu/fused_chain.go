package cpu

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/fused"
	"github.com/fathom-go/fathom/internal/opset"
)

// chainMemo is chainOf's answer for one call's scalar inputs (sc).
type chainMemo struct {
	sc    []string // each scalar input's bytes; "" for the others
	ch    *chain
	tiles []int
}

// chainFor is chainOf, answered from the last call's when the scalar
// inputs are the same ones with the same values, as a compiled function's
// constants are: building the chain is a visible part of a small call
// (docs/performance.md).
func (f *interp) chainFor(sc [][]byte) (*chain, []int) {
	if m := f.chain.Load(); m != nil && sameScalars(m.sc, sc) {
		return m.ch, m.tiles
	}
	m := &chainMemo{sc: make([]string, len(sc))}
	for i, b := range sc {
		m.sc[i] = string(b)
	}
	m.ch, m.tiles = f.chainOf(sc)
	f.chain.Store(m)
	return m.ch, m.tiles
}

func sameScalars(memo []string, sc [][]byte) bool {
	for i, b := range sc {
		if (b == nil) != (memo[i] == "") || string(b) != memo[i] {
			return false
		}
	}
	return true
}

// chainOf returns the program as a chain for a call whose one-element
// inputs are those with sc[i] set, and the inputs it reads, by the index
// the chain gives them; or nil if the program is not one in this call. A
// chain has float32 inputs, at most chainInputs of them not scalars,
// one output, and instructions the chain kernel has. Each instruction
// takes its operand in the accumulator (loading it if the last result is
// not it) and the other as an input, a scalar, a product of an input and
// a scalar that nothing else reads, or a value saved in a slot: a result
// that is still to be read when the accumulator moves on is saved first,
// in at most chainSlots slots at a time. Whether a program is a chain
// depends on which inputs are scalars, so it is asked per call.
func (f *interp) chainOf(sc [][]byte) (*chain, []int) {
	nIn := len(f.p.InDTypes)
	if len(f.p.Outputs) != 1 || f.p.Outputs[0] < nIn {
		return nil, nil
	}
	out := f.p.Outputs[0]
	slot := make([]int, nIn) // the chain's index of an input that is not a scalar
	var tiles []int
	for i, dt := range f.p.InDTypes {
		if dt != array.Float32 {
			return nil, nil
		}
		if sc[i] == nil {
			slot[i] = len(tiles)
			tiles = append(tiles, i)
		}
	}
	ch := newChain()
	if len(tiles) == 0 || len(tiles) > chainInputs || ch == nil {
		return nil, nil
	}
	// remaining counts the reads of each register still to come, the
	// output's by the end among them
	remaining := make([]int, nIn+len(f.p.Instrs))
	for _, in := range f.p.Instrs {
		for _, a := range in.Args {
			remaining[a]++
		}
	}
	remaining[out]++
	tile := func(r int) bool { return r < nIn && sc[r] == nil }
	scalar := func(r int) (float32, bool) {
		if r < nIn && sc[r] != nil {
			return elems[float32](Buf{Data: sc[r]})[0], true
		}
		return 0, false
	}
	// products of an input and a scalar that one later instruction reads,
	// not yet computed
	type product struct {
		in int
		s  float32
	}
	leaves := map[int]product{}
	saved := map[int]int{} // results in slots, and their slots
	free := make([]int, chainSlots)
	for k := range free {
		free[k] = chainSlots - 1 - k
	}
	acc := -1 // the register whose value the accumulator holds
	// save puts the accumulator's value in a slot if it is read later and
	// is not in one
	save := func(later int) bool {
		if _, ok := saved[acc]; acc < nIn || later == 0 || ok {
			return true
		}
		if len(free) == 0 {
			return false
		}
		k := free[len(free)-1]
		free = free[:len(free)-1]
		saved[acc] = k
		return ch.Save(k)
	}
	// load makes r the accumulator's value, saving the last one first
	load := func(r int) bool {
		if r == acc {
			return true
		}
		if acc >= 0 && !save(remaining[acc]) {
			return false
		}
		acc = r
		if k, ok := saved[r]; ok {
			return ch.LoadSlot(k)
		}
		if p, ok := leaves[r]; ok {
			delete(leaves, r)
			return ch.Load(slot[p.in]) && ch.Binary(opset.Mul, chainScalar, 0, p.s, false)
		}
		return tile(r) && ch.Load(slot[r])
	}
	// consume counts a read of r, freeing its slot after the last
	consume := func(r int) {
		if remaining[r]--; remaining[r] == 0 {
			if k, ok := saved[r]; ok {
				free = append(free, k)
				delete(saved, r)
			}
		}
	}
	for k, in := range f.p.Instrs {
		r := nIn + k
		if in.DType != array.Float32 {
			return nil, nil
		}
		switch in.Kind {
		case fused.Unary:
			a := in.Args[0]
			if !load(a) || !save(remaining[a]-1) || !ch.Unary(opset.UnaryOp(in.Op)) {
				return nil, nil
			}
			consume(a)
		case fused.Binary:
			op := opset.BinaryOp(in.Op)
			a, b := in.Args[0], in.Args[1]
			if op == opset.Mul && remaining[r] == 1 && r != out {
				if s, ok := scalar(b); ok && tile(a) {
					leaves[r] = product{a, s}
					continue
				}
				if s, ok := scalar(a); ok && tile(b) {
					leaves[r] = product{b, s}
					continue
				}
			}
			// the accumulator takes a if it holds a or may load it, else b
			first, other, second := a, b, false
			_, aScalar := scalar(a)
			if acc == b && a != b || aScalar {
				first, other, second = b, a, true
			}
			if !load(first) {
				return nil, nil
			}
			// saved if read later, or as the other operand here
			later := remaining[first] - 1
			if other == first {
				later = remaining[first]
			}
			if !save(later) {
				return nil, nil
			}
			var ok bool
			s, isScalar := scalar(other)
			p, isLeaf := leaves[other]
			kSlot, isSaved := saved[other]
			switch {
			case tile(other):
				ok = ch.Binary(op, chainX, slot[other], 0, second)
			case isScalar:
				ok = ch.Binary(op, chainScalar, 0, s, second)
			case isLeaf:
				delete(leaves, other)
				ok = ch.Binary(op, chainXScalar, slot[p.in], p.s, second)
			case isSaved:
				ok = ch.Binary(op, chainSlot, kSlot, 0, second)
			}
			if !ok {
				return nil, nil
			}
			consume(a)
			consume(b)
		default:
			return nil, nil
		}
		acc = r
	}
	if len(leaves) > 0 || !load(out) {
		return nil, nil
	}
	return ch, tiles
}
