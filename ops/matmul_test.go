package ops_test

import (
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// mmNaive multiplies row-major m×k and k×n matrices in float64.
func mmNaive(a []float64, b []float64, m, k, n int) []float64 {
	out := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for kk := 0; kk < k; kk++ {
				s += a[i*k+kk] * b[kk*n+j]
			}
			out[i*n+j] = s
		}
	}
	return out
}

// mmTransposeOf returns the row-major data of the transpose of a
// row-major r×c matrix.
func mmTransposeOf(a []float64, r, c int) []float64 {
	t := make([]float64, r*c)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			t[j*r+i] = a[i*c+j]
		}
	}
	return t
}

func mmValues(n, seed int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64((i*37+seed*11)%17-8) / 4
	}
	return v
}

func mmArray(v []float64, dt array.DType, shape ...int) *array.Array {
	if dt == array.Float32 {
		f := make([]float32, len(v))
		for i, x := range v {
			f[i] = float32(x)
		}
		return array.FromSlice(f, shape...)
	}
	return array.FromSlice(v, shape...)
}

// TestMatMulOfTransposeViews multiplies Transpose views, which MatMul must
// receive as views (shared memory, column-major strides: the cpu kernel's
// tests check that such operands reach BLAS as transposes, uncopied), and
// checks the products for float32 and float64.
func TestMatMulOfTransposeViews(t *testing.T) {
	const m, k, n = 70, 9, 66
	a := mmValues(m*k, 1) // row-major m×k
	b := mmValues(k*n, 2) // row-major k×n
	want := mmNaive(a, b, m, k, n)
	for _, dt := range []array.DType{array.Float32, array.Float64} {
		// Stored as the transposes, so that Transpose gives back a and b.
		as := mmArray(mmTransposeOf(a, m, k), dt, k, m)
		bs := mmArray(mmTransposeOf(b, k, n), dt, n, k)
		at, bt := ops.Transpose(as), ops.Transpose(bs)
		if err := array.Eval(at, bt); err != nil {
			t.Fatal(err)
		}
		for _, v := range []struct {
			name   string
			view   *array.Array
			stored *array.Array
		}{{"a", at, as}, {"b", bt, bs}} {
			if v.view.Storage() != v.stored.Storage() || v.view.RowMajor() || v.view.Strides()[0] != 1 {
				t.Fatalf("%v: Transpose of %s is not a column-major view (strides %v)", dt, v.name, v.view.Strides())
			}
		}
		for _, c := range []struct {
			name string
			x, y *array.Array
		}{
			{"view @ view", at, bt},
			{"view @ row-major", at, mmArray(b, dt, k, n)},
			{"row-major @ view", mmArray(a, dt, m, k), bt},
		} {
			// Quarters of small integers: exact in both dtypes.
			if d := cmp.Diff(mmArray(want, dt, m, n), ops.MatMul(c.x, c.y), arraytest.Approx(0, 0)); d != "" {
				t.Fatalf("%v %s (-want +got):\n%s", dt, c.name, d)
			}
		}
	}
}

