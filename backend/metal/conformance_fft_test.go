package metal_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand"
	"testing"

	"gonum.org/v1/gonum/dsp/fourier"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
)

// Cases of FFT: every length from 1 to 64 that the GPU takes, powers of
// 2, 3, 5 and 7 and mixed lengths on both sides of the one-pass limit of
// 2048 and up to 2^16 (four-step), forward and inverse, over batches of
// rows in every input layout. The CPU side is a reference on the host in
// float64 (a direct DFT up to 64 points, gonum's complex128 FFT above),
// so the suite checks the kernel against the transform itself. Errors
// are measured against the RMS of the row's result, the scale of a
// float32 FFT's rounding error.

func init() { registerFamily("fft", fftCases) }

// fftTol bounds |got - want| / rms(want row). The largest ratio of the
// cases is 1.1e-6 (44100 points: eight passes of radices 2 to 7, and
// the most elements), 2^16 gives 7e-7: the worst of tens of thousands of
// errors of about float32's 6e-8 times the square root of the number of
// passes.
const fftTol = 2.5e-6

func fftCases() []Case {
	unit := func(r *rand.Rand, _ int) float64 { return 2*r.Float64() - 1 }
	var cs []Case
	add := func(shape []int, layout Layout, inverse bool) {
		dir := "forward"
		if inverse {
			dir = "inverse"
		}
		cs = append(cs, Case{
			Name:  fmt.Sprintf("FFT/%s/%v/%v", dir, shape, layout),
			In:    []Operand{Op(array.Complex64, shape...).With(layout).Values(unit)},
			Out:   []Operand{Op(array.Complex64, shape...)},
			GPU:   func(out, in []metal.View) ([]metal.Launch, error) { return metal.FFT(out[0], in[0], inverse) },
			CPU:   func(out, in []cpu.Buf) error { return hostFFT(out[0], in[0], inverse) },
			Check: func(_ int, got, want cpu.Buf) string { return checkFFT(got, want, fftTol) },
		})
	}
	layouts := []Layout{Contig, Transposed, Sliced, Broadcast}
	batches := []int{1, 3, 5, 2}
	for n := 1; n <= 64; n++ {
		if !metal.FFTSupported(n) {
			continue
		}
		add([]int{batches[n%4], n}, layouts[n%4], false)
		add([]int{batches[n%4], n}, layouts[(n+1)%4], true)
	}
	for _, c := range []struct {
		shape  []int
		layout Layout
	}{
		{[]int{}, Contig},
		{[]int{5}, Contig},
		{[]int{2, 3, 12}, Transposed}, // batch dims that do not merge: copied first
		{[]int{37, 16}, Contig},       // fewer lines than 64 threadgroups: one each
		{[]int{333, 8}, Sliced},       // six lines a threadgroup, the last group partial
		{[]int{0, 8}, Contig},
		{[]int{4, 0}, Contig},
		{[]int{2, 128}, Contig},
		{[]int{3, 243}, Transposed},
		{[]int{2, 343}, Sliced},
		{[]int{1, 625}, Contig},
		{[]int{2, 1000}, Broadcast},
		{[]int{1, 1680}, Contig},
		{[]int{2, 2048}, Sliced},
		{[]int{1, 2187}, Contig},
		{[]int{2, 2401}, Transposed},
		{[]int{1, 3125}, Sliced},
		{[]int{3, 4096}, Contig},
		{[]int{2, 2, 4096}, Transposed}, // copied into scratch for the four steps
	} {
		for _, inv := range []bool{false, true} {
			add(c.shape, c.layout, inv)
		}
	}
	// The longest lines, one direction each (the harness is slow).
	add([]int{1, 6000}, Broadcast, false)
	add([]int{1, 44100}, Contig, true)
	add([]int{1, 65536}, Sliced, false)
	for _, bad := range []struct {
		name    string
		in, out Operand
		want    string
	}{
		{"prime 11", Op(array.Complex64, 2, 11), Op(array.Complex64, 2, 11), "length 11"},
		{"factor 13", Op(array.Complex64, 26), Op(array.Complex64, 26), "prime factors are 2, 3, 5 and 7"},
		{"float32", Op(array.Float32, 2, 8), Op(array.Complex64, 2, 8), "complex64"},
		{"float32 output", Op(array.Complex64, 2, 8), Op(array.Float32, 2, 8), "complex64"},
		{"shapes", Op(array.Complex64, 2, 8), Op(array.Complex64, 2, 4), "want the input's [2 8]"},
		{"strided output", Op(array.Complex64, 2, 8), Op(array.Complex64, 2, 8).With(Sliced), "not row-major"},
	} {
		cs = append(cs, Case{
			Name:    "FFT/refused/" + bad.name,
			In:      []Operand{bad.in},
			Out:     []Operand{bad.out},
			GPU:     func(out, in []metal.View) ([]metal.Launch, error) { return metal.FFT(out[0], in[0], false) },
			WantErr: bad.want,
		})
	}
	return cs
}

