package cpu

import (
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/fathom-go/fathom/internal/strided"

	"github.com/fathom-go/fathom/array"
)

// viewOf returns a Buf over data with the given layout (strides nil:
// row-major).
func viewOf[T any](data []T, dt array.DType, shape, strides []int, off int) Buf {
	if strides == nil {
		strides = strided.RowMajor(shape)
	}
	var z T
	var b []byte
	if len(data) > 0 {
		b = unsafe.Slice((*byte)(unsafe.Pointer(&data[0])), len(data)*int(unsafe.Sizeof(z)))
	}
	return Buf{Data: b, DType: dt, Shape: shape, Strides: strides, Offset: off}
}

// newOut returns a row-major Buf and the slice behind it, filled with a
// marker so that unwritten elements show.
func newOut[T any](dt array.DType, fill T, shape ...int) ([]T, Buf) {
	n := 1
	for _, d := range shape {
		n *= d
	}
	s := make([]T, n)
	for i := range s {
		s[i] = fill
	}
	return s, viewOf(s, dt, shape, nil, 0)
}

// at reads element idx of a strided view of data.
func at[T any](data []T, b Buf, idx ...int) T {
	off := b.Offset
	for d, i := range idx {
		off += i * b.Strides[d]
	}
	return data[off]
}

// naiveMatMul computes a @ b in float64 for views of float data.
func naiveMatMul[T float32 | float64](ad []T, a Buf, bd []T, b Buf) []float64 {
	nd := len(a.Shape)
	batch := a.Shape[:nd-2]
	m, k, n := a.Shape[nd-2], a.Shape[nd-1], b.Shape[nd-1]
	nb := 1
	for _, d := range batch {
		nb *= d
	}
	out := make([]float64, nb*m*n)
	idx := make([]int, nd)
	for bi := 0; bi < nb; bi++ {
		r := bi
		for d := len(batch) - 1; d >= 0; d-- {
			idx[d] = r % batch[d]
			r /= batch[d]
		}
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				s := 0.0
				for kk := 0; kk < k; kk++ {
					idx[nd-2], idx[nd-1] = i, kk
					x := float64(at(ad, a, idx...))
					idx[nd-2], idx[nd-1] = kk, j
					s += x * float64(at(bd, b, idx...))
				}
				out[(bi*m+i)*n+j] = s
			}
		}
	}
	return out
}

func randSlice[T float32 | float64](r *rand.Rand, n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = T(r.Float64()*2 - 1)
	}
	return s
}

// layoutCase is an operand layout: the view of a backing slice of size n.
type layoutCase struct {
	shape, strides []int
	off, n         int
}

// TestMatMulViewsAreNotCopied guards the requirement that
// transposed (and strided, and broadcast) operands reach the kernels
// without copies: packing reads them in place, so once the packing
// buffers are pooled a product allocates far less than its operands.
func TestMatMulViewsAreNotCopied(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector defeats buffer pooling")
	}
	r := rand.New(rand.NewPCG(1, 2))
	m, k, n := 150, 200, 130
	ad := randSlice[float64](r, m*k)
	bd := randSlice[float64](r, k*n)
	af := randSlice[float32](r, m*k)
	bf := randSlice[float32](r, k*n)
	for _, c := range []struct {
		name           string
		shapeA, strA   []int
		shapeB, strB   []int
		operandBytes64 int
	}{
		// a is the transpose of a stored k×m matrix, b of a stored n×k one.
		{"transposed", []int{m, k}, []int{1, m}, []int{k, n}, []int{1, k}, 8 * (m*k + k*n)},
		// One row of a repeated along M (stride 0).
		{"broadcast rows", []int{m, k}, []int{0, 1}, []int{k, n}, []int{1, k}, 8 * (m*k + k*n)},
	} {
		a64 := viewOf(ad, array.Float64, c.shapeA, c.strA, 0)
		b64 := viewOf(bd, array.Float64, c.shapeB, c.strB, 0)
		a32 := viewOf(af, array.Float32, c.shapeA, c.strA, 0)
		b32 := viewOf(bf, array.Float32, c.shapeB, c.strB, 0)
		od, out64 := newOut(array.Float64, math.NaN(), m, n)
		of, out32 := newOut(array.Float32, float32(math.NaN()), m, n)
		run := func() {
			if err := MatMul(out64, a64, b64); err != nil {
				t.Fatal(err)
			}
			if err := MatMul(out32, a32, b32); err != nil {
				t.Fatal(err)
			}
		}
		// The pools keep a buffer per processor, so the first runs fill
		// them and a later one allocates next to nothing.
		got := uint64(math.MaxUint64)
		for range 6 {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			run()
			runtime.ReadMemStats(&after)
			got = min(got, after.TotalAlloc-before.TotalAlloc)
		}
		if got > uint64(c.operandBytes64/8) {
			t.Errorf("%s: MatMul allocated %d bytes for operands of %d (float64) and half that (float32)", c.name, got, c.operandBytes64)
		}
		checkClose(t, c.name+" float64", od, naiveMatMul(ad, a64, bd, b64), 1e-12)
		checkClose(t, c.name+" float32", of, naiveMatMul(af, a32, bf, b32), 1e-5)
	}
}

