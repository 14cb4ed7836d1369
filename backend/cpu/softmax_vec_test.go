package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fathom-go/fathom/internal/strided"

	"github.com/fathom-go/fathom/array"
)

// smInput returns n float32s in [lo, hi) with, one in every special
// draws (0: none), NaN, ±Inf or a large value.
func smInput(r *rand.Rand, n int, lo, hi float64, special int) []float32 {
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 80, -80, 1e30}
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(lo + r.Float64()*(hi-lo))
		if special > 0 && r.IntN(special) == 0 {
			x[i] = specials[r.IntN(len(specials))]
		}
	}
	return x
}

// TestSmOps32 checks the float32 loops of the softmax family, in every
// implementation, against float64 math: the maximum exactly, the shifted
// exponentials to 2 ulps and their sums to a few float32 ulps, and the
// affine loop exactly, at every length to 300 and some long ones, from
// unaligned starts, with NaN and ±Inf among the inputs and as the shift.
func TestSmOps32(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	names, impls := vecImplsUnderTest()
	lengths := []int{1000, 4099, redPart + 7}
	for n := range 301 {
		lengths = append(lengths, n)
	}
	const ulp, expTol = 0x1p-23, 2.5 * 0x1p-23
	for i, impl := range impls {
		ops := smOps32(impl)
		for _, n := range lengths {
			for _, special := range []int{0, 0, 40} {
				off := r.IntN(16)
				x := smInput(r, n+off, -30, 10, special)[off:]
				name := fmt.Sprintf("%s n=%d special=%d", names[i], n, special)
				if got, want := ops.max(x), smMax(x); !sameReduced(got, want) {
					t.Fatalf("%s: max %v, want %v", name, got, want)
				}
				for _, m := range []float32{smMax(x), 3, float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
					for _, c := range []float32{1, 0.37} {
						o := make([]float32, n+1)
						sum := ops.expScale(o[:n], x, m, c)
						sumOnly := ops.expScale(nil, x, m, c)
						want := 0.0
						for j, v := range x {
							e := math.Exp(float64(v - m))
							want += e
							// 2^-149 more for a result that is subnormal
							if !rdClose(float64(o[j]), e*float64(c), math.Abs(e*float64(c))+0x1p-149/expTol, expTol) {
								t.Fatalf("%s m=%v c=%v: o[%d] = exp(%v-m)*c = %v, want %v", name, m, c, j, v, o[j], e*float64(c))
							}
						}
						if o[n] != 0 {
							t.Fatalf("%s: wrote past the end", name)
						}
						if !rdClose(sum, want, want, 3*ulp) || !rdClose(sumOnly, want, want, 3*ulp) {
							t.Fatalf("%s m=%v: sums %v and %v, want %v", name, m, sum, sumOnly, want)
						}
					}
				}
				for _, abc := range [][3]float32{{0, 0.37, 0}, {2.5, 1, 7.25}, {float32(math.Inf(1)), 1, 0}, {0, 1, float32(math.NaN())}} {
					a, c, b := abc[0], abc[1], abc[2]
					o := make([]float32, n+1)
					ops.affine(o[:n], x, a, c, b)
					for j, v := range x {
						prod := (v - a) * c
						if want := prod - b; !sameReduced(o[j], want) || math.Float32bits(o[j]) != math.Float32bits(want) && want == want {
							t.Fatalf("%s affine(%v, %v, %v): o[%d] = %v, want %v", name, a, c, b, j, o[j], want)
						}
					}
					if o[n] != 0 {
						t.Fatalf("%s: affine wrote past the end", name)
					}
				}
			}
		}
	}
}