// TestMatMulGradOfTransposedWeight takes the gradient of x·wᵀ (a linear
// layer) with respect to the row-major w, and of x·b with respect to a
// column-major view b: both are g's products with x in the layout of the
// memory they belong to, so w's gradient is row-major, as the update
// reading it wants, not a transposed view.
func TestMatMulGradOfTransposedWeight(t *testing.T) {
	const m, k, n = 33, 20, 17
	x, w, g := mmValues(m*k, 1), mmValues(n*k, 2), mmValues(m*n, 3)
	gw := mmNaive(mmTransposeOf(g, m, n), x, n, m, k) // gᵀ·x, n×k
	for _, dt := range []array.DType{array.Float32, array.Float64} {
		xa, wa, ga := mmArray(x, dt, m, k), mmArray(w, dt, n, k), mmArray(g, dt, m, n)
		linear := func(in ...*array.Array) []*array.Array {
			return []*array.Array{ops.MatMul(in[0], ops.Transpose(in[1]))}
		}
		_, vjps := graph.VJP(linear, []*array.Array{xa, wa}, []*array.Array{ga})
		if err := array.Eval(vjps...); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(mmArray(gw, dt, n, k), vjps[1], arraytest.Approx(0, 0)); d != "" {
			t.Fatalf("%v: gradient of w (-want +got):\n%s", dt, d)
		}
		if !vjps[1].RowMajor() {
			t.Errorf("%v: gradient of w has strides %v, want row-major", dt, vjps[1].Strides())
		}
		want := mmArray(mmNaive(g, w, m, n, k), dt, m, k) // g·w
		if d := cmp.Diff(want, vjps[0], arraytest.Approx(0, 0)); d != "" {
			t.Fatalf("%v: gradient of x (-want +got):\n%s", dt, d)
		}

		bt := ops.Transpose(wa) // evaluated: a column-major k×n view
		if err := array.Eval(bt); err != nil {
			t.Fatal(err)
		}
		plain := func(in ...*array.Array) []*array.Array { return []*array.Array{ops.MatMul(in[0], in[1])} }
		_, vjps = graph.VJP(plain, []*array.Array{xa, bt}, []*array.Array{ga})
		if d := cmp.Diff(mmArray(mmTransposeOf(gw, n, k), dt, k, n), vjps[1], arraytest.Approx(0, 0)); d != "" {
			t.Fatalf("%v: gradient of the view (-want +got):\n%s", dt, d)
		}
	}
}

// TestMatMulBatchedSwapAxes multiplies batches of transposed matrices
// (SwapAxes views) with a broadcast batch axis.
func TestMatMulBatchedSwapAxes(t *testing.T) {
	const nb, m, k, n = 3, 4, 5, 2
	a := mmValues(nb*m*k, 3) // nb × (m×k), stored as nb × (k×m)
	b := mmValues(k*n, 4)
	stored := make([]float64, 0, nb*m*k)
	for i := 0; i < nb; i++ {
		stored = append(stored, mmTransposeOf(a[i*m*k:(i+1)*m*k], m, k)...)
	}
	for _, dt := range []array.DType{array.Float32, array.Float64} {
		x := ops.SwapAxes(mmArray(stored, dt, nb, k, m), -1, -2)
		y := ops.ExpandDims(mmArray(b, dt, k, n), 0)
		var want []float64
		for i := 0; i < nb; i++ {
			want = append(want, mmNaive(a[i*m*k:(i+1)*m*k], b, m, k, n)...)
		}
		if d := cmp.Diff(mmArray(want, dt, nb, m, n), ops.MatMul(x, y), arraytest.Approx(0, 0)); d != "" {
			t.Fatalf("%v (-want +got):\n%s", dt, d)
		}
	}
}