func checkClose[T float32 | float64](t *testing.T, name string, got []T, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements, want %d", name, len(got), len(want))
	}
	for i := range want {
		g := float64(got[i])
		if math.IsNaN(g) || math.Abs(g-want[i]) > tol*(1+math.Abs(want[i])) {
			t.Fatalf("%s: element %d = %v, want %v", name, i, g, want[i])
		}
	}
}

func TestMatMulLayouts(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	m, k, n := 4, 6, 5
	rowA := layoutCase{[]int{m, k}, nil, 0, m * k}
	colA := layoutCase{[]int{m, k}, []int{1, m}, 0, m * k}
	paddedA := layoutCase{[]int{m, k}, []int{k + 3, 1}, 2, m*(k+3) + 2}
	stepA := layoutCase{[]int{m, k}, []int{2 * k, 2}, 1, 2*m*k + 1}
	revA := layoutCase{[]int{m, k}, []int{k, -1}, k - 1, m * k}
	rowB := layoutCase{[]int{k, n}, nil, 0, k * n}
	colB := layoutCase{[]int{k, n}, []int{1, k}, 0, k * n}
	bcastB := layoutCase{[]int{k, n}, []int{0, 1}, 0, n}
	batchA := layoutCase{[]int{3, m, k}, nil, 0, 3 * m * k}
	batchColA := layoutCase{[]int{3, m, k}, []int{m * k, 1, m}, 0, 3 * m * k}
	sharedB := layoutCase{[]int{3, k, n}, []int{0, n, 1}, 0, k * n}
	sharedColB := layoutCase{[]int{3, k, n}, []int{0, 1, k}, 0, k * n}
	vecA := layoutCase{[]int{1, k}, []int{0, 1}, 0, k}
	vecB := layoutCase{[]int{k, 1}, []int{1, 0}, 0, k}
	for _, c := range []struct {
		name string
		a, b layoutCase
	}{
		{"row row", rowA, rowB},
		{"col row", colA, rowB},
		{"row col", rowA, colB},
		{"col col", colA, colB},
		{"padded col", paddedA, colB},
		{"stepped row", stepA, rowB},
		{"reversed row", revA, rowB},
		{"row broadcast", rowA, bcastB},
		{"batched shared b", batchA, sharedB},
		{"batched col shared col", batchColA, sharedColB},
		{"vector vector", vecA, vecB},
	} {
		t.Run(c.name, func(t *testing.T) {
			ad, bd := randSlice[float64](r, c.a.n), randSlice[float64](r, c.b.n)
			a := viewOf(ad, array.Float64, c.a.shape, c.a.strides, c.a.off)
			b := viewOf(bd, array.Float64, c.b.shape, c.b.strides, c.b.off)
			nd := len(c.a.shape)
			shape := append(append([]int{}, c.a.shape[:nd-1]...), c.b.shape[nd-1])
			want := naiveMatMul(ad, a, bd, b)
			od, out := newOut(array.Float64, math.NaN(), shape...)
			if err := MatMul(out, a, b); err != nil {
				t.Fatal(err)
			}
			checkClose(t, "float64", od, want, 1e-12)

			af, bf := make([]float32, len(ad)), make([]float32, len(bd))
			for i, v := range ad {
				af[i] = float32(v)
			}
			for i, v := range bd {
				bf[i] = float32(v)
			}
			a32 := viewOf(af, array.Float32, c.a.shape, c.a.strides, c.a.off)
			b32 := viewOf(bf, array.Float32, c.b.shape, c.b.strides, c.b.off)
			of, out32 := newOut(array.Float32, float32(math.NaN()), shape...)
			if err := MatMul(out32, a32, b32); err != nil {
				t.Fatal(err)
			}
			checkClose(t, "float32", of, want, 1e-5)

			// The generic loop and the float16 path read the same views.
			ai, bi := make([]int32, len(ad)), make([]int32, len(bd))
			ah, bh := make([]array.F16, len(ad)), make([]array.F16, len(bd))
			for i, v := range ad {
				ai[i] = int32(math.Round(v * 10))
				ah[i] = array.NewF16(float32(ai[i]) / 8)
			}
			for i, v := range bd {
				bi[i] = int32(math.Round(v * 10))
				bh[i] = array.NewF16(float32(bi[i]) / 8)
			}
			ia := viewOf(ai, array.Int32, c.a.shape, c.a.strides, c.a.off)
			ib := viewOf(bi, array.Int32, c.b.shape, c.b.strides, c.b.off)
			oi, outi := newOut(array.Int32, int32(-999999), shape...)
			if err := MatMul(outi, ia, ib); err != nil {
				t.Fatal(err)
			}
			ad2, bd2 := make([]float64, len(ai)), make([]float64, len(bi))
			for i, v := range ai {
				ad2[i] = float64(v)
			}
			for i, v := range bi {
				bd2[i] = float64(v)
			}
			wanti := naiveMatMul(ad2, a, bd2, b)
			for i := range wanti {
				if float64(oi[i]) != wanti[i] {
					t.Fatalf("int32: element %d = %d, want %v", i, oi[i], wanti[i])
				}
			}
			ha := viewOf(ah, array.Float16, c.a.shape, c.a.strides, c.a.off)
			hb := viewOf(bh, array.Float16, c.b.shape, c.b.strides, c.b.off)
			oh, outh := newOut(array.Float16, array.NewF16(float32(math.NaN())), shape...)
			if err := MatMul(outh, ha, hb); err != nil {
				t.Fatal(err)
			}
			for i := range wanti {
				// Exact products of eighths, rounded once to float16.
				if w := array.NewF16(float32(wanti[i] / 64)); oh[i] != w {
					t.Fatalf("float16: element %d = %v, want %v", i, oh[i], w)
				}
			}
		})
	}
}

