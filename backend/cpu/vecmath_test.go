package cpu

import (
	"flag"
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/opset"
)

var vecStride = flag.Uint64("vecmath.stride", 0,
	"test the vector math functions on every n-th float32 bit pattern (1: all of them; "+
		"default 997, or 9973 with -short or -race)")

// sweepStride returns the stride of TestVecMathSweep. The sweep's cost is
// all arithmetic, which the race detector slows tenfold while having
// nothing to find in it, so that build sweeps more coarsely.
func sweepStride() uint64 {
	if *vecStride > 0 {
		return *vecStride
	}
	if testing.Short() {
		return 9973
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" && s.Value == "true" {
				return 9973
			}
		}
	}
	return 997
}

// vecRef describes one vectorised function: its float64 reference and
// the largest error allowed, in ulps of the float32 result.
var vecRef = [numVecOps]struct {
	name   string
	ref    func(float64) float64
	maxULP float64
}{
	vecExp:     {"exp", math.Exp, 1},
	vecExpm1:   {"expm1", math.Expm1, 1.5},
	vecLog:     {"log", math.Log, 1},
	vecLog1p:   {"log1p", math.Log1p, 1.5},
	vecTanh:    {"tanh", math.Tanh, 1},
	vecSigmoid: {"sigmoid", func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }, 2.5},
	vecErf:     {"erf", math.Erf, 1.25},
	vecSin:     {"sin", math.Sin, 1.5},
	vecCos:     {"cos", math.Cos, 1.5},
	vecSqrt:    {"sqrt", math.Sqrt, 0.5},
}

// vecSpecial are inputs every function is checked on besides the sweep:
// signed zeros, infinities, NaN, the ends of the normal and subnormal
// ranges, and each function's thresholds with their neighbours.
func vecSpecial() []float32 {
	base := []float32{
		0, 1, 2, 0.5, math.MaxFloat32, math.SmallestNonzeroFloat32, 0x1p-126, 0x1p-127, 0x1.fffffcp-127,
		float32(math.Inf(1)), expLo, expHi, 88.72283, 88.72284, 87.33654, 103.27893, 103.97208, -expm1Lo,
		17.32868, tinyArg, tanhMax, 9.01, 0x1p-4, 0.09375, erfSmall, erfHi, 3.9192, sinCosMax, 1e5, 1e10, 1e30, math.Pi / 2,
		math.Pi, 3 * math.Pi / 2, 2 * math.Pi, 1e4 * math.Pi, 0.7071067, 1.4142135, 1e-5, 1e-10,
		// the float32s below sinCosMax relatively nearest a multiple of π/2
		52516.43359375, 56993.203125, 48039.6640625, 8.4e-30, 1e-45,
	}
	var out []float32
	for _, v := range base {
		b := math.Float32bits(v)
		for _, u := range []uint32{b - 1, b, b + 1} {
			x := math.Float32frombits(u)
			out = append(out, x, -x)
		}
	}
	return append(out, float32(math.NaN()), -float32(math.NaN()))
}

// ulpErr returns the error of got against the exact value want in ulps of
// the float32 nearest want, and whether got is acceptable at all: NaN for
// NaN, the same infinity, and a zero of the same sign for an exact zero.
func ulpErr(got float32, want float64) (float64, bool) {
	switch {
	case math.IsNaN(want):
		return 0, got != got
	case got != got:
		return math.Inf(1), false
	case want == 0 && got == 0:
		return 0, math.Signbit(float64(got)) == math.Signbit(want)
	case math.IsInf(float64(got), 0):
		return 0, float64(got) == float64(float32(want))
	}
	// the ulp is 2^(e-23) for |want| in [2^e, 2^(e+1)), e >= -126
	ulp := 0x1p-149
	if a := math.Abs(want); a >= 0x1p-126 {
		ulp = math.Float64frombits(math.Float64bits(min(a, math.MaxFloat32))&(0x7ff<<52) - 23<<52)
	}
	return math.Abs(float64(got)-want) / ulp, true
}

// vecImplsUnderTest are the kernel sets this machine runs and the
// pure-Go fallback (impl nil), in a fixed order.
func vecImplsUnderTest() (names []string, impls []*vecImpl) {
	for _, impl := range asmImpls() {
		names, impls = append(names, impl.name), append(impls, &impl)
	}
	return append(names, "Go"), append(impls, nil)
}

