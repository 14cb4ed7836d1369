package compile

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/ops"
)

// TestChainOf checks which programs run as a cpu.Chain: those over float32
// inputs and scalars where each instruction takes the last one's result,
// with an input, a scalar or a product of an input and a scalar beside
// it, and which inputs the chain reads.
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
	// live(n) is n functions of x, then their sum: n values saved at
	// once, the last in the accumulator when the sum starts; its output
	// is r(2n-1)
	live := func(n int) []Instr {
		var p []Instr
		for range n {
			p = append(p, un(cpu.Exp, 0))
		}
		p = append(p, bin(cpu.Add, 1, 2))
		for r := 3; r <= n; r++ {
			p = append(p, bin(cpu.Add, len(p), r))
		}
		return p
	}
	for _, tc := range []struct {
		name    string
		in      []array.DType
		scalars []bool // which inputs are one-element in the call
		instrs  []Instr
		outputs []int
		chain   bool
		tiles   []int
	}{
		{"tanh of a scaled x plus one", []array.DType{f32, f32, f32}, []bool{false, true, true},
			[]Instr{bin(cpu.Mul, 0, 1), un(cpu.Tanh, 3), bin(cpu.Add, 4, 2)}, []int{5}, true, []int{0}},
		{"x second, scalars first", []array.DType{f32, f32}, []bool{true, false},
			[]Instr{bin(cpu.Sub, 0, 1), un(cpu.Exp, 2), bin(cpu.Div, 0, 3)}, []int{4}, true, []int{1}},
		{"a product of x taken in last", []array.DType{f32, f32}, []bool{false, true},
			[]Instr{bin(cpu.Mul, 0, 1), un(cpu.Square, 0), bin(cpu.Mul, 2, 3)}, []int{4}, true, []int{0}},
		{"two inputs that are not scalars", []array.DType{f32, f32, f32}, []bool{false, false, true},
			[]Instr{bin(cpu.Mul, 0, 1), un(cpu.Tanh, 3), bin(cpu.Add, 4, 2)}, []int{5}, true, []int{0, 1}},
		{"a product of the second input", []array.DType{f32, f32, f32}, []bool{false, true, false},
			[]Instr{bin(cpu.Mul, 1, 2), un(cpu.Exp, 0), bin(cpu.Sub, 3, 4)}, []int{5}, true, []int{0, 2}},
		{"nine inputs that are not scalars", slices.Repeat([]array.DType{f32}, 9), make([]bool, 9),
			[]Instr{bin(cpu.Add, 0, 1), bin(cpu.Add, 9, 2), bin(cpu.Add, 10, 3), bin(cpu.Add, 11, 4), bin(cpu.Add, 12, 5),
				bin(cpu.Add, 13, 6), bin(cpu.Add, 14, 7), bin(cpu.Add, 15, 8)}, []int{16}, false, nil},
		{"a result read twice", []array.DType{f32}, []bool{false},
			[]Instr{un(cpu.Exp, 0), bin(cpu.Mul, 1, 1)}, []int{2}, true, []int{0}},
		{"two outputs", []array.DType{f32}, []bool{false},
			[]Instr{un(cpu.Exp, 0), un(cpu.Tanh, 1)}, []int{1, 2}, false, nil},
		{"an intermediate output", []array.DType{f32}, []bool{false},
			[]Instr{un(cpu.Exp, 0), un(cpu.Tanh, 1)}, []int{1}, true, []int{0}},
		{"nine results saved at once", []array.DType{f32}, []bool{false}, live(9), []int{17}, false, nil},
		{"eight results saved at once", []array.DType{f32}, []bool{false}, live(8), []int{15}, true, []int{0}},
		{"a function without a chain kernel", []array.DType{f32}, []bool{false},
			[]Instr{un(cpu.Sin, 0)}, []int{1}, false, nil},
		{"float64", []array.DType{array.Float64}, []bool{false},
			[]Instr{{Kind: KindUnary, Op: uint8(cpu.Exp), Args: []int{0}, DType: array.Float64}}, []int{1}, false, nil},
	} {
		c := newCompiled(tc.in, tc.instrs, tc.outputs)
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

// TestRandomChains compiles random programs over two inputs, whose
// operations (every function of the chain kernel, and arithmetic with an
// input, a scalar or an input times a scalar on either side) take the last
// result or, now and then, an earlier one, which the chain saves. It
// wants nearly all of them to run as chains (a few may need more slots
// than there are), and all to give what the ops give one at a time, bit
// for bit (NaNs alike), over one element, a few tiles, and streamed.
func TestRandomChains(t *testing.T) {
	if cpu.NewChain() == nil {
		t.Skip("no chain kernel (AVX-512)")
	}
	unary := []func(*array.Array) *array.Array{ops.Neg, ops.Square, ops.Exp, ops.Expm1, ops.Log, ops.Log1p, ops.Tanh, ops.Sigmoid, ops.Erf}
	binary := []func(a, b *array.Array) *array.Array{ops.Add, ops.Sub, ops.Mul, ops.Div, ops.Maximum, ops.Minimum}
	const programs = 200
	chains := 0
	for seed := range uint64(programs) {
		steps := 2 + int(seed%13)
		prog := func(in ...*array.Array) []*array.Array {
			r := rand.New(rand.NewPCG(seed, 8))
			vals := []*array.Array{in[0], in[1]}
			// pick returns the last value, or now and then another
			pick := func() *array.Array {
				if r.IntN(3) == 0 {
					return vals[r.IntN(len(vals))]
				}
				return vals[len(vals)-1]
			}
			for range steps {
				if r.IntN(3) == 0 {
					vals = append(vals, unary[r.IntN(len(unary))](pick()))
					continue
				}
				var o *array.Array
				switch r.IntN(3) {
				case 0:
					o = pick()
				case 1:
					o = array.Scalar(float32(r.Float64()*4 - 2))
				default:
					o = ops.MulScalar(in[r.IntN(2)], r.Float64()*2-1)
				}
				acc := pick()
				if op := binary[r.IntN(len(binary))]; r.IntN(2) == 0 {
					vals = append(vals, op(acc, o))
				} else {
					vals = append(vals, op(o, acc))
				}
			}
			return []*array.Array{vals[len(vals)-1]}
		}
		sizes := []int{1, 3*tileElems + 5}
		r := rand.New(rand.NewPCG(seed, 9))
		chained := true
		for j, n := range append(sizes, 2*tileElems+7) {
			xs, ys := make([]float32, n), make([]float32, n)
			for i := range xs {
				xs[i], ys[i] = float32(r.Float64()*6-3), float32(r.Float64()*6-3)
			}
			x, y := array.FromSlice(xs, n), array.FromSlice(ys, n)
			old := streamBytes
			if j == len(sizes) {
				streamBytes = 0
			}
			f := Compile(prog)
			got := f.Call(x, y)[0]
			program := ""
			if c, ok := got.Primitive().(*Compiled); ok && n > 1 {
				sc := make([][]byte, len(got.Inputs()))
				for i, in := range got.Inputs() {
					if in.Size() == 1 {
						sc[i] = make([]byte, 4)
					}
				}
				ch, _ := c.chainOf(sc)
				chained = chained && ch != nil
				program = c.Program()
			}
			err := got.Eval()
			streamBytes = old
			f.Release()
			if err != nil {
				t.Fatal(err)
			}
			gv, _ := array.ToSlice[float32](got)
			wv, _ := array.ToSlice[float32](prog(x, y)[0])
			for i := range wv {
				if math.Float32bits(gv[i]) != math.Float32bits(wv[i]) && !(gv[i] != gv[i] && wv[i] != wv[i]) {
					t.Fatalf("seed %d, %d elements (streamed %v), [%d] = f(%g, %g): %g, want %g\n%s", seed, n, j == len(sizes), i, xs[i], ys[i], gv[i], wv[i], program)
				}
			}
		}
		if chained {
			chains++
		}
	}
	t.Logf("%d of %d programs ran as chains", chains, programs)
	if chains < programs*9/10 {
		t.Errorf("%d of %d programs ran as chains, want nine in ten", chains, programs)
	}
}