func TestMatMulOtherDTypes(t *testing.T) {
	a := []bool{true, false, false, false, true, false}
	b := []bool{false, true, true, false, false, false}
	ob, out := newOut(array.Bool, true, 2, 2)
	if err := MatMul(out, viewOf(a, array.Bool, []int{2, 3}, nil, 0), viewOf(b, array.Bool, []int{3, 2}, nil, 0)); err != nil {
		t.Fatal(err)
	}
	if want := []bool{false, true, true, false}; !equalSlices(ob, want) {
		t.Errorf("bool: got %v, want %v", ob, want)
	}

	ca := []complex64{1 + 1i, 2, 0, 1i}
	cb := []complex64{1, 1i, 2 - 1i, 3}
	oc, outc := newOut(array.Complex64, complex64(99), 2, 2)
	if err := MatMul(outc, viewOf(ca, array.Complex64, []int{2, 2}, nil, 0), viewOf(cb, array.Complex64, []int{2, 2}, nil, 0)); err != nil {
		t.Fatal(err)
	}
	// [[1+i, 2], [0, i]] @ [[1, i], [2-i, 3]]
	if want := []complex64{5 - 1i, 5 + 1i, 1 + 2i, 3i}; !equalSlices(oc, want) {
		t.Errorf("complex64: got %v, want %v", oc, want)
	}

	u := []uint8{200, 100}
	ou, outu := newOut(array.Uint8, uint8(0), 1, 1)
	if err := MatMul(outu, viewOf(u, array.Uint8, []int{1, 2}, nil, 0), viewOf(u, array.Uint8, []int{2, 1}, nil, 0)); err != nil {
		t.Fatal(err)
	}
	// 200*200 + 100*100 = 50000 wraps modulo 256 as in numpy.
	if ou[0] != uint8(50000%256) {
		t.Errorf("uint8: got %d, want %d", ou[0], 50000%256)
	}

	bf := []array.BF16{array.NewBF16(1.5), array.NewBF16(-2), array.NewBF16(0.25), array.NewBF16(4)}
	obf, outbf := newOut(array.BFloat16, array.NewBF16(0), 2, 2)
	if err := MatMul(outbf, viewOf(bf, array.BFloat16, []int{2, 2}, nil, 0), viewOf(bf, array.BFloat16, []int{2, 2}, []int{1, 2}, 0)); err != nil {
		t.Fatal(err)
	}
	// [[1.5, -2], [0.25, 4]] @ its transpose
	want := []float32{6.25, -7.625, -7.625, 16.0625}
	for i, w := range want {
		if obf[i] != array.NewBF16(w) {
			t.Errorf("bfloat16: element %d = %v, want %v", i, obf[i], array.NewBF16(w))
		}
	}
}

