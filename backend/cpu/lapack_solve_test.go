package cpu

import (
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/fathom-go/fathom/array"
)

// luF64Buf views data as a float64 Buf of the given shape and strides.
func luF64Buf(data []float64, shape, strides []int) Buf {
	return Buf{Data: unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(data))), 8*len(data)), DType: array.Float64, Shape: shape, Strides: strides}
}

func luF32Buf(data []float32, shape, strides []int) Buf {
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(data))), 4*len(data))
	return Buf{Data: b, DType: array.Float32, Shape: shape, Strides: strides}
}

func luRowMajor(shape ...int) []int {
	s := make([]int, len(shape))
	st := 1
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = st
		st *= shape[i]
	}
	return s
}

func luRandMatrix(r *rand.Rand, n, m int, shift float64) []float64 {
	v := make([]float64, n*m)
	for i := range v {
		v[i] = r.Float64()*2 - 1
	}
	for i := range min(n, m) {
		v[i*m+i] += shift
	}
	return v
}

// luResidual returns max |a·x - b| over an n×n a and n×k x and b, all
// row-major.
func luResidual(a, x, b []float64, n, k int) float64 {
	worst := 0.0
	for i := range n {
		for j := range k {
			s := -b[i*k+j]
			for l := range n {
				s += a[i*n+l] * x[l*k+j]
			}
			worst = max(worst, math.Abs(s))
		}
	}
	return worst
}

// TestSolveKernelLayouts solves with a read column-major (transposed
// strides), broadcast over the batch (stride 0), and b read every other
// element, in float64 and in float32 out, and checks the residuals.
func TestSolveKernelLayouts(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n, k, batch = 5, 3, 4
	a := luRandMatrix(r, n, n, 0)
	at := make([]float64, n*n) // a stored transposed
	for i := range n {
		for j := range n {
			at[j*n+i] = a[i*n+j]
		}
	}
	wide := make([]float64, batch*n*k*2)
	for i := range wide {
		wide[i] = r.Float64()
	}
	ab := luF64Buf(at, []int{batch, n, n}, []int{0, 1, n})
	bb := luF64Buf(wide, []int{batch, n, k}, []int{n * k * 2, k * 2, 2})
	x := make([]float64, batch*n*k)
	if err := Solve(luF64Buf(x, []int{batch, n, k}, luRowMajor(batch, n, k)), ab, bb); err != nil {
		t.Fatal(err)
	}
	x32 := make([]float32, batch*n*k)
	if err := Solve(luF32Buf(x32, []int{batch, n, k}, luRowMajor(batch, n, k)), ab, bb); err != nil {
		t.Fatal(err)
	}
	for i := range batch {
		b := make([]float64, n*k)
		for j := range b {
			b[j] = wide[i*n*k*2+2*j]
		}
		if res := luResidual(a, x[i*n*k:(i+1)*n*k], b, n, k); res > 1e-12 {
			t.Errorf("batch %d: float64 luResidual %g", i, res)
		}
		x64 := make([]float64, n*k)
		for j := range x64 {
			x64[j] = float64(x32[i*n*k+j])
			if math.Abs(x64[j]-x[i*n*k+j]) > 1e-6*(1+math.Abs(x[i*n*k+j])) {
				t.Errorf("batch %d: float32 x[%d] = %v, float64 gives %v", i, j, x32[i*n*k+j], x[i*n*k+j])
			}
		}
	}
}

