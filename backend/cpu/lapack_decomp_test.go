package cpu

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"unsafe"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/strided"
)

// The decomposition kernels on their own: dtype checks, any input layout
// read as the row-major one, and float32 computed in float64 and rounded
// once. package ops tests the values against numpy.

func decBytes[T float32 | float64 | complex64](v []T) []byte {
	if len(v) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*int(unsafe.Sizeof(z)))
}

func decBuf[T float32 | float64 | complex64](dt array.DType, shape ...int) (Buf, []T) {
	v := make([]T, Buf{Shape: shape}.Size())
	return Buf{Data: decBytes(v), DType: dt, Shape: shape, Strides: strided.RowMajor(shape)}, v
}

// decInput is a batch of two 4×4 symmetric positive definite matrices.
func decInput() []float64 {
	v := make([]float64, 32)
	for b := range 2 {
		for i := range 4 {
			for j := range 4 {
				x := float64((b+1)*(i+j)%5) / 7
				if i == j {
					x += 3
				}
				v[b*16+i*4+j] = x
			}
		}
	}
	return v
}

// decRunAll runs every kernel on a and returns the outputs' values.
func decRunAll(t *testing.T, a Buf, dt array.DType) [][]float64 {
	t.Helper()
	var outs [][]float64
	add := func(err error, bufs ...Buf) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bufs {
			switch b.DType {
			case array.Float32:
				v := unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b.Data))), b.Size())
				outs = append(outs, slices.Collect(func(yield func(float64) bool) {
					for _, x := range v {
						if !yield(float64(x)) {
							return
						}
					}
				}))
			case array.Complex64:
				v := unsafe.Slice((*complex64)(unsafe.Pointer(unsafe.SliceData(b.Data))), b.Size())
				w := make([]float64, 0, 2*len(v))
				for _, x := range v {
					w = append(w, float64(real(x)), float64(imag(x)))
				}
				outs = append(outs, w)
			default:
				outs = append(outs, slices.Clone(unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(b.Data))), b.Size())))
			}
		}
	}
	mk := func(shape ...int) Buf {
		if dt == array.Float32 {
			b, _ := decBuf[float32](dt, shape...)
			return b
		}
		b, _ := decBuf[float64](dt, shape...)
		return b
	}
	for _, upper := range []bool{false, true} {
		l, inv := mk(2, 4, 4), mk(2, 4, 4)
		add(Cholesky(l, a, upper), l)
		add(CholeskyInv(inv, a, upper), inv)
		w, v := mk(2, 4), mk(2, 4, 4)
		add(Eigh(w, v, a, upper), w, v)
	}
	q, r := mk(2, 4, 4), mk(2, 4, 4)
	add(QR(q, r, a), q, r)
	u, s, vt, s2 := mk(2, 4, 4), mk(2, 4), mk(2, 4, 4), mk(2, 4)
	add(SVD(u, s, vt, a), u, s, vt)
	add(SVDVals(s2, a), s2)
	w, _ := decBuf[complex64](array.Complex64, 2, 4)
	v, _ := decBuf[complex64](array.Complex64, 2, 4, 4)
	add(Eig(w, v, a), w, v)
	return outs
}

// TestDecompKernelsReadAnyLayout: a batch stored with its batch axis
// innermost, at an offset, gives bit for bit what the row-major batch
// gives.
func TestDecompKernelsReadAnyLayout(t *testing.T) {
	vals := decInput()
	a, av := decBuf[float64](array.Float64, 2, 4, 4)
	copy(av, vals)
	odd := make([]float64, 3+32)
	for b := range 2 {
		for i := range 4 {
			for j := range 4 {
				odd[3+b+2*j+8*i] = vals[b*16+i*4+j]
			}
		}
	}
	oddBuf := Buf{Data: decBytes(odd), DType: array.Float64, Shape: []int{2, 4, 4}, Strides: []int{1, 8, 2}, Offset: 3}
	want, got := decRunAll(t, a, array.Float64), decRunAll(t, oddBuf, array.Float64)
	for i := range want {
		if !slices.Equal(want[i], got[i]) {
			t.Errorf("output %d: %v from the strided batch, %v from the row-major one", i, got[i], want[i])
		}
	}
}

// TestDecompKernelsFloat32: float32 is computed in float64 and rounded
// once, so it is the float64 result of the same values, rounded.
func TestDecompKernelsFloat32(t *testing.T) {
	vals := decInput()
	a32, v32 := decBuf[float32](array.Float32, 2, 4, 4)
	a64, v64 := decBuf[float64](array.Float64, 2, 4, 4)
	for i, x := range vals {
		v32[i] = float32(x)
		v64[i] = float64(float32(x))
	}
	want, got := decRunAll(t, a64, array.Float64), decRunAll(t, a32, array.Float32)
	for i := range want {
		for j := range want[i] {
			if r := float64(float32(want[i][j])); got[i][j] != r && !(math.IsNaN(r) && math.IsNaN(got[i][j])) {
				t.Fatalf("output %d element %d: %v, want %v rounded from %v", i, j, got[i][j], r, want[i][j])
			}
		}
	}
}

