package workload

import (
	"math"
	"testing"

	"github.com/fathom-go/fathom/array"
)

// TestTriad checks a = b + 3c element by element, over a length that
// leaves a partial chunk and a partial vector.
func TestTriad(t *testing.T) {
	const n = 1<<17 + 13
	tr := NewTriad(n)
	clear(tr.a)
	tr.Run()
	b, c := RandF32(n, 1), RandF32(n, 2)
	for i, got := range tr.A() {
		want := float64(b[i]) + 3*float64(c[i])
		if math.Abs(float64(got)-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Fatalf("a[%d] = %v, want b + 3c = %v", i, got, want)
		}
	}
	if got := TriadBytes(n); got != 12*n {
		t.Errorf("TriadBytes(%d) = %d, want %d", n, got, 12*n)
	}
}

// TestGELU compares GELU with its formula evaluated in float64.
func TestGELU(t *testing.T) {
	xs := []float32{-4, -1, -0.5, 0, 0.25, 1, 3}
	got, err := array.ToSlice[float32](GELU(array.FromSlice(xs, len(xs)))[0])
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range xs {
		v := float64(x)
		want := 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
		if math.Abs(float64(got[i])-want) > 1e-6 {
			t.Errorf("GELU(%v) = %v, want %v", x, got[i], want)
		}
	}
}

// TestRand checks the inputs' range and that a seed fixes them.
func TestRand(t *testing.T) {
	a, b, c := RandF32(1000, 7), RandF32(1000, 7), RandF32(1000, 8)
	same := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("RandF32 with one seed differs at %d: %v, %v", i, a[i], b[i])
		}
		if a[i] < -1 || a[i] >= 1 {
			t.Fatalf("RandF32[%d] = %v, outside [-1, 1)", i, a[i])
		}
		if a[i] == c[i] {
			same++
		}
	}
	if same > 10 {
		t.Errorf("RandF32 with seeds 7 and 8 agree at %d of 1000 places", same)
	}
	for i, v := range RandF64(1000, 7) {
		if v < -1 || v >= 1 {
			t.Fatalf("RandF64[%d] = %v, outside [-1, 1)", i, v)
		}
	}
}