// TestVecMathSweep compares every function, in every implementation,
// with float64 math on every -vecmath.stride'th float32 bit pattern and
// the special values, and logs the largest errors.
func TestVecMathSweep(t *testing.T) {
	stride := sweepStride()
	special := vecSpecial()
	names, impls := vecImplsUnderTest()
	var mu sync.Mutex
	var report []string
	t.Run("op", func(t *testing.T) {
		for op := range numVecOps {
			r := vecRef[op]
			t.Run(r.name, func(t *testing.T) {
				t.Parallel()
				worst, args := vecCheck(t, names, impls, op, stride, special)
				line := fmt.Sprintf("%-8s", r.name)
				for i, name := range names {
					line += fmt.Sprintf("  %s %.3f at %g", name, worst[i], args[i])
					if worst[i] > r.maxULP {
						t.Errorf("%s: max error %.3f ulp at %g (%#08x), want <= %g",
							name, worst[i], args[i], math.Float32bits(args[i]), r.maxULP)
					}
				}
				mu.Lock()
				report = append(report, line)
				mu.Unlock()
			})
		}
	})
	slices.Sort(report)
	t.Logf("max error in ulps, every %d-th float32 and special values:\n%s", stride, strings.Join(report, "\n"))
}

// vecCheck runs op in every implementation over the sweep, a block at a
// time, and returns each one's largest error and its argument.
func vecCheck(t *testing.T, names []string, impls []*vecImpl, op vecOp, stride uint64, special []float32) (worst []float64, args []float32) {
	ref := vecRef[op].ref
	const block = 1 << 14
	src, want, got := make([]float32, 0, block), make([]float64, block), make([]float32, block)
	worst, args = make([]float64, len(impls)), make([]float32, len(impls))
	nfail := 0
	check := func() {
		for i, x := range src {
			want[i] = ref(float64(x))
		}
		for j, impl := range impls {
			d := got[:len(src)]
			vecApply(impl, op, d, src)
			for i, x := range src {
				e, ok := ulpErr(d[i], want[i])
				if !ok {
					if nfail++; nfail <= 5 {
						t.Errorf("%s: %s(%g [%#08x]) = %g [%#08x], want %g", names[j], vecRef[op].name,
							x, math.Float32bits(x), d[i], math.Float32bits(d[i]), want[i])
					}
					continue
				}
				if e > worst[j] {
					worst[j], args[j] = e, x
				}
			}
		}
		src = src[:0]
	}
	for b := uint64(0); b < 1<<32; b += stride {
		src = append(src, math.Float32frombits(uint32(b)))
		if len(src) == block {
			check()
		}
	}
	src = append(src, special...)
	check()
	if nfail > 5 {
		t.Errorf("%d failures in all", nfail)
	}
	return worst, args
}

// TestVecMathLayout checks that results do not depend on the length or
// alignment of the slices, on where an element sits (body, tail, a vector
// handed back to Go), or on dst being src.
func TestVecMathLayout(t *testing.T) {
	var in []float32
	for i := range 300 {
		v := float32(i)*0.37 - 50
		if i%41 == 7 {
			v = 1e9 + float32(i) // beyond sinCosMax
		}
		if i%53 == 11 {
			v = float32(math.NaN())
		}
		in = append(in, v)
	}
	names, impls := vecImplsUnderTest()
	for k, impl := range impls {
		name := names[k]
		for op := range numVecOps {
			f := vecScalar[op]
			want := make([]float32, len(in))
			vecApply(impl, op, want, in)
			for i, x := range in {
				// the kernels and the fallback agree to the last bit or so
				if e, ok := ulpErr(want[i], float64(f(x))); !ok || e > 1 {
					t.Errorf("%s/%s(%g) = %g, the Go fallback gives %g", name, vecRef[op].name, x, want[i], f(x))
				}
			}
			for lo := range 20 {
				for n := range 40 {
					got := make([]float32, n)
					vecApply(impl, op, got, in[lo:lo+n])
					same := append([]float32(nil), in[lo:lo+n]...)
					vecApply(impl, op, same, same)
					for i := range n {
						w := math.Float32bits(want[lo+i])
						if math.Float32bits(got[i]) != w && !(got[i] != got[i] && want[lo+i] != want[lo+i]) {
							t.Fatalf("%s/%s over in[%d:%d]: element %d = %g, want %g", name, vecRef[op].name, lo, lo+n, i, got[i], want[lo+i])
						}
						if math.Float32bits(same[i]) != math.Float32bits(got[i]) && !(same[i] != same[i] && got[i] != got[i]) {
							t.Fatalf("%s/%s in place over in[%d:%d]: element %d = %g, want %g", name, vecRef[op].name, lo, lo+n, i, same[i], got[i])
						}
					}
				}
			}
		}
	}
}