// fftRows reads b's elements (complex64, any strides) in row-major order
// as rows of its last axis, in complex128.
func fftRows(b cpu.Buf) [][]complex128 {
	nd := len(b.Shape)
	n := 1
	if nd > 0 {
		n = b.Shape[nd-1]
	}
	size := b.Size()
	if size == 0 {
		return nil
	}
	rows := make([][]complex128, size/n)
	idx := make([]int, nd)
	for i := 0; i < size; i++ {
		off := b.Offset
		for k := range idx {
			off += idx[k] * b.Strides[k]
		}
		v, _ := elemAt(b.Data, b.DType, off)
		rows[i/n] = append(rows[i/n], v)
		for k := nd - 1; k >= 0; k-- {
			idx[k]++
			if idx[k] < b.Shape[k] {
				break
			}
			idx[k] = 0
		}
	}
	return rows
}

// fftDirect is the transform by definition, in float64 (the reference up
// to 64 points, and the check of gonum's above).
func fftDirect(x []complex128, inverse bool) []complex128 {
	n := len(x)
	sign := -1.0
	if inverse {
		sign = 1
	}
	// Roots indexed by j·k mod n keep every angle exact.
	w := make([]complex128, n)
	for m := range w {
		w[m] = cmplx.Exp(complex(0, sign*2*math.Pi*float64(m)/float64(n)))
	}
	y := make([]complex128, n)
	for k := range y {
		var s complex128
		for j, v := range x {
			s += v * w[j*k%n]
		}
		y[k] = s
	}
	return y
}

// refFFT is the float64 reference of one row.
func refFFT(x []complex128, inverse bool) []complex128 {
	if len(x) <= 64 {
		return fftDirect(x, inverse)
	}
	f := fourier.NewCmplxFFT(len(x))
	if inverse {
		return f.Sequence(nil, x)
	}
	return f.Coefficients(nil, x)
}

// hostFFT is the CPU side of the FFT cases: out (row-major complex64)
// is the unnormalised transform of each row of in.
func hostFFT(out, in cpu.Buf, inverse bool) error {
	for r, row := range fftRows(in) {
		for k, v := range refFFT(row, inverse) {
			p := out.Data[(out.Offset+r*len(row)+k)*8:]
			binary.LittleEndian.PutUint32(p, math.Float32bits(float32(real(v))))
			binary.LittleEndian.PutUint32(p[4:], math.Float32bits(float32(imag(v))))
		}
	}
	return nil
}

// fftError returns the largest |got - want| over each row's RMS of want.
func fftError(got, want cpu.Buf) (worst float64, at string) {
	wr := fftRows(want)
	for r, g := range fftRows(got) {
		var ss float64
		for _, w := range wr[r] {
			ss += real(w)*real(w) + imag(w)*imag(w)
		}
		rms := math.Sqrt(ss / float64(len(g)))
		for k, v := range g {
			e := cmplx.Abs(v - wr[r][k])
			if rms > 0 {
				e /= rms
			}
			if !(e <= worst) {
				worst, at = e, fmt.Sprintf("row %d, element %d: got %v, want %v", r, k, v, wr[r][k])
			}
		}
	}
	return worst, at
}

