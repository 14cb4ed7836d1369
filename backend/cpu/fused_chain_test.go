package cpu

import (
	"slices"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/fused"
	"github.com/fathom-go/fathom/internal/opset"
)

// TestChainOf checks which programs run as a chain: those over float32
// inputs and scalars where each instruction takes the last one's result,
// with an input, a scalar or a product of an input and a scalar beside
// it, and which inputs the chain reads.
func TestChainOf(t *testing.T) {
	if newChain() == nil {
		t.Skip("no chain kernel (AVX-512)")
	}
	f32 := array.Float32
	un := func(op opset.UnaryOp, a int) fused.Instr {
		return fused.Instr{Kind: fused.Unary, Op: uint8(op), Args: []int{a}, DType: f32}
	}
	bin := func(op opset.BinaryOp, a, b int) fused.Instr {
		return fused.Instr{Kind: fused.Binary, Op: uint8(op), Args: []int{a, b}, DType: f32}
	}
	one := []byte{0, 0, 0x80, 0x3f} // 1.0
	// live(n) is n functions of x, then their sum: n values saved at
	// once, the last in the accumulator when the sum starts; its output
	// is r(2n-1)
	live := func(n int) []fused.Instr {
		var p []fused.Instr
		for range n {
			p = append(p, un(opset.Exp, 0))
		}
		p = append(p, bin(opset.Add, 1, 2))
		for r := 3; r <= n; r++ {
			p = append(p, bin(opset.Add, len(p), r))
		}
		return p
	}
	for _, tc := range []struct {
		name    string
		in      []array.DType
		scalars []bool // which inputs are one-element in the call
		instrs  []fused.Instr
		outputs []int
		chain   bool
		tiles   []int
	}{
		{"tanh of a scaled x plus one", []array.DType{f32, f32, f32}, []bool{false, true, true},
			[]fused.Instr{bin(opset.Mul, 0, 1), un(opset.Tanh, 3), bin(opset.Add, 4, 2)}, []int{5}, true, []int{0}},
		{"x second, scalars first", []array.DType{f32, f32}, []bool{true, false},
			[]fused.Instr{bin(opset.Sub, 0, 1), un(opset.Exp, 2), bin(opset.Div, 0, 3)}, []int{4}, true, []int{1}},
		{"a product of x taken in last", []array.DType{f32, f32}, []bool{false, true},
			[]fused.Instr{bin(opset.Mul, 0, 1), un(opset.Square, 0), bin(opset.Mul, 2, 3)}, []int{4}, true, []int{0}},
		{"two inputs that are not scalars", []array.DType{f32, f32, f32}, []bool{false, false, true},
			[]fused.Instr{bin(opset.Mul, 0, 1), un(opset.Tanh, 3), bin(opset.Add, 4, 2)}, []int{5}, true, []int{0, 1}},
		{"a product of the second input", []array.DType{f32, f32, f32}, []bool{false, true, false},
			[]fused.Instr{bin(opset.Mul, 1, 2), un(opset.Exp, 0), bin(opset.Sub, 3, 4)}, []int{5}, true, []int{0, 2}},
		{"nine inputs that are not scalars", slices.Repeat([]array.DType{f32}, 9), make([]bool, 9),
			[]fused.Instr{bin(opset.Add, 0, 1), bin(opset.Add, 9, 2), bin(opset.Add, 10, 3), bin(opset.Add, 11, 4), bin(opset.Add, 12, 5),
				bin(opset.Add, 13, 6), bin(opset.Add, 14, 7), bin(opset.Add, 15, 8)}, []int{16}, false, nil},
		{"a result read twice", []array.DType{f32}, []bool{false},
			[]fused.Instr{un(opset.Exp, 0), bin(opset.Mul, 1, 1)}, []int{2}, true, []int{0}},
		{"two outputs", []array.DType{f32}, []bool{false},
			[]fused.Instr{un(opset.Exp, 0), un(opset.Tanh, 1)}, []int{1, 2}, false, nil},
		{"an intermediate output", []array.DType{f32}, []bool{false},
			[]fused.Instr{un(opset.Exp, 0), un(opset.Tanh, 1)}, []int{1}, true, []int{0}},
		{"nine results saved at once", []array.DType{f32}, []bool{false}, live(9), []int{17}, false, nil},
		{"eight results saved at once", []array.DType{f32}, []bool{false}, live(8), []int{15}, true, []int{0}},
		{"a function without a chain kernel", []array.DType{f32}, []bool{false},
			[]fused.Instr{un(opset.Sin, 0)}, []int{1}, false, nil},
		{"float64", []array.DType{array.Float64}, []bool{false},
			[]fused.Instr{{Kind: fused.Unary, Op: uint8(opset.Exp), Args: []int{0}, DType: array.Float64}}, []int{1}, false, nil},
	} {
		c := newInterp(fused.New(tc.in, tc.instrs, tc.outputs))
		sc := make([][]byte, len(tc.in))
		for i, s := range tc.scalars {
			if s {
				sc[i] = one
			}
		}
		ch, tiles := c.chainOf(sc)
		if (ch != nil) != tc.chain || !slices.Equal(tiles, tc.tiles) {
			t.Errorf("%s: chain %v over inputs %v, want %v over %v", tc.name, ch != nil, tiles, tc.chain, tc.tiles)
		}
	}
}

// TestChainFor wants the chain of the last call back for the same scalar
// inputs with the same values, and a new one for other values or other
// scalar inputs.
func TestChainFor(t *testing.T) {
	if newChain() == nil {
		t.Skip("no chain kernel (AVX-512)")
	}
	f32 := array.Float32
	c := newInterp(fused.New([]array.DType{f32, f32}, []fused.Instr{
		{Kind: fused.Binary, Op: uint8(opset.Mul), Args: []int{0, 1}, DType: f32},
		{Kind: fused.Unary, Op: uint8(opset.Tanh), Args: []int{2}, DType: f32},
	}, []int{3}))
	one, two := []byte{0, 0, 0x80, 0x3f}, []byte{0, 0, 0, 0x40}
	first, _ := c.chainFor([][]byte{nil, one})
	again, _ := c.chainFor([][]byte{nil, slices.Clone(one)})
	other, _ := c.chainFor([][]byte{nil, two})
	both, tiles := c.chainFor([][]byte{nil, nil})
	switch {
	case first == nil || first != again:
		t.Errorf("the same scalar gave chains %p and %p, want one", first, again)
	case other == nil || other == first:
		t.Errorf("another scalar gave chain %p, want a new one (not %p)", other, first)
	case both == nil || both == first || !slices.Equal(tiles, []int{0, 1}):
		t.Errorf("two inputs that are not scalars gave chain %p over %v, want a new one over both", both, tiles)
	}
}
