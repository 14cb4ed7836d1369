package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/opset"
)

// argNaive is the index of x's first NaN, else of the first of its
// largest (isMax) or smallest elements.
func argNaive[T float32 | float64](x []T, isMax bool) int {
	for i, v := range x {
		if v != v {
			return i
		}
	}
	best := 0
	for i, v := range x {
		if (isMax && v > x[best]) || (!isMax && v < x[best]) {
			best = i
		}
	}
	return best
}

// argInput returns n float32s for the argument reductions: kind 0 draws
// from a few values (ties, signed zeros, ±Inf) and uniformly, kind 1 is all
// -Inf, kind 2 all +Inf, kind 3 one value; then a NaN is planted at each
// of nans.
func argInput(r *rand.Rand, n, kind int, nans []int) []float32 {
	x := make([]float32, n)
	switch kind {
	case 0:
		copy(x, redVecInput(r, n, 0))
	case 1, 2:
		inf := float32(math.Inf(1))
		if kind == 1 {
			inf = -inf
		}
		for i := range x {
			x[i] = inf
		}
	default:
		for i := range x {
			x[i] = 3
		}
	}
	for _, i := range nans {
		if i < n {
			x[i] = float32(math.NaN())
		}
	}
	return x
}

// argWiden returns x as float64s, each finite one moved by -1e-9, 0 or
// 1e-9 at random: distinct in float64 where they tie in float32, but
// still with ties.
func argWiden(r *rand.Rand, x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
		if !math.IsInf(y[i], 0) {
			y[i] += float64(r.IntN(3)-1) * 1e-9
		}
	}
	return y
}

// TestArgScanVec compares the float32 and float64 line scans, in every
// implementation, with argNaive: every length to 300 and some long ones,
// from unaligned starts, with NaNs planted at random and at every position
// of the shorter lines (the vector tails and the kernel's four-vector
// steps).
func TestArgScanVec(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	names, impls := vecImplsUnderTest()
	lengths := []int{1000, 4099, redPart + 3}
	for n := 1; n <= 300; n++ {
		lengths = append(lengths, n)
	}
	for i, impl := range impls {
		scan32, scan64 := argScanFunc[float32](impl), argScanFunc[float64](impl)
		for _, isMax := range []bool{true, false} {
			check := func(x []float32, off int, what string) {
				t.Helper()
				x32 := x[off:]
				want := argNaive(x32, isMax)
				v, at, nan := scan32(x32, isMax)
				if at != want || nan != (x32[want] != x32[want]) || !sameReduced(v, x32[want]) {
					t.Fatalf("%s max=%v n=%d %s: got (%v, %d, %v), want index %d", names[i], isMax, len(x32), what, v, at, nan, want)
				}
				x64 := argWiden(r, x)[off:]
				want = argNaive(x64, isMax)
				v64, at, nan := scan64(x64, isMax)
				if at != want || nan != (x64[want] != x64[want]) || !(v64 == x64[want] || v64 != v64 && nan) {
					t.Fatalf("%s float64 max=%v n=%d %s: got (%v, %d, %v), want index %d", names[i], isMax, len(x64), what, v64, at, nan, want)
				}
			}
			for _, n := range lengths {
				for kind := range 4 {
					off := r.IntN(16)
					check(argInput(r, n+off, kind, nil), off, fmt.Sprintf("kind %d", kind))
					check(argInput(r, n+off, kind, []int{off + r.IntN(n), off + r.IntN(n)}), off, fmt.Sprintf("kind %d, NaNs", kind))
				}
				if n > 140 {
					continue
				}
				for p := range n {
					check(argInput(r, n, 0, []int{p}), 0, fmt.Sprintf("NaN at %d", p))
					check(argInput(r, n, 3, []int{p, n - 1}), 0, fmt.Sprintf("NaNs at %d and the end", p))
				}
			}
		}
	}
}