// TestVecMathStream checks that vecApplyStream gives vecApply's results
// to the last bit, at every alignment of dst to the vector and every
// length up to a few vectors, with vectors the kernels hand back to Go
// (sin and cos beyond sinCosMax), and that the functions meant to stream
// have the kernels to (see the vecmath generator's fn.stream).
func TestVecMathStream(t *testing.T) {
	in := append(vecSpecial(), benchInput(200)...)
	for i := 3; i < len(in); i += 37 {
		in[i] = 1e9 + float32(i) // beyond sinCosMax
	}
	for _, impl := range asmImpls() {
		streams := 0
		for op := range numVecOps {
			if impl.kernelsNT[op] == nil {
				continue
			}
			streams++
			want := make([]float32, len(in))
			vecApply(&impl, op, want, in)
			buf := make([]float32, len(in)+32)
			for lo := range 16 {
				for _, n := range []int{0, 1, 15, 16, 17, 40, 100, len(in)} {
					// got starts lo elements past a 64-byte boundary
					a := uintptr(unsafe.Pointer(&buf[0]))
					got := buf[int(-a%64/4)+lo:][:n]
					clear(got)
					vecApplyStream(&impl, op, got, in[:n])
					storeFence()
					for i := range n {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
							t.Fatalf("%s/%s streamed %d elements, %d past alignment: element %d = %g, want %g", impl.name, vecRef[op].name, n, lo, i, got[i], want[i])
						}
					}
				}
			}
		}
		if streams != 7 {
			t.Errorf("%s streams %d functions, want 7 (exp, expm1, tanh, sigmoid, sin, cos, sqrt)", impl.name, streams)
		}
	}
}

// TestUnaryStream runs Unary on results at least streamFrom bytes large:
// the functions with streaming kernels take that path, over a 2-D result
// that starts off a vector boundary, and give the ordinary path's values;
// the others, and strided operands, keep to the ordinary path.
func TestUnaryStream(t *testing.T) {
	if vecBest == nil {
		t.Skip("no vector kernels")
	}
	const rows, cols, off = 37, 53, 3
	x := append(make([]float32, off), benchInput(rows*cols)...)
	x[off+100] = 1e9 // beyond sinCosMax
	in := ewView(x, array.Float32, []int{rows, cols}, []int{cols, 1}, off)
	newOut := func() (Buf, []float32) {
		o := make([]float32, rows*cols+off)
		return ewView(o, array.Float32, []int{rows, cols}, []int{cols, 1}, off), o
	}
	defer func(v int) { streamFrom = v }(streamFrom)
	for op, v := range vecUnary {
		want, w := newOut()
		streamFrom = 1 << 62
		if err := Unary(op, want, in); err != nil {
			t.Fatal(err)
		}
		streamFrom = 4 * rows * cols
		probe, _ := newOut()
		if streams := streamUnary(v, probe, in); streams != (vecBest.kernelsNT[v] != nil) {
			t.Errorf("%v: streamed %v", op, streams)
		}
		got, g := newOut()
		if err := Unary(op, got, in); err != nil {
			t.Fatal(err)
		}
		for i := range g {
			if math.Float32bits(g[i]) != math.Float32bits(w[i]) {
				t.Fatalf("%v: element %d = %g, want %g", op, i, g[i], w[i])
			}
		}
		strided := in
		strided.Shape, strided.Strides = []int{rows, cols / 2}, []int{cols, 2}
		half := Buf{Data: got.Data, DType: array.Float32, Shape: []int{rows, cols / 2}, Strides: []int{cols / 2, 1}}
		if streamUnary(v, half, strided) {
			t.Errorf("%v: streamed a strided operand", op)
		}
	}
}