// TestSoftmaxF32Paths runs the softmax family on float32 matrices in
// shapes that take every path: lines one at a time (lengths across the
// vector tails), a few long lines split in parts, panels of columns, and
// panels split in row parts; with and without specials, against the
// float64 formulas. Softmax is checked relative to each result, so the
// small probabilities count as much as the large ones; the logarithms
// relative to their magnitude or 1, since log(sum) near a sum of 1 turns
// the sum's relative error into an absolute one.
// Each case also runs on strided input and output (every other element of
// larger buffers), which takes the same path but for the split one (that
// needs contiguous lines) and must give the same bits.
func TestSoftmaxF32Paths(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	kernels := map[smKind]func(out, in Buf, axis int) error{smSoftmax: Softmax, smLogSoftmax: LogSoftmax, smLogSumExp: LogSumExp}
	// strided returns a view of shape over every other element of a new
	// buffer of fill, from the second on.
	strided := func(shape []int, fill float32) ([]float32, Buf) {
		n := rdSize(shape)
		b := make([]float32, 2*n+1)
		for i := range b {
			b[i] = fill
		}
		st := strided.RowMajor(shape)
		for i := range st {
			st[i] *= 2
		}
		return b, viewOf(b, array.Float32, shape, st, 1)
	}
	for _, c := range []struct {
		shape []int
		axis  int
	}{
		{[]int{3, 1}, 1}, {[]int{5, 15}, 1}, {[]int{4, 16}, 1}, {[]int{4, 17}, 1}, {[]int{3, 63}, 1}, {[]int{2, 65}, 1},
		{[]int{40, 300}, 1}, {[]int{1, 2*redPart + 5}, 0}, {[]int{3, 2*redPart + 33}, 1},
		{[]int{9, 20}, 0}, {[]int{300, 33}, 0}, {[]int{70, 2100}, 0}, {[]int{20000, 9}, 0}, {[]int{9000, 17}, 0}, {[]int{40000, 20}, 0}, {[]int{3, 5, 40}, 1},
	} {
		n := rdSize(c.shape)
		split := c.shape[c.axis] >= 2*redPart
		for _, special := range []int{0, 200} {
			x := smInput(r, n, -20, 20, special)
			vals := make([]float64, n)
			for i, v := range x {
				vals[i] = float64(v)
			}
			in := viewOf(x, array.Float32, c.shape, nil, 0)
			xs, inS := strided(c.shape, float32(math.NaN()))
			for i, v := range x {
				xs[1+2*i] = v
			}
			for kind := smSoftmax; kind <= smLogSumExp; kind++ {
				name := fmt.Sprintf("kind %d %v axis %d special %d", kind, c.shape, c.axis, special)
				oshape := c.shape
				want := make([]float64, n)
				if kind == smLogSumExp {
					oshape = slices.Delete(slices.Clone(c.shape), c.axis, c.axis+1)
					want = want[:0]
				}
				rdNaiveLines(c.shape, c.axis, vals, func(line []float64, idx []int) {
					res := rdNaiveSoftmax(kind, line)
					if kind == smLogSumExp {
						want = append(want, res[0])
						return
					}
					for i, v := range res {
						want[idx[i]] = v
					}
				})
				mag := make([]float64, len(want))
				for i, w := range want {
					mag[i] = math.Max(math.Abs(w), 1)
					if kind == smSoftmax {
						mag[i] = 0x1p-126
					}
				}
				out := rdOut(array.Float32, oshape)
				if err := kernels[kind](out, in, c.axis); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				got := rdValues(out)
				rdCompare(t, name, got, want, mag, 4*rdTol(array.Float32))
				os, outS := strided(oshape, 77)
				if err := kernels[kind](outS, inS, c.axis); err != nil {
					t.Fatalf("%s strided: %v", name, err)
				}
				gotS := rdValues(outS)
				rdCompare(t, name+" strided", gotS, want, mag, 4*rdTol(array.Float32))
				for i, v := range gotS {
					if !split && math.Float64bits(v) != math.Float64bits(got[i]) {
						t.Fatalf("%s: strided element %d = %v, contiguous %v", name, i, v, got[i])
					}
				}
				for i := 0; i < len(os); i += 2 {
					if os[i] != 77 {
						t.Fatalf("%s strided: wrote storage element %d between the outputs", name, i)
					}
				}
			}
		}
	}
}

func benchSoftmax(b *testing.B, kind smKind, shape []int, axis int) {
	n := rdSize(shape)
	x := benchInput(n)
	in := viewOf(x, array.Float32, shape, nil, 0)
	oshape := shape
	f := Softmax
	switch kind {
	case smLogSoftmax:
		f = LogSoftmax
	case smLogSumExp:
		f = LogSumExp
		oshape = slices.Delete(slices.Clone(shape), axis, axis+1)
	}
	out := contiguous(make([]byte, 4*rdSize(oshape)), array.Float32, oshape)
	b.SetBytes(int64(4*n + 4*rdSize(oshape)))
	for b.Loop() {
		if err := f(out, in, axis); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSoftmaxRows4K(b *testing.B)    { benchSoftmax(b, smSoftmax, []int{4096, 4096}, 1) }
func BenchmarkSoftmaxRows1K(b *testing.B)    { benchSoftmax(b, smSoftmax, []int{1024, 1024}, 1) }
func BenchmarkSoftmaxCols4K(b *testing.B)    { benchSoftmax(b, smSoftmax, []int{4096, 4096}, 0) }
func BenchmarkSoftmaxCols1K(b *testing.B)    { benchSoftmax(b, smSoftmax, []int{1024, 1024}, 0) }
func BenchmarkSoftmaxAll16M(b *testing.B)    { benchSoftmax(b, smSoftmax, []int{1 << 24}, 0) }
func BenchmarkLogSoftmaxRows4K(b *testing.B) { benchSoftmax(b, smLogSoftmax, []int{4096, 4096}, 1) }
func BenchmarkLogSumExpRows4K(b *testing.B)  { benchSoftmax(b, smLogSumExp, []int{4096, 4096}, 1) }
func BenchmarkLogSumExpAll16M(b *testing.B)  { benchSoftmax(b, smLogSumExp, []int{1 << 24}, 0) }