// TestInvKernelBatchSplit inverts a batch large enough to be split over
// two cores, with singular matrices at two places: the error names the
// first, however the batch was split.
func TestInvKernelBatchSplit(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	r := rand.New(rand.NewPCG(3, 4))
	const n, batch = 3, 600
	a := make([]float64, 0, batch*n*n)
	for range batch {
		a = append(a, luRandMatrix(r, n, n, 3)...)
	}
	out := make([]float64, batch*n*n)
	ab := luF64Buf(a, []int{batch, n, n}, luRowMajor(batch, n, n))
	ob := luF64Buf(out, []int{batch, n, n}, luRowMajor(batch, n, n))
	if err := Inv(ob, ab); err != nil {
		t.Fatal(err)
	}
	eye := []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}
	for i := range batch {
		if res := luResidual(a[i*n*n:(i+1)*n*n], out[i*n*n:(i+1)*n*n], eye, n, n); res > 1e-12 {
			t.Fatalf("matrix %d: |a·inv(a) - I| = %g", i, res)
		}
	}
	for _, i := range []int{577, 301} {
		clear(a[i*n*n : i*n*n+n]) // a zero row
	}
	err := Inv(ob, ab)
	if !errors.Is(err, ErrSingular) || !strings.Contains(err.Error(), "batch index [301]") {
		t.Errorf("got %v, want ErrSingular at batch index [301]", err)
	}
}

// TestLUFactorKernel checks the pivots, the row indices and the factors
// of a matrix whose pivoting is known, and of a wide one, and the
// permutation LUOrder derives from the pivots.
func TestLUFactorKernel(t *testing.T) {
	// Column 0's largest entry is in row 2, then column 1's in row 2 of
	// what remains (the original row 0).
	a := []float64{
		1, 4, 0,
		2, 1, 1,
		4, 2, 2,
	}
	lu := make([]float64, 9)
	piv := make([]int32, 3)
	rows := make([]int32, 3)
	i32 := func(v []int32, n int) Buf {
		return Buf{Data: unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 4*len(v)), DType: array.Int32, Shape: []int{n}, Strides: []int{1}}
	}
	if err := LUFactor(luF64Buf(lu, []int{3, 3}, []int{3, 1}), i32(piv, 3), i32(rows, 3), luF64Buf(a, []int{3, 3}, []int{3, 1})); err != nil {
		t.Fatal(err)
	}
	if want := []int32{2, 2, 2}; !luEqual32(piv, want) {
		t.Errorf("pivots %v, want %v", piv, want)
	}
	// L·U holds rows 2, 0, 1 of a: a = L[p]·U with p the inverse order.
	if want := []int32{1, 2, 0}; !luEqual32(rows, want) {
		t.Errorf("rows %v, want %v", rows, want)
	}
	for i := range 3 {
		for j := range 3 {
			s := 0.0
			for k := range 3 {
				l := lu[int(rows[i])*3+k]
				switch {
				case k == int(rows[i]):
					l = 1
				case k > int(rows[i]):
					l = 0
				}
				u := lu[k*3+j]
				if k > j {
					u = 0
				}
				s += l * u
			}
			if math.Abs(s-a[i*3+j]) > 1e-14 {
				t.Errorf("(L[p]·U)[%d,%d] = %v, a has %v", i, j, s, a[i*3+j])
			}
		}
	}
	order := make([]int32, 3)
	if err := LUOrder(i32(order, 3), i32(piv, 3)); err != nil {
		t.Fatal(err)
	}
	if want := []int32{2, 0, 1}; !luEqual32(order, want) {
		t.Errorf("LUOrder %v, want %v", order, want)
	}
	bad := []int32{0, -1, 2}
	if err := LUOrder(i32(order, 3), i32(bad, 3)); err == nil || !strings.Contains(err.Error(), "outside [0, 3)") {
		t.Errorf("LUOrder of pivot -1: %v", err)
	}
}

func luEqual32(a, b []int32) bool {
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

// TestLapackKernelsRejectDTypes: the kernels take float32 and float64
// only (package ops converts the rest), and say so rather than misread
// memory.
func TestLapackKernelsRejectDTypes(t *testing.T) {
	v := make([]int32, 4)
	b := Buf{Data: unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 16), DType: array.Int32, Shape: []int{2, 2}, Strides: []int{2, 1}}
	for name, err := range map[string]error{
		"Inv":             Inv(b, b),
		"Solve":           Solve(b, b, b),
		"SolveTriangular": SolveTriangular(b, b, b, true, false),
	} {
		if err == nil || !strings.Contains(err.Error(), "int32") {
			t.Errorf("%s of int32: %v", name, err)
		}
	}
}