func TestDecompKernelsRejectDTypes(t *testing.T) {
	ints := Buf{Data: make([]byte, 16), DType: array.Int32, Shape: []int{2, 2}, Strides: []int{2, 1}}
	f64, _ := decBuf[float64](array.Float64, 2, 2)
	f32, _ := decBuf[float32](array.Float32, 2, 2)
	w32, _ := decBuf[float32](array.Float32, 2)
	for name, err := range map[string]error{
		"Cholesky of int32":        Cholesky(f64, ints, false),
		"Cholesky into float32":    Cholesky(f32, f64, false),
		"QR of int32":              QR(f64, f64, ints),
		"SVDVals into float32":     SVDVals(w32, f64),
		"Eigvalsh of int32":        Eigvalsh(w32, ints, false),
		"Eigvals into float32":     Eigvals(w32, f32),
		"CholeskyInv into float32": CholeskyInv(f32, f64, true),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// BenchmarkLapackDecomp measures the decompositions on one n×n float64
// matrix, in GFLOP/s of the usual operation counts: potrf n³/3, geqrf
// and orgqr 4n³/3 each, syev with vectors 9n³, gesvd with full vectors
// 22n³ (LAPACK Working Note 41's estimates).
func BenchmarkLapackDecomp(b *testing.B) {
	for _, k := range []struct {
		name  string
		n     int
		flops float64
		run   func(a Buf, n int) error
	}{
		{"Cholesky", 1024, 1.0 / 3, func(a Buf, n int) error {
			o, _ := decBuf[float64](array.Float64, n, n)
			return Cholesky(o, a, false)
		}},
		{"QR", 1024, 8.0 / 3, func(a Buf, n int) error {
			q, _ := decBuf[float64](array.Float64, n, n)
			r, _ := decBuf[float64](array.Float64, n, n)
			return QR(q, r, a)
		}},
		{"Eigh", 512, 9, func(a Buf, n int) error {
			w, _ := decBuf[float64](array.Float64, n)
			v, _ := decBuf[float64](array.Float64, n, n)
			return Eigh(w, v, a, false)
		}},
		{"SVD", 512, 22, func(a Buf, n int) error {
			u, _ := decBuf[float64](array.Float64, n, n)
			s, _ := decBuf[float64](array.Float64, n)
			vt, _ := decBuf[float64](array.Float64, n, n)
			return SVD(u, s, vt, a)
		}},
	} {
		n := k.n
		a, v := decBuf[float64](array.Float64, n, n)
		for i := range n {
			for j := range n {
				v[i*n+j] = math.Sin(float64(i*n+j)) + math.Cos(float64(j*n+i))
			}
			v[i*n+i] += 2 * float64(n)
		}
		b.Run(fmt.Sprintf("%s/%d", k.name, n), func(b *testing.B) {
			for b.Loop() {
				if err := k.run(a, n); err != nil {
					b.Fatal(err)
				}
			}
			nf := float64(n)
			b.ReportMetric(k.flops*nf*nf*nf*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// TestDecompEighLarge checks Eigh on a matrix large enough for the QL
// iteration to split its rotations over cores: A·V = V·diag(w), Vᵀ·V = I,
// and the values those of Eigvalsh (gonum's Dsyev, a different path).
func TestDecompEighLarge(t *testing.T) {
	const n = 192
	a, av := decBuf[float64](array.Float64, n, n)
	for i := range n {
		for j := range i + 1 {
			x := math.Sin(float64(3*i+7*j)) / float64(1+i-j)
			av[i*n+j], av[j*n+i] = x, x
		}
	}
	w, wv := decBuf[float64](array.Float64, n)
	v, vv := decBuf[float64](array.Float64, n, n)
	w2, wv2 := decBuf[float64](array.Float64, n)
	if err := Eigh(w, v, a, false); err != nil {
		t.Fatal(err)
	}
	if err := Eigvalsh(w2, a, true); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if math.Abs(wv[i]-wv2[i]) > 1e-12*(1+math.Abs(wv2[i])) {
			t.Fatalf("eigenvalue %d: %v, Eigvalsh gives %v", i, wv[i], wv2[i])
		}
		if i > 0 && wv[i] < wv[i-1] {
			t.Fatalf("eigenvalues %d and %d out of order: %v %v", i-1, i, wv[i-1], wv[i])
		}
	}
	eighCheckVectors(t, "", av, vv, wv, n, 1e-11, 1e-12)
}

// eighCheckVectors checks the eigenpairs of the row-major n×n symmetric
// a: A·V = V·diag(w) to res and Vᵀ·V = I to ortho, the failures named
// by name.
func eighCheckVectors(t *testing.T, name string, a, v, w []float64, n int, res, ortho float64) {
	t.Helper()
	for i := range n {
		for j := range n {
			avj, vtv := 0.0, 0.0
			for k := range n {
				avj += a[i*n+k] * v[k*n+j]
				vtv += v[k*n+i] * v[k*n+j]
			}
			if d := avj - v[i*n+j]*w[j]; math.Abs(d) > res {
				t.Fatalf("%s(A·V - V·diag(w))[%d %d] = %v", name, i, j, d)
			}
			if i == j {
				vtv--
			}
			if math.Abs(vtv) > ortho {
				t.Fatalf("%s(Vᵀ·V - I)[%d %d] = %v", name, i, j, vtv)
			}
		}
	}
}