// checkFFT reports the worst element of got if its error is above tol
// of its row's RMS, or "".
func checkFFT(got, want cpu.Buf, tol float64) string {
	if e, at := fftError(got, want); !(e <= tol) {
		return fmt.Sprintf("%s: error %.3g of the row's RMS, more than %g", at, e, tol)
	}
	return ""
}

// TestFFTReference checks the reference itself: gonum's transform and
// the direct DFT agree, and the reference gives the known transforms of
// a pure tone and of an impulse, so the suite does not compare the
// kernel with a wrong answer.
func TestFFTReference(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for _, n := range []int{1, 2, 7, 12, 65, 128, 243, 1001} {
		x := make([]complex128, n)
		for i := range x {
			x[i] = complex(r.Float64()-0.5, r.Float64()-0.5)
		}
		for _, inv := range []bool{false, true} {
			f := fourier.NewCmplxFFT(n)
			g := f.Coefficients(nil, x)
			if inv {
				g = f.Sequence(nil, x)
			}
			for k, v := range fftDirect(x, inv) {
				if cmplx.Abs(v-g[k]) > 1e-9*float64(n) {
					t.Fatalf("n=%d inverse=%v: element %d: DFT %v, gonum %v", n, inv, k, v, g[k])
				}
			}
		}
	}
	const n = 10
	tone := make([]complex128, n)
	for j := range tone {
		tone[j] = cmplx.Exp(complex(0, 2*math.Pi*3*float64(j)/n))
	}
	for k, v := range refFFT(tone, false) {
		want := complex(0, 0)
		if k == 3 {
			want = n
		}
		if cmplx.Abs(v-want) > 1e-12 {
			t.Errorf("FFT of exp(2πi·3j/10): element %d = %v, want %v", k, v, want)
		}
	}
	imp := make([]complex128, n)
	imp[1] = 1
	for k, v := range refFFT(imp, true) {
		if want := cmplx.Exp(complex(0, 2*math.Pi*float64(k)/n)); cmplx.Abs(v-want) > 1e-12 {
			t.Errorf("inverse FFT of an impulse at 1: element %d = %v, want %v", k, v, want)
		}
	}
}

// TestFFTSupported pins the lengths the GPU takes: 7-smooth, and at most
// 2048 or a product of two factors of at most 2048.
func TestFFTSupported(t *testing.T) {
	for _, c := range []struct {
		n    int
		want bool
	}{
		{-4, false}, {0, false}, {1, true}, {2, true}, {11, false}, {49, true}, {210, true},
		{2048, true}, {2187, true}, {4097, false}, {3 * 4099, false}, {1 << 20, true}, {1 << 22, true},
		{1 << 23, false}, {823543, false}, // 7^7: no split into two factors of at most 2048
		{1953125, false}, {117649, true}, {390625, true}, {2401 * 2, true}, {1000000, true},
	} {
		if got := metal.FFTSupported(c.n); got != c.want {
			t.Errorf("FFTSupported(%d) = %v, want %v", c.n, got, c.want)
		}
	}
}

// TestFFTGridStrideLoops runs FFT cases of one and two launches with the
// grid capped at two threadgroups, so that each threadgroup transforms
// several groups of lines in turn.
func TestFFTGridStrideLoops(t *testing.T) {
	requireHarness(t)
	defer metal.SetGridGroups(2)()
	ran := 0
	for _, c := range fftCases() {
		switch c.Name {
		case "FFT/forward/[333 8]/sliced", "FFT/inverse/[37 16]/contig", "FFT/forward/[3 4096]/contig":
			runCase(t, c)
			ran++
		}
	}
	if ran != 3 {
		t.Errorf("ran %d cases, want 3: a case was renamed", ran)
	}
}
