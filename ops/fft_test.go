package ops_test

import (
	"errors"
	"math/cmplx"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// Package fft's tests check the transforms against numpy; these check
// the primitives' own contract: values on views, the real axis moved to
// the end and back, compile, and bad arguments.

func c64s(t *testing.T, a *array.Array) []complex64 {
	t.Helper()
	v, err := array.ToSlice[complex64](ops.AsType(a, array.Complex64))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func wantC64(t *testing.T, what string, got, want []complex64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if cmplx.Abs(complex128(got[i]-want[i])) > 1e-5 {
			t.Fatalf("%s: element %d is %v, want %v (all: %v)", what, i, got[i], want[i], got)
		}
	}
}

func TestFFTPrimitiveValues(t *testing.T) {
	x := array.FromSlice([]float32{1, 2, 3, 4}, 4)
	wantC64(t, "FFT", c64s(t, ops.FFT(x, []int{0}, false, 1)), []complex64{10, -2 + 2i, -2, -2 - 2i})
	wantC64(t, "inverse, scaled", c64s(t, ops.FFT(x, []int{0}, true, 0.25)), []complex64{2.5, -0.5 - 0.5i, -0.5, -0.5 + 0.5i})
	wantC64(t, "RFFT", c64s(t, ops.RFFT(x, []int{0}, 1)), []complex64{10, -2 + 2i, -2})
	spec := array.FromSlice([]complex64{10, -2 + 2i, -2}, 3)
	wantC64(t, "IRFFT", c64s(t, ops.IRFFT(spec, []int{0}, 4, 0.25)), []complex64{1, 2, 3, 4})
	wantC64(t, "IRFFT odd", c64s(t, ops.IRFFT(array.FromSlice([]complex64{3, 0}, 2), []int{0}, 3, 1)), []complex64{3, 3, 3})

	// a transposed view: the columns of m are [1 2 3 4] and [0 1 0 1]
	m := ops.Transpose(array.FromSlice([]float32{1, 2, 3, 4, 0, 1, 0, 1}, 2, 4))
	wantC64(t, "transposed, axis 0", c64s(t, ops.FFT(m, []int{0}, false, 1)),
		[]complex64{10, 2, -2 + 2i, 0, -2, -2, -2 - 2i, 0})
	// the real axis first: RFFT moves it last for the primitive and back
	r := ops.RFFT(m, []int{0}, 1)
	if s := r.Shape(); s[0] != 3 || s[1] != 2 {
		t.Fatalf("RFFT over axis 0 of [4 2]: shape %v, want [3 2]", s)
	}
	wantC64(t, "RFFT axis 0", c64s(t, r), []complex64{10, 2, -2 + 2i, 0, -2, -2})
	back := ops.IRFFT(r, []int{0}, 4, 0.25)
	wantC64(t, "IRFFT axis 0", c64s(t, back), c64s(t, m))
}

func TestFFTCompiles(t *testing.T) {
	f := compile.Compile(func(in ...*array.Array) []*array.Array {
		return []*array.Array{ops.IRFFT(ops.RFFT(in[0], []int{0, 1}, 1), []int{0, 1}, 6, 1.0/18)}
	})
	defer f.Release()
	x := array.FromSlice([]float32{1, -2, 3, 0.5, 5, 6, 7, -8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 3, 6)
	for range 2 {
		wantC64(t, "compiled round trip", c64s(t, f.Call(x)[0]), c64s(t, x))
	}
	// and under Vmap, batched on the last axis
	g := graph.Vmap(func(in ...*array.Array) []*array.Array {
		return []*array.Array{ops.FFT(in[0], []int{0}, false, 1)}
	}, []int{1}, nil)
	got := g(ops.Transpose(array.FromSlice([]float32{1, 2, 3, 4, 0, 1, 0, 1}, 2, 4)))[0]
	wantC64(t, "Vmap", c64s(t, got), []complex64{10, -2 + 2i, -2, -2 - 2i, 2, 0, -2, 0})
}

func TestFFTBadArguments(t *testing.T) {
	x := array.FromSlice(make([]complex64, 6), 2, 3)
	cases := []struct {
		name, op, want string
		f              func()
	}{
		{"axis out of range", "ops.FFT", "axis 2", func() { ops.FFT(x, []int{2}, false, 1) }},
		{"repeated axes", "ops.FFT", "[2 3]", func() { ops.FFT(x, []int{1, -1}, false, 1) }},
		{"no axes", "ops.RFFT", "[2 3]", func() { ops.RFFT(ops.Real(x), nil, 1) }},
		{"complex RFFT", "ops.RFFT", "[2 3]", func() { ops.RFFT(x, []int{1}, 1) }},
		{"empty axis", "ops.FFT", "[0 3]", func() { ops.FFT(array.FromSlice([]complex64{}, 0, 3), []int{0}, false, 1) }},
		{"IRFFT length", "ops.IRFFT", "[2 3]", func() { ops.IRFFT(x, []int{1}, 7, 1) }},
		{"IRFFT n", "ops.IRFFT", "[2 3]", func() { ops.IRFFT(x, []int{1}, 0, 1) }},
		{"nil", "ops.FFT", "nil", func() { ops.FFT(nil, []int{0}, false, 1) }},
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
