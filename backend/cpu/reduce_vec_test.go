package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fathom-go/fathom/internal/opset"
)

// redVecInput returns n float32s drawn, at random, from a few values (so
// that ties and signed zeros meet) or uniformly, with ±Inf, and nan NaNs
// at random positions.
func redVecInput(r *rand.Rand, n, nan int) []float32 {
	few := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 2.5, float32(math.Inf(1)), float32(math.Inf(-1))}
	x := make([]float32, n)
	for i := range x {
		if r.IntN(4) == 0 {
			x[i] = few[r.IntN(len(few))]
		} else {
			x[i] = r.Float32()*200 - 100
		}
	}
	for range nan {
		if n > 0 {
			x[r.IntN(n)] = float32(math.NaN())
		}
	}
	return x
}

func sameReduced(a, b float32) bool { return a == b || a != a && b != b }

// TestVecReduce compares the float32 Max and Min runs, in every
// implementation, and the run ordKernel picks, with reduce.go's Go loops
// on random data with and without NaNs, at every length to 300 and some
// large ones, from unaligned starts.
func TestVecReduce(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	names, impls := vecImplsUnderTest()
	lengths := []int{1000, 4099, 1 << 16}
	for n := range 301 {
		lengths = append(lengths, n)
	}
	for _, op := range []opset.ReduceOp{opset.Max, opset.Min} {
		want := maxRun[float32]
		ident := float32(math.Inf(-1))
		if op == opset.Min {
			want, ident = minRun[float32], float32(math.Inf(1))
		}
		runs := map[string]func(float32, []float32) float32{"ordKernel": ordKernel[float32](op).run}
		for i, impl := range impls {
			if impl != nil {
				runs[names[i]] = vecReduceRuns(impl)[op]
			}
		}
		for name, run := range runs {
			for _, n := range lengths {
				for _, nan := range []int{0, 0, 1, 3} {
					off := r.IntN(16)
					x := redVecInput(r, n+off, nan)[off:]
					for _, acc := range []float32{ident, x0(x), float32(math.NaN())} {
						got, exp := run(acc, x), want(acc, x)
						if !sameReduced(got, exp) {
							t.Fatalf("%v/%s: n=%d nans=%d acc=%v: got %v, want %v", op, name, n, nan, acc, got, exp)
						}
					}
				}
			}
		}
	}
}

// x0 is x's first element, or 0 for an empty x: a start that ties.
func x0(x []float32) float32 {
	if len(x) == 0 {
		return 0
	}
	return x[0]
}

// BenchmarkVecReduce times the float32 Max run on one core over 16M
// elements (64 MB, beyond the caches) in every implementation this
// machine runs.
func BenchmarkVecReduce(b *testing.B) {
	x := benchInput(1 << 24)
	names, impls := vecImplsUnderTest()
	for i, impl := range impls {
		run := maxRun[float32]
		if impl != nil {
			run = vecReduceRuns(impl)[opset.Max]
		}
		b.Run("max/"+names[i], func(b *testing.B) {
			b.SetBytes(4 << 24)
			for b.Loop() {
				run(float32(math.Inf(-1)), x)
			}
		})
	}
}

// TestVecSum checks the float32 pairwise sum with the vector kernel at its
// leaves, in every implementation, against the sum in float64: within the
// pairwise bound for each length, from unaligned starts; and the special
// values (NaN, ±Inf, their mixture) as the Go sum gives them. The column
// sums that add rows with the Add kernel are checked the same way.
func TestVecSum(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	names, impls := vecImplsUnderTest()
	lengths := []int{1000, 2048, 2049, 4099, 1 << 16, 1<<20 + 7}
	for n := range 301 {
		lengths = append(lengths, n)
	}
	for i, impl := range impls {
		sum := vecSumFunc(impl)
		if sum == nil {
			if impl != nil {
				t.Fatalf("%s: no sum kernel", names[i])
			}
			continue
		}
		for _, n := range lengths {
			off := r.IntN(16)
			x := make([]float32, n+off)
			for j := range x {
				x[j] = r.Float32()*2 - 0.5
			}
			x = x[off:]
			var exact, abs float64
			for _, v := range x {
				exact += float64(v)
				abs += math.Abs(float64(v))
			}
			got := sum(x)
			// pairwise: about (32 + log2 n) roundings on the sum of |x|
			bound := (40 + math.Log2(float64(n)+1)) * 0x1p-24 * abs
			if d := math.Abs(float64(got) - exact); d > bound {
				t.Errorf("%s: sum of %d = %v, want %v (error %g > %g)", names[i], n, got, exact, d, bound)
			}
		}
		for _, special := range [][]float32{{float32(math.NaN())}, {float32(math.Inf(1))}, {float32(math.Inf(-1))}, {float32(math.Inf(1)), float32(math.Inf(-1))}} {
			x := make([]float32, 300)
			for j, v := range special {
				x[100+97*j] = v
			}
			want := pairwiseSum(x)
			if got := sum(x); !sameReduced(got, want) {
				t.Errorf("%s: sum with %v = %v, want %v", names[i], special, got, want)
			}
		}
	}
	k := numKernel[float32](opset.Sum)
	for _, w := range []int{3, 64, 100} {
		const rows = 7
		x := make([]float32, rows*(w+5))
		for j := range x {
			x[j] = float32(j%13) - 6.25
		}
		acc := make([]float32, w)
		k.vec(acc, x, 2, rows, w+5)
		for c := range w {
			var want float32
			for r := range rows {
				want += x[2+r*(w+5)+c]
			}
			if acc[c] != want {
				t.Fatalf("width %d: column %d sums to %v, want %v", w, c, acc[c], want)
			}
		}
	}
}
