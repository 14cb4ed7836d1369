package cpu_test

// These tests run the fused programs that package compile makes of
// ordinary ops, and want the results of the ops run one at a time.

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/internal/workload"
	"github.com/fathom-go/fathom/ops"
)

// TestInterpreterMatchesOps runs programs through the CPU interpreter in
// each of its modes (outputs stored in place and streamed, scalar
// operands, a Mul done by its Add, a chain run in registers) and wants the
// results of the same ops run one at a time, bit for bit: fusing must not
// change a rounding.
func TestInterpreterMatchesOps(t *testing.T) {
	const n = 3*cpu.TileElems + 5 // several tiles and a partial one
	xs := make([]float32, n)
	ys := make([]float64, n)
	for i := range xs {
		xs[i] = float32(math.Sin(float64(i))*3 + 1e-3)
		ys[i] = math.Cos(float64(i)) * 7
	}
	x32 := array.FromSlice(xs, n)
	bias := make([]float32, 143)
	for i := range bias {
		bias[i] = float32(i%7) - 3.25
	}
	y64 := array.FromSlice(ys, n)
	x64 := ops.AsType(x32, array.Float64)
	progs := map[string]struct {
		f     func(in ...*array.Array) []*array.Array
		in    []*array.Array
		fused int
		chain bool // runs as a chain where there is the kernel
	}{
		// x*x*x, the product with 0.044715 plus x, and 0.5x times the rest
		"gelu float32": {workload.GELU, []*array.Array{x32}, 3, true},
		"gelu float64": {workload.GELU, []*array.Array{y64}, 3, false},
		// F.gelu's default: 0.5x (1 + erf(x / sqrt 2))
		"gelu erf": {func(in ...*array.Array) []*array.Array {
			e := ops.AddScalar(ops.Erf(ops.MulScalar(in[0], 1/math.Sqrt2)), 1)
			return []*array.Array{ops.Mul(ops.MulScalar(in[0], 0.5), e)}
		}, []*array.Array{x32}, 1, true},
		"softplus": {func(in ...*array.Array) []*array.Array {
			return []*array.Array{ops.Log1p(ops.Exp(in[0]))}
		}, []*array.Array{x32}, 0, true},
		"silu": {func(in ...*array.Array) []*array.Array {
			return []*array.Array{ops.Mul(ops.Sigmoid(in[0]), in[0])}
		}, []*array.Array{x32}, 0, true},
		"sigmoid by hand": {func(in ...*array.Array) []*array.Array {
			one := array.Scalar(float32(1))
			return []*array.Array{ops.Div(one, ops.AddScalar(ops.Exp(ops.Neg(in[0])), 1))}
		}, []*array.Array{x32}, 0, true},
		// a bias added before the activation: the bias's tiles gathered
		// from a row broadcast down the matrix
		"bias tanh": {func(in ...*array.Array) []*array.Array {
			return []*array.Array{ops.MulScalar(ops.Tanh(ops.Add(in[0], in[1])), 0.5)}
		}, []*array.Array{ops.Reshape(x32, 43, 143), array.FromSlice(bias, 143)}, 0, true},
		// GELU of x plus a bias reads that sum four times: it is saved
		"bias gelu": {func(in ...*array.Array) []*array.Array {
			return workload.GELU(ops.Add(in[0], in[1]))
		}, []*array.Array{ops.Reshape(x32, 43, 143), array.FromSlice(bias, 143)}, 3, true},
		"swiglu": {func(in ...*array.Array) []*array.Array {
			return []*array.Array{ops.Mul(ops.Mul(ops.Sigmoid(in[0]), in[0]), in[1])}
		}, []*array.Array{x32, ops.AsType(y64, array.Float32)}, 1, true},
		// x's tiles gathered from a transposed view
		"silu transposed": {func(in ...*array.Array) []*array.Array {
			return []*array.Array{ops.Mul(ops.Sigmoid(in[0]), in[0])}
		}, []*array.Array{ops.Transpose(ops.Reshape(x32, 43, 143))}, 0, true},
		// starts from a product of x, takes in another at the end
		"scaled tanh": {func(in ...*array.Array) []*array.Array {
			t := ops.MulScalar(ops.Tanh(ops.MulScalar(in[0], 2)), 0.5)
			return []*array.Array{ops.Add(t, ops.MulScalar(in[0], 0.25))}
		}, []*array.Array{x32}, 1, true},
		// the second product takes in the first and the Add the third,
		// leaving Square alone: a fused instruction is not fused again,
		// and an Add takes in one product
		"product chain": {func(in ...*array.Array) []*array.Array {
			p := ops.Mul(ops.Mul(in[0], in[1]), in[0])
			return []*array.Array{ops.Add(ops.Mul(p, in[1]), ops.Square(in[1]))}
		}, []*array.Array{x64, y64}, 2, false},
		"square plus": {func(in ...*array.Array) []*array.Array {
			return []*array.Array{ops.Add(in[0], ops.Square(in[1]))}
		}, []*array.Array{x32, ops.AsType(y64, array.Float32)}, 1, true},
		"shared product": {func(in ...*array.Array) []*array.Array {
			p := ops.Mul(in[0], in[1])
			return []*array.Array{ops.Add(p, in[0]), ops.Sub(p, in[1])}
		}, []*array.Array{x64, y64}, 0, false},
		"product both sides": {func(in ...*array.Array) []*array.Array {
			a := ops.Mul(in[0], in[1])
			b := ops.Mul(in[1], in[1])
			return []*array.Array{ops.Add(a, b)}
		}, []*array.Array{x64, y64}, 1, false},
		"mask to float": {func(in ...*array.Array) []*array.Array {
			m := ops.AsType(ops.Greater(in[0], array.Scalar(float32(0.5))), array.Float32)
			return []*array.Array{ops.Mul(m, in[0]), ops.AsType(in[0], array.Float64)}
		}, []*array.Array{x32}, 0, false},
		"scalar left": {func(in ...*array.Array) []*array.Array {
			s := array.Scalar(float32(2.5))
			return []*array.Array{ops.Maximum(ops.Div(s, in[0]), ops.Sub(s, in[0]))}
		}, []*array.Array{x32}, 0, true},
	}
	for name, p := range progs {
		want := p.f(p.in...)
		fused := compile.Fused(p.f, p.in...)
		if len(fused) != 1 {
			t.Fatalf("%s: %d fused groups, want 1", name, len(fused))
		}
		n := cpu.ProductsFused(fused[0].Program())
		if n != p.fused {
			t.Errorf("%s: %d instructions with a product fused in, want %d", name, n, p.fused)
		}
		for _, stream := range []bool{false, true} {
			restore := func() {}
			if stream {
				restore = cpu.SetStreamBytes(0)
			}
			f := compile.Compile(p.f)
			got := f.Call(p.in...)
			if cpu.HasChainKernel() {
				c, ok := got[0].Primitive().(*compile.Compiled)
				if !ok {
					t.Fatalf("%s: output of %T, not of a fused program", name, got[0].Primitive())
				}
				sc := make([][]byte, len(got[0].Inputs()))
				for i, x := range got[0].Inputs() {
					if x.Size() == 1 {
						sc[i] = []byte{0, 0, 0, 0, 0, 0, 0, 0}[:x.DType().Size()]
					}
				}
				if ch := cpu.RunsAsChain(c.Program(), sc); ch != p.chain {
					t.Errorf("%s: runs as a chain %v, want %v", name, ch, p.chain)
				}
			}
			// evaluated before streamBytes is put back: outputs are lazy
			err := array.Eval(got...)
			f.Release()
			restore()
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				a, err := array.ToSlice[float64](ops.AsType(got[i], array.Float64))
				if err != nil {
					t.Fatal(err)
				}
				b, _ := array.ToSlice[float64](ops.AsType(want[i], array.Float64))
				for j := range b {
					if math.Float64bits(a[j]) != math.Float64bits(b[j]) {
						t.Fatalf("%s (streamed %v) output %d [%d] = %v, want %v", name, stream, i, j, a[j], b[j])
					}
				}
			}
		}
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
	if !cpu.HasChainKernel() {
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
		sizes := []int{1, 3*cpu.TileElems + 5}
		r := rand.New(rand.NewPCG(seed, 9))
		chained := true
		for j, n := range append(sizes, 2*cpu.TileElems+7) {
			xs, ys := make([]float32, n), make([]float32, n)
			for i := range xs {
				xs[i], ys[i] = float32(r.Float64()*6-3), float32(r.Float64()*6-3)
			}
			x, y := array.FromSlice(xs, n), array.FromSlice(ys, n)
			restore := func() {}
			if j == len(sizes) {
				restore = cpu.SetStreamBytes(0)
			}
			f := compile.Compile(prog)
			got := f.Call(x, y)[0]
			program := ""
			if c, ok := got.Primitive().(*compile.Compiled); ok && n > 1 {
				sc := make([][]byte, len(got.Inputs()))
				for i, in := range got.Inputs() {
					if in.Size() == 1 {
						sc[i] = make([]byte, 4)
					}
				}
				chained = chained && cpu.RunsAsChain(c.Program(), sc)
				program = c.Program().String()
			}
			err := got.Eval()
			restore()
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