// TestBinaryStream runs float32 arithmetic on results at least streamFrom
// bytes large, which store around the caches: over a 2-D result that
// starts off a vector boundary, with a second operand that is a matrix, a
// row broadcast down it, or a scalar, both ways round, they give the
// ordinary path's values.
func TestBinaryStream(t *testing.T) {
	if vecBest == nil {
		t.Skip("no vector kernels")
	}
	const rows, cols, off = 37, 53, 3
	x := append(make([]float32, off), benchInput(rows*cols)...)
	y := append(make([]float32, off), benchInput(2 * rows * cols)[rows*cols:]...)
	y[off+5] = 0 // a division by zero
	shape := []int{rows, cols}
	mat := func(s []float32) Buf { return ewView(s, array.Float32, shape, []int{cols, 1}, off) }
	operands := map[string]Buf{
		"matrix": mat(y),
		"row":    ewView(y, array.Float32, shape, []int{0, 1}, off),
		"scalar": ewView(y, array.Float32, shape, []int{0, 0}, off),
	}
	defer func(v int) { streamFrom = v }(streamFrom)
	for _, op := range []opset.BinaryOp{opset.Add, opset.Sub, opset.Mul, opset.Div, opset.Maximum, opset.Minimum} {
		for name, b := range operands {
			for _, swap := range []bool{false, true} {
				p, q := mat(x), b
				if swap {
					p, q = q, p
				}
				w, g := make([]float32, rows*cols+off), make([]float32, rows*cols+off)
				streamFrom = 1 << 62
				if err := Binary(op, mat(w), p, q); err != nil {
					t.Fatal(err)
				}
				streamFrom = 4 * rows * cols
				if err := Binary(op, mat(g), p, q); err != nil {
					t.Fatal(err)
				}
				for i := range g {
					if math.Float32bits(g[i]) != math.Float32bits(w[i]) && !(g[i] != g[i] && w[i] != w[i]) {
						t.Fatalf("%v with a %s (swapped %v): element %d = %g, want %g", op, name, swap, i, g[i], w[i])
					}
				}
			}
		}
	}
}