func TestMatMulShapes(t *testing.T) {
	f := func(shape ...int) *array.Array {
		n := 1
		for _, d := range shape {
			n *= d
		}
		return array.FromSlice(make([]float32, n), shape...)
	}
	for _, c := range []struct {
		a, b *array.Array
		want []int
	}{
		{f(3), f(3), []int{}},
		{f(3), f(3, 4), []int{4}},
		{f(2, 3), f(3), []int{2}},
		{f(3), f(5, 3, 4), []int{5, 4}},
		{f(5, 2, 3), f(3), []int{5, 2}},
		{f(2, 1, 3, 4), f(6, 4, 5), []int{2, 6, 3, 5}},
		{f(1, 2, 3), f(7, 1, 3, 2), []int{7, 1, 2, 2}},
		{f(0, 2, 3), f(3, 4), []int{0, 2, 4}},
		{f(2, 0), f(0, 4), []int{2, 4}},
	} {
		got := ops.MatMul(c.a, c.b)
		if !slices.Equal(got.Shape(), c.want) {
			t.Errorf("MatMul(%v, %v) has shape %v, want %v", c.a.Shape(), c.b.Shape(), got.Shape(), c.want)
		}
		if err := got.Eval(); err != nil {
			t.Errorf("MatMul(%v, %v): %v", c.a.Shape(), c.b.Shape(), err)
		}
	}
	if got := ops.MatMul(array.FromSlice([]int32{1, 2}), array.FromSlice([]float32{3, 4})); got.DType() != array.Float32 || got.Item() != 11 {
		t.Errorf("int32 @ float32 = %v %v, want float32 11", got.DType(), got.Item())
	}
	outer := ops.Outer(array.FromSlice([]float64{1, 2, 3, 4}, 2, 2), array.Scalar(float64(-1)))
	if !slices.Equal(outer.Shape(), []int{4, 1}) {
		t.Errorf("Outer([2 2], []) has shape %v, want [4 1]", outer.Shape())
	}
	td := ops.Tensordot(f(2, 3), f(4), nil, nil)
	if !slices.Equal(td.Shape(), []int{2, 3, 4}) {
		t.Errorf("Tensordot with no axes has shape %v, want [2 3 4]", td.Shape())
	}
	if v := ops.Tensordot(array.Scalar(float32(2)), array.Scalar(float32(3)), nil, nil).Item(); v != 6 || math.IsNaN(v) {
		t.Errorf("Tensordot of 0-d arrays = %v, want 6", v)
	}
}

func TestMatMulBadInput(t *testing.T) {
	f := func(shape ...int) *array.Array {
		n := 1
		for _, d := range shape {
			n *= d
		}
		return array.FromSlice(make([]float32, n), shape...)
	}
	s := array.Scalar(float32(1))
	err := array.Try(func() { ops.MatMul(f(2, 3), f(4, 5)) })
	if err == nil || err.Error() != "ops.MatMul: shapes [2 3] and [4 5]: inner dimensions 3 and 4 differ" {
		t.Errorf("inner mismatch: got %v", err)
	}
	for _, tc := range []struct {
		name  string
		op    string
		f     func()
		parts []string
	}{
		{"0-d a", "ops.MatMul", func() { ops.MatMul(s, f(3)) }, []string{"shapes [] and [3]"}},
		{"0-d b", "ops.MatMul", func() { ops.MatMul(f(3), s) }, []string{"shapes [3] and []"}},
		{"vectors", "ops.MatMul", func() { ops.MatMul(f(3), f(4)) }, []string{"[3] and [4]", "3 and 4 differ"}},
		{"vector @ matrix", "ops.MatMul", func() { ops.MatMul(f(3), f(4, 3)) }, []string{"3 and 4 differ"}},
		{"batch", "ops.MatMul", func() { ops.MatMul(f(2, 3, 4), f(3, 4, 5)) }, []string{"[2 3 4] and [3 4 5]", "batch"}},
		{"tensordot axis count", "ops.Tensordot", func() { ops.Tensordot(f(2, 3), f(3, 2), []int{1}, []int{0, 1}) }, []string{"[2 3]", "[3 2]"}},
		{"tensordot axis range", "ops.Tensordot", func() { ops.Tensordot(f(2, 3), f(3, 2), []int{2}, []int{0}) }, []string{"axis 2", "[2 3]"}},
		{"tensordot negative axis", "ops.Tensordot", func() { ops.Tensordot(f(2, 3), f(3, 2), []int{1}, []int{-3}) }, []string{"axis -3", "[3 2]"}},
		{"tensordot repeat", "ops.Tensordot", func() { ops.Tensordot(f(3, 3), f(3, 3), []int{0, 0}, []int{0, 1}) }, []string{"repeated"}},
		{"tensordot sizes", "ops.Tensordot", func() { ops.Tensordot(f(2, 3), f(3, 2), []int{0}, []int{0}) }, []string{"(2)", "(3)", "differ"}},
	} {
		wantOpError(t, tc.name, array.Try(tc.f), tc.op, tc.parts...)
	}
}