func equalSlices[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestMatMulEmpty(t *testing.T) {
	for _, dt := range []array.DType{array.Float32, array.Float64, array.Int32, array.Float16} {
		// K = 0: zeros; the marker must be overwritten.
		o := scratch(6 * dt.Size())
		for i := range o {
			o[i] = 0xff
		}
		out := contiguous(o, dt, []int{2, 3})
		a := contiguous(nil, dt, []int{2, 0})
		b := contiguous(nil, dt, []int{0, 3})
		if err := MatMul(out, a, b); err != nil {
			t.Fatalf("%v: %v", dt, err)
		}
		for i, v := range o {
			if v != 0 {
				t.Fatalf("%v, K=0: byte %d = %#x, want 0", dt, i, v)
			}
		}
		// M = 0 and N = 0: nothing to write, no error.
		for _, s := range [][3]int{{0, 4, 3}, {2, 4, 0}, {0, 0, 0}} {
			out := contiguous(nil, dt, []int{s[0], s[2]})
			a := contiguous(scratch(s[0]*s[1]*dt.Size()), dt, []int{s[0], s[1]})
			b := contiguous(scratch(s[1]*s[2]*dt.Size()), dt, []int{s[1], s[2]})
			if err := MatMul(out, a, b); err != nil {
				t.Fatalf("%v %v: %v", dt, s, err)
			}
		}
	}
}

func TestMatMulBatchesInParallel(t *testing.T) {
	// Many small matrices take the batch-parallel path; the race detector
	// checks that batches write apart.
	r := rand.New(rand.NewPCG(5, 6))
	nb, m, k, n := 300, 3, 4, 2
	ad := randSlice[float32](r, nb*m*k)
	bd := randSlice[float32](r, nb*k*n)
	a := viewOf(ad, array.Float32, []int{nb, m, k}, nil, 0)
	b := viewOf(bd, array.Float32, []int{nb, k, n}, []int{k * n, 1, k}, 0)
	old := parallelFlops
	parallelFlops = 64
	defer func() { parallelFlops = old }()
	of, out := newOut(array.Float32, float32(math.NaN()), nb, m, n)
	if err := MatMul(out, a, b); err != nil {
		t.Fatal(err)
	}
	checkClose(t, "batched float32", of, naiveMatMul(ad, a, bd, b), 1e-5)
}

func TestMatMulLarge(t *testing.T) {
	// Big enough for the GEMM to split the product over cores itself.
	r := rand.New(rand.NewPCG(7, 8))
	m, k, n := 150, 70, 140
	ad := randSlice[float64](r, m*k)
	bd := randSlice[float64](r, k*n)
	a := viewOf(ad, array.Float64, []int{m, k}, []int{1, m}, 0)
	b := viewOf(bd, array.Float64, []int{k, n}, nil, 0)
	od, out := newOut(array.Float64, math.NaN(), m, n)
	if err := MatMul(out, a, b); err != nil {
		t.Fatal(err)
	}
	checkClose(t, "large float64", od, naiveMatMul(ad, a, bd, b), 1e-12)
}

func TestMatMulBadBufs(t *testing.T) {
	f := func(shape ...int) Buf {
		n := 1
		for _, d := range shape {
			n *= d
		}
		return contiguous(scratch(4*n), array.Float32, shape)
	}
	for _, c := range []struct {
		name      string
		out, a, b Buf
	}{
		{"dtype", f(2, 2), contiguous(scratch(32), array.Float64, []int{2, 2}), f(2, 2)},
		{"out strided", Buf{Data: scratch(64), DType: array.Float32, Shape: []int{2, 2}, Strides: []int{1, 2}}, f(2, 2), f(2, 2)},
	} {
		err := MatMul(c.out, c.a, c.b)
		var e *array.Error
		if !errors.As(err, &e) || e.Op != "cpu.MatMul" {
			t.Errorf("%s: got %v, want a cpu.MatMul *array.Error", c.name, err)
		}
	}
}

// raceEnabled is set by gemm_race_test.go under the race detector.
var raceEnabled bool

// scratch returns n bytes of memory aligned for any element type.
func scratch(n int) []byte {
	w := make([]uint64, (n+7)/8)
	if len(w) == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), n)
}
