package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
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
	for _, op := range []ReduceOp{ReduceMax, ReduceMin} {
		want := maxRun[float32]
		ident := float32(math.Inf(-1))
		if op == ReduceMin {
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
			run = vecReduceRuns(impl)[ReduceMax]
		}
		b.Run("max/"+names[i], func(b *testing.B) {
			b.SetBytes(4 << 24)
			for b.Loop() {
				run(float32(math.Inf(-1)), x)
			}
		})
	}
}