// TestArgRowsVec compares the kernels that fold rows into a panel's best
// values and indices with argRow, over widths across the vector tails,
// strides beyond the width and rows with NaNs and ties.
func TestArgRowsVec(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	names, impls := vecImplsUnderTest()
	for i, impl := range impls {
		if impl == nil {
			continue
		}
		for _, isMax := range []bool{true, false} {
			k := impl.argMaxRows
			if !isMax {
				k = impl.argMinRows
			}
			for _, w := range []int{1, 7, 8, 15, 16, 17, 31, 33, 64, 100, 1030} {
				for _, rows := range []int{1, 2, 9, 40} {
					stride := w + r.IntN(5)
					x := argInput(r, stride*(rows+1), r.IntN(4), []int{r.IntN(stride * (rows + 1)), r.IntN(stride * (rows + 1))})
					for j := range x {
						if r.IntN(40) == 0 {
							x[j] = float32(math.NaN())
						}
					}
					best, idx := slices.Clone(x[:w]), make([]int32, w)
					wantB, wantI := slices.Clone(best), slices.Clone(idx)
					for t := 1; t <= rows; t++ {
						argRow(wantB, wantI, x[t*stride:], nil, int32(t), isMax)
					}
					k(best, idx, x[stride:], stride, rows, 1)
					for j := range w {
						if idx[j] != wantI[j] || !sameReduced(best[j], wantB[j]) {
							t.Fatalf("%s max=%v w=%d rows=%d column %d: got (%v, %d), want (%v, %d)", names[i], isMax, w, rows, j, best[j], idx[j], wantB[j], wantI[j])
						}
					}
				}
			}
		}
	}
}

// TestArgReducePaths runs ArgReduce on float32 and float64 matrices along
// both axes, in
// shapes that take every path (lines one at a time, long lines split in
// parts, panels, panels split in row parts) with NaNs and ties planted,
// against argNaive.
func TestArgReducePaths(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	for _, c := range []struct{ rows, cols int }{
		{1, 1}, {3, 17}, {40, 16}, {9, 33}, {300, 15}, {2, 1030}, {1030, 8}, {70, 2100},
		{1, 2*redPart + 5}, {3, 2*redPart + 77}, {20000, 9}, {9000, 17}, {40000, 20}, {64, 1024},
	} {
		n := c.rows * c.cols
		for kind := range 4 {
			var nans []int
			if kind != 2 {
				nans = []int{r.IntN(n), r.IntN(n)}
			}
			x := argInput(r, n, kind, nans)
			x64 := argWiden(r, x)
			for _, in := range []Buf{
				viewOf(x, array.Float32, []int{c.rows, c.cols}, nil, 0),
				viewOf(x64, array.Float64, []int{c.rows, c.cols}, nil, 0),
			} {
				for axis := range 2 {
					for _, op := range []opset.ArgOp{opset.ArgMax, opset.ArgMin} {
						kept := []int{c.rows}
						if axis == 0 {
							kept = []int{c.cols}
						}
						out := rdOut(array.Int32, kept)
						if err := ArgReduce(op, out, in, axis); err != nil {
							t.Fatal(err)
						}
						got := elems[int32](out)
						for j := range kept[0] {
							line := make([]float64, 0, n/kept[0])
							for k := range n / kept[0] {
								at := j*c.cols + k
								if axis == 0 {
									at = k*c.cols + j
								}
								if in.DType == array.Float32 {
									line = append(line, float64(x[at]))
								} else {
									line = append(line, x64[at])
								}
							}
							if want := argNaive(line, op == opset.ArgMax); int(got[j]) != want {
								t.Fatalf("%v %v %dx%d axis %d kind %d: line %d = %d, want %d", op, in.DType, c.rows, c.cols, axis, kind, j, got[j], want)
							}
						}
					}
				}
			}
		}
	}
}

func benchArg(b *testing.B, shape []int, axis int) {
	n := rdSize(shape)
	x := benchInput(n)
	in := viewOf(x, array.Float32, shape, nil, 0)
	kept := slices.Delete(slices.Clone(shape), axis, axis+1)
	out := rdOut(array.Int32, kept)
	b.SetBytes(int64(4 * n))
	for b.Loop() {
		if err := ArgReduce(opset.ArgMax, out, in, axis); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkArgMaxAll16M(b *testing.B) { benchArg(b, []int{1 << 24}, 0) }
func BenchmarkArgMaxAll1M(b *testing.B)  { benchArg(b, []int{1 << 20}, 0) }
func BenchmarkArgMaxRows4K(b *testing.B) { benchArg(b, []int{4096, 4096}, 1) }
func BenchmarkArgMaxCols4K(b *testing.B) { benchArg(b, []int{4096, 4096}, 0) }
func BenchmarkArgMaxRows1K(b *testing.B) { benchArg(b, []int{1024, 1024}, 1) }
func BenchmarkArgMaxCols1K(b *testing.B) { benchArg(b, []int{1024, 1024}, 0) }
