package fft_test

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/fft"
	"github.com/fathom-go/fathom/internal/refcase"
	"github.com/fathom-go/fathom/ops"
)

// intParam reads an integer parameter of a numpy reference case
// (testdata/gen_fft.py), 0 when absent.
func intParam(t *testing.T, c refcase.Case, name string) int {
	var v int
	c.Param(t, name, &v)
	return v
}

func intsParam(t *testing.T, c refcase.Case, name string) []int {
	var v []int
	c.Param(t, name, &v)
	return v
}

func normParam(t *testing.T, c refcase.Case) fft.Norm {
	var s string
	c.Param(t, "norm", &s)
	switch s {
	case "", "backward":
		return fft.Backward
	case "ortho":
		return fft.Ortho
	case "forward":
		return fft.Forward
	}
	t.Fatalf("norm %q", s)
	return 0
}

// call runs the case's function of package fft.
func call(t *testing.T, c refcase.Case) *array.Array {
	var x *array.Array
	if len(c.Inputs) > 0 {
		x = c.Inputs[0].Build(t)
	}
	n, axis := intParam(t, c, "n"), -1
	if _, ok := c.Params["axis"]; ok {
		axis = intParam(t, c, "axis")
	}
	s, axes, norm := intsParam(t, c, "s"), intsParam(t, c, "axes"), normParam(t, c)
	one := map[string]func(*array.Array, int, int, fft.Norm) *array.Array{
		"FFT": fft.FFT, "IFFT": fft.IFFT, "RFFT": fft.RFFT, "IRFFT": fft.IRFFT,
	}
	many := map[string]func(*array.Array, []int, []int, fft.Norm) *array.Array{
		"FFT2": fft.FFT2, "IFFT2": fft.IFFT2, "RFFT2": fft.RFFT2, "IRFFT2": fft.IRFFT2,
		"FFTN": fft.FFTN, "IFFTN": fft.IFFTN, "RFFTN": fft.RFFTN, "IRFFTN": fft.IRFFTN,
	}
	if f, ok := one[c.Op]; ok {
		return f(x, n, axis, norm)
	}
	if f, ok := many[c.Op]; ok {
		return f(x, s, axes, norm)
	}
	var d float64
	c.Param(t, "d", &d)
	switch c.Op {
	case "FFTFreq":
		return fft.FFTFreq(n, d)
	case "RFFTFreq":
		return fft.RFFTFreq(n, d)
	case "FFTShift":
		return fft.FFTShift(x, axes...)
	case "IFFTShift":
		return fft.IFFTShift(x, axes...)
	}
	t.Fatalf("unknown op %s", c.Op)
	return nil
}

func complexValues(t *testing.T, a *array.Array) []complex128 {
	t.Helper()
	v, err := array.ToSlice[complex64](ops.AsType(a, array.Complex64))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]complex128, len(v))
	for i, c := range v {
		out[i] = complex128(c)
	}
	return out
}

// near fails unless got is within a float32 transform's rounding of
// want: errors grow as log N, relative to the result's rms size.
func near(t *testing.T, what string, got, want []complex128) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	var ss float64
	for _, w := range want {
		ss += real(w)*real(w) + imag(w)*imag(w)
	}
	rms := math.Sqrt(ss / float64(max(len(want), 1)))
	tol := 3e-7 * (4 + 2*math.Log2(float64(max(len(want), 2)))) * rms
	for i := range want {
		if d := cmplx.Abs(got[i] - want[i]); !(d <= tol) {
			t.Fatalf("%s: element %d is %v, want %v (|diff| %.3g > %.3g)", what, i, got[i], want[i], d, tol)
		}
	}
}

func TestAgainstNumpy(t *testing.T) {
	ops := map[string]bool{}
	for _, c := range refcase.Load(t, filepath.Join("testdata", "fft.json")) {
		ops[c.Op] = true
		got := call(t, c)
		want := c.Expected[0]
		if !slices.Equal(got.Shape(), want.Shape) {
			t.Fatalf("%s: shape %v, want %v", c.Name, got.Shape(), want.Shape)
		}
		if wantDT := want.DTypeOf(t); got.DType() != wantDT {
			t.Fatalf("%s: dtype %v, want %v", c.Name, got.DType(), wantDT)
		}
		near(t, c.Name, complexValues(t, got), want.Values(t))
	}
	for _, name := range []string{"FFT", "IFFT", "RFFT", "IRFFT", "FFT2", "IFFT2", "RFFT2", "IRFFT2",
		"FFTN", "IFFTN", "RFFTN", "IRFFTN", "FFTFreq", "RFFTFreq", "FFTShift", "IFFTShift"} {
		if !ops[name] {
			t.Errorf("no numpy case for %s", name)
		}
	}
}

func randComplex(r *rand.Rand, shape ...int) *array.Array {
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]complex64, n)
	for i := range v {
		v[i] = complex(float32(r.NormFloat64()), float32(r.NormFloat64()))
	}
	return array.FromSlice(v, shape...)
}

