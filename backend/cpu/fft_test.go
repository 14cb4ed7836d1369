package cpu

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"gonum.org/v1/gonum/dsp/fourier"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/strided"
)

// gonum's dsp/fourier, in complex128, is the reference of these tests.

func randC64(r *rand.Rand, n int) []complex64 {
	v := make([]complex64, n)
	for i := range v {
		v[i] = complex(float32(r.NormFloat64()), float32(r.NormFloat64()))
	}
	return v
}

func c64Buf(v []complex64, shape ...int) Buf {
	var data []byte
	if len(v) > 0 {
		data = unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 8*len(v))
	}
	return Buf{Data: data, DType: array.Complex64, Shape: shape, Strides: strided.RowMajor(shape)}
}

func f32Buf(v []float32, shape ...int) Buf {
	var data []byte
	if len(v) > 0 {
		data = unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
	}
	return Buf{Data: data, DType: array.Float32, Shape: shape, Strides: strided.RowMajor(shape)}
}

// gonumFFT is the reference transform of x (inverse: unnormalised, sign +).
func gonumFFT(x []complex64, inverse bool) []complex128 {
	n := len(x)
	in := make([]complex128, n)
	for i, v := range x {
		in[i] = complex128(v)
	}
	f := fourier.NewCmplxFFT(n)
	if inverse {
		return f.Sequence(nil, in)
	}
	return f.Coefficients(nil, in)
}

// directDFT is the transform of x at the frequencies ks, summed in
// float64: the reference for long lengths with a large prime factor,
// where gonum's transform takes O(n²).
func directDFT(x []complex64, ks []int) []complex128 {
	n := len(x)
	out := make([]complex128, len(ks))
	for i, k := range ks {
		var s complex128
		for j, v := range x {
			sn, cs := math.Sincos(-2 * math.Pi * float64(j*k%n) / float64(n))
			s += complex128(v) * complex(cs, sn)
		}
		out[i] = s
	}
	return out
}

// sampled checks got at a few frequencies against directDFT.
func sampled(t *testing.T, what string, x, got []complex64) {
	t.Helper()
	n := len(x)
	var ks []int
	for _, k := range []int{0, 1, 2, n / 3, n / 2, n - 1} {
		if k < len(got) {
			ks = append(ks, k)
		}
	}
	g := make([]complex64, len(ks))
	for i, k := range ks {
		g[i] = got[k]
	}
	want := directDFT(x, ks)
	// the whole-vector tolerance of closeTo, for n values of this size
	var norm float64
	for _, v := range x {
		norm += float64(real(v)*real(v) + imag(v)*imag(v))
	}
	scale := math.Sqrt(norm) // the rms size of a transform of n values
	tol := 2e-6 * (1 + math.Log2(float64(n))) * scale
	for i := range ks {
		if d := cmplx.Abs(complex128(g[i]) - want[i]); !(d <= tol) {
			t.Fatalf("%s: frequency %d is %v, want %v (|diff| %.3g > %.3g)", what, ks[i], g[i], want[i], d, tol)
		}
	}
}

// closeTo fails unless got is within a float32 FFT's error of want,
// relative to want's root-mean-square size.
func closeTo(t *testing.T, what string, got []complex64, want []complex128) {
	t.Helper()
	var norm float64
	for _, w := range want {
		norm += real(w)*real(w) + imag(w)*imag(w)
	}
	norm = math.Sqrt(norm / float64(max(1, len(want))))
	tol := 2e-6 * (1 + math.Log2(float64(max(2, len(want))))) * max(norm, 1e-30)
	for i := range want {
		if d := cmplx.Abs(complex128(got[i]) - want[i]); !(d <= tol) {
			t.Fatalf("%s: element %d is %v, want %v (|diff| %.3g > %.3g)", what, i, got[i], want[i], d, tol)
		}
	}
}

func fftLengths() []int {
	var ns []int
	for n := 1; n <= 64; n++ {
		ns = append(ns, n)
	}
	return append(ns, 67, 71, 97, 101, 121, 125, 128, 243, 343, 360, 1000, 1009, 2187, 4096, 3125, 2401, 4099)
}

func TestFFTAgainstGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range fftLengths() {
		for _, inverse := range []bool{false, true} {
			x := randC64(r, n)
			out := make([]complex64, n)
			if err := FFT(c64Buf(out, n), c64Buf(x, n), []int{0}, inverse, 1); err != nil {
				t.Fatal(err)
			}
			closeTo(t, fmt.Sprintf("n=%d inverse=%v", n, inverse), out, gonumFFT(x, inverse))
		}
	}
}

// TestFFTLongVectors covers the four-step split (a power of two, and a
// length with odd factors) and Bluestein over a four-step power of two
// (a prime), on one core and on two.
func TestFFTLongVectors(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, procs := range []int{1, 2} {
		old := runtime.GOMAXPROCS(procs)
		for _, n := range []int{1 << 16, 3 * 5 * 7 * 7 * 64, 32771} {
			x := randC64(r, n)
			out := make([]complex64, n)
			if err := FFT(c64Buf(out, n), c64Buf(x, n), []int{0}, false, 1); err != nil {
				t.Fatal(err)
			}
			what := fmt.Sprintf("n=%d procs=%d", n, procs)
			if n == 32771 {
				sampled(t, what, x, out)
			} else {
				closeTo(t, what, out, gonumFFT(x, false))
			}
		}
		runtime.GOMAXPROCS(old)
	}
}

// TestFFTAxes transforms each axis of a 3-D array (rows, column tiles
// with a partial last tile, the outermost axis) and checks every line
// against gonum.
func TestFFTAxes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	shape := []int{6, 35, 21}
	x := randC64(r, 6*35*21)
	st := strided.RowMajor(shape)
	for axis := range shape {
		out := make([]complex64, len(x))
		if err := FFT(c64Buf(out, shape...), c64Buf(x, shape...), []int{axis}, false, 0.5); err != nil {
			t.Fatal(err)
		}
		n := shape[axis]
		for start := range x {
			if start/st[axis]%n != 0 {
				continue
			}
			line := make([]complex64, n)
			got := make([]complex64, n)
			for j := range n {
				line[j] = x[start+j*st[axis]]
				got[j] = out[start+j*st[axis]]
			}
			want := gonumFFT(line, false)
			for j := range want {
				want[j] *= 0.5
			}
			closeTo(t, fmt.Sprintf("axis %d line at %d", axis, start), got, want)
		}
	}
}

func TestRFFTAndIRFFTAgainstGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	lengths := append(fftLengths(), 1<<16, 2*32771)
	for _, n := range lengths {
		const rows = 2
		x := make([]float32, rows*n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		h1 := n/2 + 1
		out := make([]complex64, rows*h1)
		if err := RFFT(c64Buf(out, rows, h1), f32Buf(x, rows, n), []int{1}, 2); err != nil {
			t.Fatal(err)
		}
		back := make([]float32, rows*n)
		if err := IRFFT(f32Buf(back, rows, n), c64Buf(out, rows, h1), []int{1}, 1/(2*float64(n))); err != nil {
			t.Fatal(err)
		}
		for row := range rows {
			line := make([]complex64, n)
			for j := range n {
				line[j] = complex(x[row*n+j], 0)
			}
			what := fmt.Sprintf("RFFT n=%d row %d", n, row)
			got := out[row*h1 : row*h1+h1]
			if n > 5000 {
				half := make([]complex64, h1)
				for k := range half {
					half[k] = got[k] / 2
				}
				sampled(t, what, line, half)
			} else {
				want := gonumFFT(line, false)[:h1]
				for k := range want {
					want[k] *= 2
				}
				closeTo(t, what, got, want)
			}
			gotBack := make([]complex64, n)
			wantBack := make([]complex128, n)
			for j := range n {
				gotBack[j] = complex(back[row*n+j], 0)
				wantBack[j] = complex(float64(x[row*n+j]), 0)
			}
			closeTo(t, fmt.Sprintf("IRFFT(RFFT) n=%d row %d", n, row), gotBack, wantBack)
		}
	}
}