// TestVecMathConcurrent runs the kernels from several goroutines, over
// vectors with arguments the kernels hand back to Go too: they keep no
// state.
func TestVecMathConcurrent(t *testing.T) {
	in := make([]float32, 1000)
	for i := range in {
		in[i] = float32(i)*0.01 - 5
		if i%97 == 3 {
			in[i] = 1e20
		}
	}
	want := make([]float32, len(in))
	vecFuncs[vecSin](want, in)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			got := make([]float32, len(in))
			for range 50 {
				vecFuncs[vecSin](got, in)
				for i := range got {
					if got[i] != want[i] {
						t.Errorf("sin(%g) = %g, then %g", in[i], want[i], got[i])
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

// TestUnaryUsesVecMath checks the hooks in unary.go and binary.go: float32
// Unary and Binary, strided and broadcast included, give the vector
// functions' results bit for bit; float16 and bfloat16 give them rounded;
// float64 still gives package math's.
func TestUnaryUsesVecMath(t *testing.T) {
	const n = 100
	x := make([]float32, 2*n)
	for i := range x {
		x[i] = float32(i)*0.11 - 9
	}
	h, bh, d := make([]array.F16, n), make([]array.BF16, n), make([]float64, n)
	for i := range n {
		h[i], bh[i], d[i] = array.NewF16(x[2*i]), array.NewBF16(x[2*i]), float64(x[2*i])
	}
	for op, v := range vecUnary {
		strided := ewView(x, array.Float32, []int{n}, []int{2}, 0)
		got := make([]float32, n)
		if err := Unary(op, ewView(got, array.Float32, []int{n}, []int{1}, 0), strided); err != nil {
			t.Fatal(err)
		}
		// the strided path computes tiles of gathered elements
		want := make([]float32, n)
		for i := range n {
			vecApply(vecBest, v, want[i:i+1], x[2*i:2*i+1])
		}
		gh, gbh, gd := make([]array.F16, n), make([]array.BF16, n), make([]float64, n)
		for _, c := range []struct {
			dt      array.DType
			out, in Buf
		}{
			{array.Float16, ewView(gh, array.Float16, []int{n}, []int{1}, 0), ewView(h, array.Float16, []int{n}, []int{1}, 0)},
			{array.BFloat16, ewView(gbh, array.BFloat16, []int{n}, []int{1}, 0), ewView(bh, array.BFloat16, []int{n}, []int{1}, 0)},
			{array.Float64, ewView(gd, array.Float64, []int{n}, []int{1}, 0), ewView(d, array.Float64, []int{n}, []int{1}, 0)},
		} {
			if err := Unary(op, c.out, c.in); err != nil {
				t.Fatal(err)
			}
		}
		for i := range n {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
				t.Errorf("float32 %v(%g) = %g, want %g", op, x[2*i], got[i], want[i])
			}
			w := []float32{h[i].Float32(), bh[i].Float32()}
			vecApply(vecBest, v, w, w)
			if hw := array.NewF16(w[0]); gh[i] != hw {
				t.Errorf("float16 %v(%v) = %v, want %v", op, h[i], gh[i], hw)
			}
			if bw := array.NewBF16(w[1]); gbh[i] != bw {
				t.Errorf("bfloat16 %v(%v) = %v, want %v", op, bh[i], gbh[i], bw)
			}
			if dw := mathFuncs[op]; op != opset.Sigmoid && math.Float64bits(gd[i]) != math.Float64bits(dw(d[i])) && !math.IsNaN(gd[i]) {
				t.Errorf("float64 %v(%g) = %g, want math's %g", op, d[i], gd[i], dw(d[i]))
			}
		}
	}
	for i, l := range vecArith {
		op, f := opset.BinaryOp(i), l.vv
		if f == nil {
			continue
		}
		y := make([]float32, n)
		if err := Binary(op, ewView(y, array.Float32, []int{n}, []int{1}, 0),
			ewView(x, array.Float32, []int{n}, []int{1}, 0), ewView(x, array.Float32, []int{n}, []int{1}, n)); err != nil {
			t.Fatal(err)
		}
		want := make([]float32, n)
		f(want, x[:n], x[n:])
		for i := range n {
			if math.Float32bits(y[i]) != math.Float32bits(want[i]) {
				t.Errorf("%v(%g, %g) = %g, want %g", op, x[i], x[n+i], y[i], want[i])
			}
		}
	}
}

// TestVecBinary checks the binary kernels of every instruction set this
// machine runs against binary.go's loops, bit for bit, on special values
// (NaN either side, signed zeros, infinities, subnormals) at every
// position of slices of every length up to a few vectors, in place too.
func TestVecBinary(t *testing.T) {
	vals := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 2.5, -3.75, 1e-40, -1e-40, 1e30, -1e30,
		math.MaxFloat32, -math.MaxFloat32, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	var a, b []float32
	for _, x := range vals {
		for _, y := range vals {
			a, b = append(a, x), append(b, y)
		}
	}
	same := func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) || x != x && y != y }
	names, impls := vecImplsUnderTest()
	for k, impl := range impls {
		if impl == nil {
			continue
		}
		for _, nt := range []bool{false, true} {
			loops := vecArithLoops(impl, nt)
			for op := range impl.binary {
				if (loops[op].flush != nil) != nt {
					t.Errorf("%s %v: flush set %v, stores around the caches %v", names[k], op, loops[op].flush != nil, nt)
				}
				want := make([]float32, len(a))
				goBinaryLoop(op)(want, a, b)
				for n := range 70 {
					for _, lo := range []int{0, 1, 3, 7, 150} {
						got := make([]float32, n)
						loops[op].vv(got, a[lo:lo+n], b[lo:lo+n])
						in := append([]float32(nil), a[lo:lo+n]...)
						loops[op].vv(in, in, b[lo:lo+n])
						storeFence()
						for i := range n {
							if !same(got[i], want[lo+i]) || !same(in[i], want[lo+i]) {
								t.Fatalf("%s %v (around the caches %v)(%g, %g) = %g (in place %g), want %g",
									names[k], op, nt, a[lo+i], b[lo+i], got[i], in[i], want[lo+i])
							}
						}
					}
				}
			}
		}
	}
}

// TestVecMathNoAlloc checks that the functions allocate nothing, tails
// included: the fused interpreter calls them on small tiles.
func TestVecMathNoAlloc(t *testing.T) {
	x := make([]float32, 37)
	for i := range x {
		x[i] = float32(i) - 18
	}
	y := make([]float32, len(x))
	for op := range numVecOps {
		if n := testing.AllocsPerRun(10, func() { vecApply(vecBest, op, y, x) }); n != 0 {
			t.Errorf("%s allocates %v times", vecRef[op].name, n)
		}
	}
	if n := testing.AllocsPerRun(10, func() { vecFuncs[vecExp](y, x) }); n != 0 {
		t.Errorf("exp allocates %v times", n)
	}
	// the comparisons, whose lengths leave a tail after the vectors
	m := make([]bool, len(x))
	x64 := make([]float64, len(x))
	k32, k64 := compareKernel[float32](opset.Greater), compareKernel[float64](opset.Less)
	if k32.vs == nil {
		return // no vector kernels: the Go loops have no scalar forms
	}
	for name, f := range map[string]func(){
		"float32 vv": func() { k32.vv(m, x, y) }, "float32 vs": func() { k32.vs(m, x, 1) }, "float32 sv": func() { k32.sv(m, 1, x) },
		"float64 vv": func() { k64.vv(m, x64, x64) }, "float64 vs": func() { k64.vs(m, x64, 1) }, "float64 sv": func() { k64.sv(m, 1, x64) },
	} {
		if n := testing.AllocsPerRun(10, f); n != 0 {
			t.Errorf("comparison %s allocates %v times", name, n)
		}
	}
}