// TestRoundTrips: the inverse of each transform gives its input back to
// 1e-6 relative (in the 2-norm) in float32, for lengths that
// run as Stockham stages, the generic odd radix, Bluestein and the
// four-step split.
func TestRoundTrips(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 21))
	for _, n := range []int{1, 2, 7, 12, 49, 60, 97, 210, 1024, 4099, 1 << 16} {
		x := randComplex(r, 2, n)
		want := complexValues(t, x)
		for _, norm := range []fft.Norm{fft.Backward, fft.Ortho, fft.Forward} {
			back := fft.IFFT(fft.FFT(x, 0, -1, norm), 0, -1, norm)
			roundTrip(t, fmt.Sprintf("IFFT(FFT) n=%d %v", n, norm), complexValues(t, back), want)
			re := ops.Real(x)
			rb := fft.IRFFT(fft.RFFT(re, 0, -1, norm), n, -1, norm)
			roundTrip(t, fmt.Sprintf("IRFFT(RFFT) n=%d %v", n, norm), complexValues(t, rb), complexValues(t, re))
		}
	}
	x := randComplex(r, 6, 10, 14)
	roundTrip(t, "IFFTN(FFTN)", complexValues(t, fft.IFFTN(fft.FFTN(x, nil, nil, fft.Ortho), nil, nil, fft.Ortho)), complexValues(t, x))
	re := ops.Real(x)
	roundTrip(t, "IRFFTN(RFFTN)", complexValues(t, fft.IRFFTN(fft.RFFTN(re, nil, nil, fft.Backward), []int{6, 10, 14}, nil, fft.Backward)), complexValues(t, re))
}

// roundTrip fails unless ‖got - want‖ ≤ 1e-6·‖want‖.
func roundTrip(t *testing.T, what string, got, want []complex128) {
	t.Helper()
	var ss, se float64
	for i, w := range want {
		d := got[i] - w
		ss += real(w)*real(w) + imag(w)*imag(w)
		se += real(d)*real(d) + imag(d)*imag(d)
	}
	if rel := math.Sqrt(se / ss); !(rel <= 1e-6) {
		t.Fatalf("%s: relative error %.3g > 1e-6", what, rel)
	}
}

// TestBadInput: bad arguments panic with *array.Error naming the
// function and the shape.
func TestBadInput(t *testing.T) {
	x := array.FromSlice(make([]complex64, 12), 3, 4)
	re := array.FromSlice(make([]float32, 12), 3, 4)
	cases := []struct {
		name, op, want string
		f              func()
	}{
		{"negative n", "fft.FFT", "[3 4]", func() { fft.FFT(x, -1, -1, fft.Backward) }},
		{"axis out of range", "fft.IFFT", "[3 4]", func() { fft.IFFT(x, 0, 2, fft.Backward) }},
		{"axis of a 0-d array", "fft.FFT", "[]", func() { fft.FFT(array.Scalar[float32](1), 0, -1, fft.Backward) }},
		{"repeated axes", "fft.FFTN", "[3 4]", func() { fft.FFTN(x, nil, []int{1, -1}, fft.Backward) }},
		{"s and axes lengths", "fft.FFT2", "[3 4]", func() { fft.FFT2(x, []int{2}, []int{0, 1}, fft.Backward) }},
		{"s longer than the shape", "fft.RFFTN", "[3 4]", func() { fft.RFFTN(re, []int{2, 2, 2}, nil, fft.Backward) }},
		{"negative s", "fft.IRFFTN", "[3 4]", func() { fft.IRFFTN(x, []int{2, -2}, nil, fft.Backward) }},
		{"empty transformed axis", "fft.FFT", "[0 4]", func() { fft.FFT(array.FromSlice([]complex64{}, 0, 4), 0, 0, fft.Backward) }},
		{"complex input of RFFT", "fft.RFFT", "[3 4]", func() { fft.RFFT(x, 0, -1, fft.Backward) }},
		{"IRFFT of one frequency", "fft.IRFFT", "[3 1]", func() { fft.IRFFT(array.FromSlice(make([]complex64, 3), 3, 1), 0, -1, fft.Backward) }},
		{"unknown norm", "fft.FFT", "norm", func() { fft.FFT(x, 0, -1, fft.Norm(7)) }},
		{"FFTFreq n", "fft.FFTFreq", "n = 0", func() { fft.FFTFreq(0, 1) }},
		{"shift axis", "fft.FFTShift", "[3 4]", func() { fft.FFTShift(x, 3) }},
		{"nil array", "fft.FFTN", "nil", func() { fft.FFTN(nil, nil, nil, fft.Backward) }},
	}
	for _, c := range cases {
		err := array.Try(c.f)
		var e *array.Error
		if !errors.As(err, &e) {
			t.Errorf("%s: got %v, want *array.Error", c.name, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, c.op) || !strings.Contains(msg, c.want) {
			t.Errorf("%s: %q does not name %s and %q", c.name, msg, c.op, c.want)
		}
	}
}

// TestEmptyBatch: a batch axis of size 0 gives an empty result of the
// right shape.
func TestEmptyBatch(t *testing.T) {
	x := array.FromSlice([]float32{}, 0, 6)
	for name, y := range map[string]*array.Array{
		"FFT": fft.FFT(x, 0, -1, fft.Backward), "RFFT": fft.RFFT(x, 0, -1, fft.Backward),
		"IRFFT": fft.IRFFT(fft.RFFT(x, 0, -1, fft.Backward), 6, -1, fft.Backward),
	} {
		if err := y.Eval(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if y.Shape()[0] != 0 {
			t.Errorf("%s: shape %v", name, y.Shape())
		}
	}
}