// TestIRFFTIgnoresImaginaryEdges: numpy's irfft drops the imaginary parts
// of the zero and Nyquist frequencies, which a Hermitian spectrum cannot
// have.
func TestIRFFTIgnoresImaginaryEdges(t *testing.T) {
	for _, n := range []int{6, 7} {
		h1 := n/2 + 1
		spec := []complex64{1 + 5i, 2 - 1i, 0.5 + 0.25i, 3 + 7i}[:h1]
		got := make([]float32, n)
		if err := IRFFT(f32Buf(got, n), c64Buf(spec, h1), []int{0}, 1); err != nil {
			t.Fatal(err)
		}
		full := make([]complex64, n)
		full[0] = complex(real(spec[0]), 0)
		for k := 1; k < h1; k++ {
			full[k] = spec[k]
			full[n-k] = complex(real(spec[k]), -imag(spec[k]))
		}
		if n%2 == 0 {
			full[n/2] = complex(real(spec[n/2]), 0)
		}
		want := gonumFFT(full, true)
		gotC := make([]complex64, n)
		for j := range got {
			gotC[j] = complex(got[j], 0)
		}
		closeTo(t, fmt.Sprintf("n=%d", n), gotC, want)
	}
}

// refFFTN transforms x of shape along each of axes with gonum in
// complex128, then multiplies by scale.
func refFFTN(x []complex64, shape, axes []int, inverse bool, scale float64) []complex128 {
	y := make([]complex128, len(x))
	for i, v := range x {
		y[i] = complex128(v)
	}
	st := strided.RowMajor(shape)
	for _, axis := range axes {
		n := shape[axis]
		f := fourier.NewCmplxFFT(n)
		line := make([]complex128, n)
		for start := range y {
			if start/st[axis]%n != 0 {
				continue
			}
			for j := range n {
				line[j] = y[start+j*st[axis]]
			}
			if inverse {
				f.Sequence(line, line)
			} else {
				f.Coefficients(line, line)
			}
			for j := range n {
				y[start+j*st[axis]] = line[j]
			}
		}
	}
	for i := range y {
		y[i] *= complex(scale, 0)
	}
	return y
}

// TestFFTScaleOnce: the scale rides on the last pass, whichever path
// (rows read straight from the input, the copy and passes in place, the
// four-step split of long rows) that is, and it applies exactly once
// over several axes; the input is left as it was.
func TestFFTScaleOnce(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	const long = fourStepFrom
	for _, c := range []struct {
		shape, axes []int
		inverse     bool
		scale       float64
		transposed  bool // in is the transpose of a row-major array
	}{
		{[]int{3, 4, 5}, []int{0, 1, 2}, true, 0.25, false},
		{[]int{3, 4, 5}, []int{2, 0}, false, 3, true},
		{[]int{4, 6}, []int{0}, false, 0.5, false},
		{[]int{2, long}, []int{1}, true, 1.0 / long, false},
		{[]int{2, long}, []int{1}, false, 0.5, true},
		{[]int{2, long}, []int{0, 1}, false, 0.5, false},
		{[]int{long, 2}, []int{0}, true, 2, false},
	} {
		size := 1
		for _, d := range c.shape {
			size *= d
		}
		x := randC64(r, size)
		orig := append([]complex64(nil), x...)
		in := c64Buf(x, c.shape...)
		logical := x
		if c.transposed {
			// x holds the row-major transpose; in views it back in c.shape.
			nd := len(c.shape)
			rev := make([]int, nd)
			for i := range rev {
				rev[i] = c.shape[nd-1-i]
			}
			rst := strided.RowMajor(rev)
			in.Strides = make([]int, nd)
			for i := range nd {
				in.Strides[i] = rst[nd-1-i]
			}
			logical = make([]complex64, size)
			if err := Copy(c64Buf(logical, c.shape...), in); err != nil {
				t.Fatal(err)
			}
		}
		out := make([]complex64, size)
		if err := FFT(c64Buf(out, c.shape...), in, c.axes, c.inverse, c.scale); err != nil {
			t.Fatal(err)
		}
		what := fmt.Sprintf("shape %v axes %v inverse %v transposed %v", c.shape, c.axes, c.inverse, c.transposed)
		closeTo(t, what, out, refFFTN(logical, c.shape, c.axes, c.inverse, c.scale))
		for i := range x {
			if x[i] != orig[i] {
				t.Fatalf("%s: input element %d changed", what, i)
			}
		}
	}
}
