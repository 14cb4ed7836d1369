package compile

import (
	"slices"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
)

// TestChainOf checks which programs run as a cpu.Chain: those over one
// float32 input and scalars where each instruction takes the last one's
// result, with x, a scalar or a product of x and a scalar beside it.
func TestChainOf(t *testing.T) {
	if cpu.NewChain() == nil {
		t.Skip("no chain kernel (AVX-512)")
	}
	f32 := array.Float32
	un := func(op cpu.UnaryOp, a int) Instr {
		return Instr{Kind: KindUnary, Op: uint8(op), Args: []int{a}, DType: f32}
	}
	bin := func(op cpu.BinaryOp, a, b int) Instr {
		return Instr{Kind: KindBinary, Op: uint8(op), Args: []int{a, b}, DType: f32}
	}
	one := []byte{0, 0, 0x80, 0x3f} // 1.0
	for _, tc := range []struct {
		name    string
		in      []array.DType
		scalars []bool // which inputs are one-element in the call
		instrs  []Instr
		outputs []int
		chain   bool
		x       int
	}{
		{"tanh of a scaled x plus one", []array.DType{f32, f32, f32}, []bool{false, true, true},
			[]Instr{bin(cpu.Mul, 0, 1), un(cpu.Tanh, 3), bin(cpu.Add, 4, 2)}, []int{5}, true, 0},
		{"x second, scalars first", []array.DType{f32, f32}, []bool{true, false},
			[]Instr{bin(cpu.Sub, 0, 1), un(cpu.Exp, 2), bin(cpu.Div, 0, 3)}, []int{4}, true, 1},
		{"a product of x taken in last", []array.DType{f32, f32}, []bool{false, true},
			[]Instr{bin(cpu.Mul, 0, 1), un(cpu.Square, 0), bin(cpu.Mul, 2, 3)}, []int{4}, true, 0},
		{"two inputs that are not scalars", []array.DType{f32, f32, f32}, []bool{false, false, true},
			[]Instr{bin(cpu.Mul, 0, 1), un(cpu.Tanh, 3), bin(cpu.Add, 4, 2)}, []int{5}, false, 0},
		{"a result read twice", []array.DType{f32}, []bool{false},
			[]Instr{un(cpu.Exp, 0), bin(cpu.Mul, 1, 1)}, []int{2}, false, 0},
		{"two outputs", []array.DType{f32}, []bool{false},
			[]Instr{un(cpu.Exp, 0), un(cpu.Tanh, 1)}, []int{1, 2}, false, 0},
		{"an intermediate output", []array.DType{f32}, []bool{false},
			[]Instr{un(cpu.Exp, 0), un(cpu.Tanh, 1)}, []int{1}, false, 0},
		{"a product of x left over", []array.DType{f32, f32}, []bool{false, true},
			[]Instr{bin(cpu.Mul, 0, 1), un(cpu.Exp, 0)}, []int{3}, false, 0},
		{"a function without a chain kernel", []array.DType{f32}, []bool{false},
			[]Instr{un(cpu.Sin, 0)}, []int{1}, false, 0},
		{"float64", []array.DType{array.Float64}, []bool{false},
			[]Instr{{Kind: KindUnary, Op: uint8(cpu.Exp), Args: []int{0}, DType: array.Float64}}, []int{1}, false, 0},
	} {
		c := newCompiled(tc.in, tc.instrs, tc.outputs)
		sc := make([][]byte, len(tc.in))
		for i, s := range tc.scalars {
			if s {
				sc[i] = one
			}
		}
		ch, x := c.chainOf(sc)
		if (ch != nil) != tc.chain || tc.chain && x != tc.x {
			t.Errorf("%s: chain %v with x = r%d, want %v with r%d", tc.name, ch != nil, x, tc.chain, tc.x)
		}
	}
}

// TestChainFor wants the chain of the last call back for the same scalar
// inputs with the same values, and a new one otherwise.
func TestChainFor(t *testing.T) {
	if cpu.NewChain() == nil {
		t.Skip("no chain kernel (AVX-512)")
	}
	f32 := array.Float32
	c := newCompiled([]array.DType{f32, f32}, []Instr{
		{Kind: KindBinary, Op: uint8(cpu.Mul), Args: []int{0, 1}, DType: f32},
		{Kind: KindUnary, Op: uint8(cpu.Tanh), Args: []int{2}, DType: f32},
	}, []int{3})
	one, two := []byte{0, 0, 0x80, 0x3f}, []byte{0, 0, 0, 0x40}
	first, _ := c.chainFor([][]byte{nil, one})
	again, _ := c.chainFor([][]byte{nil, slices.Clone(one)})
	other, _ := c.chainFor([][]byte{nil, two})
	none, _ := c.chainFor([][]byte{nil, nil})
	switch {
	case first == nil || first != again:
		t.Errorf("the same scalar gave chains %p and %p, want one", first, again)
	case other == nil || other == first:
		t.Errorf("another scalar gave chain %p, want a new one (not %p)", other, first)
	case none != nil:
		t.Error("two inputs that are not scalars gave a chain")
	}
}
