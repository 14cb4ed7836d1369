package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

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

// smSame reports whether got is want, NaN for NaN, or within rel of it
// relative to |want| (abs for tiny ones).
func smSame(got, want float64, rel, abs float64) bool {
	if want != want || got != got {
		return want != want && got != got
	}
	if math.IsInf(want, 0) {
		return got == want
	}
	return math.Abs(got-want) <= rel*math.Abs(want)+abs
}

// TestSmOps32 checks the float32 loops of the softmax family, in every
// implementation, against float64 math: the maximum exactly, the shifted
// exponentials to 2 ulps and their sums to a few float32 ulps, and the
// affine loop exactly, at every length to 300 and some long ones, from
// unaligned starts, with NaN and ±Inf among the inputs and as the shift.
func TestSmOps32(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	names, impls := vecImplsUnderTest()
	lengths := []int{1000, 4099, smPart + 7}
	for n := range 301 {
		lengths = append(lengths, n)
	}
	const ulp = 0x1p-23
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
							if !smSame(float64(o[j]), e*float64(c), 2.5*ulp, 0x1p-149) {
								t.Fatalf("%s m=%v c=%v: o[%d] = exp(%v-m)*c = %v, want %v", name, m, c, j, v, o[j], e*float64(c))
							}
						}
						if o[n] != 0 {
							t.Fatalf("%s: wrote past the end", name)
						}
						if !smSame(sum, want, 3*ulp, 0) || !smSame(sumOnly, want, 3*ulp, 0) {
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
// float64 formulas. Within a path, results must not depend on the
// layout either.
func TestSoftmaxF32Paths(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	kernels := map[smKind]func(out, in Buf, axis int) error{smSoftmax: Softmax, smLogSoftmax: LogSoftmax, smLogSumExp: LogSumExp}
	for _, c := range []struct {
		shape []int
		axis  int
	}{
		{[]int{3, 1}, 1}, {[]int{5, 15}, 1}, {[]int{4, 16}, 1}, {[]int{4, 17}, 1}, {[]int{3, 63}, 1}, {[]int{2, 65}, 1},
		{[]int{40, 300}, 1}, {[]int{1, 2*smPart + 5}, 0}, {[]int{3, 2*smPart + 33}, 1},
		{[]int{9, 20}, 0}, {[]int{300, 33}, 0}, {[]int{70, 2100}, 0}, {[]int{20000, 9}, 0}, {[]int{9000, 17}, 0}, {[]int{40000, 20}, 0}, {[]int{3, 5, 40}, 1},
	} {
		n := rdSize(c.shape)
		for _, special := range []int{0, 200} {
			x := smInput(r, n, -20, 20, special)
			vals := make([]float64, n)
			for i, v := range x {
				vals[i] = float64(v)
			}
			in := Contiguous(unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), 4*n), array.Float32, c.shape)
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
				out := rdOut(array.Float32, oshape)
				if err := kernels[kind](out, in, c.axis); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				mag := make([]float64, len(want))
				for i, w := range want {
					mag[i] = math.Max(math.Abs(w), 1)
				}
				rdCompare(t, name, rdValues(out), want, mag, 4*rdTol(array.Float32))
			}
		}
	}
}

func benchSoftmax(b *testing.B, kind smKind, shape []int, axis int) {
	n := rdSize(shape)
	x := benchInput(n)
	in := Contiguous(unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), 4*n), array.Float32, shape)
	oshape := shape
	f := Softmax
	switch kind {
	case smLogSoftmax:
		f = LogSoftmax
	case smLogSumExp:
		f = LogSumExp
		oshape = slices.Delete(slices.Clone(shape), axis, axis+1)
	}
	out := Contiguous(make([]byte, 4*rdSize(oshape)), array.Float32, oshape)
	b.SetBytes(int64(4*n + 4*rdSize(oshape)))
	for b.Loop() {
		if err := f(out, in, axis); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSoftmaxRows1K(b *testing.B)    { benchSoftmax(b, smSoftmax, []int{1024, 1024}, 1) }
func BenchmarkSoftmaxCols4K(b *testing.B)    { benchSoftmax(b, smSoftmax, []int{4096, 4096}, 0) }
func BenchmarkSoftmaxCols1K(b *testing.B)    { benchSoftmax(b, smSoftmax, []int{1024, 1024}, 0) }
func BenchmarkSoftmaxAll16M(b *testing.B)    { benchSoftmax(b, smSoftmax, []int{1 << 24}, 0) }
func BenchmarkLogSoftmaxRows4K(b *testing.B) { benchSoftmax(b, smLogSoftmax, []int{4096, 4096}, 1) }
func BenchmarkLogSumExpRows4K(b *testing.B)  { benchSoftmax(b, smLogSumExp, []int{4096, 4096}, 1) }
func BenchmarkLogSumExpAll16M(b *testing.B)  { benchSoftmax(b, smLogSumExp, []int{1 << 24}, 0) }
