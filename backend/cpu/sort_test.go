package cpu

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fathom-go/fathom/array"
)

// radixLine draws n values with ties, both zeros, infinities and NaNs of
// either sign, the cases the radix sort's key mapping must order.
func radixLine(r *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		switch k := r.IntN(50); {
		case k == 0:
			v[i] = math.NaN()
		case k == 1:
			v[i] = math.Copysign(math.NaN(), -1)
		case k == 2:
			v[i] = math.Inf(1)
		case k == 3:
			v[i] = math.Inf(-1)
		case k == 4:
			v[i] = math.Copysign(0, -1)
		case k == 5:
			v[i] = 0
		case k < 20:
			v[i] = float64(r.IntN(7) - 3)
		default:
			v[i] = r.NormFloat64() * math.Pow(10, float64(r.IntN(60)-30))
		}
	}
	return v
}

// TestSortLongFloatLines checks the radix sorts of lines at and beyond
// radixMin against slices.SortFunc in numpy's order (NaN last), along
// the last axis and along axis 0 of a transposed view, for float32,
// float64 and float16 (float32 keys), and ArgSort against the stable
// order.
func TestSortLongFloatLines(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	same := func(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }
	for _, n := range []int{radixMin - 1, radixMin, 3*radixMin + 17} {
		const lines = 3
		v := radixLine(r, lines*n)
		want := slices.Clone(v)
		for l := range lines {
			slices.SortFunc(want[l*n:(l+1)*n], cmpNaNLast[float64])
		}
		check := func(name string, got []float64) {
			t.Helper()
			for i := range want {
				if !same(got[i], want[i]) {
					t.Fatalf("%s n=%d: element %d is %v, want %v", name, n, i, got[i], want[i])
				}
			}
		}
		f64, out := newOut(array.Float64, 0.0, lines, n)
		if err := Sort(out, viewOf(v, array.Float64, []int{lines, n}, nil, 0), 1); err != nil {
			t.Fatal(err)
		}
		check("float64", f64)
		pos, outPos := newOut(array.Int32, int32(-1), lines, n)
		if err := ArgSort(outPos, viewOf(v, array.Float64, []int{lines, n}, nil, 0), 1); err != nil {
			t.Fatal(err)
		}
		for l := range lines {
			line := v[l*n : (l+1)*n]
			wantPos := make([]int32, n)
			for j := range wantPos {
				wantPos[j] = int32(j)
			}
			// numpy's stable order: -0 and 0 tie, NaNs last in their order.
			slices.SortStableFunc(wantPos, func(i, j int32) int { return cmpNaNLast(line[i], line[j]) })
			if got := pos[l*n : (l+1)*n]; !slices.Equal(got, wantPos) {
				t.Fatalf("ArgSort float64 n=%d line %d differs from the stable order", n, l)
			}
		}
		pos32, outPos32 := newOut(array.Int32, int32(-1), lines, n)
		v32s := make([]float32, len(v))
		for i, x := range v {
			v32s[i] = float32(x)
		}
		if err := ArgSort(outPos32, viewOf(v32s, array.Float32, []int{lines, n}, nil, 0), 1); err != nil {
			t.Fatal(err)
		}
		for l := range lines {
			line := v32s[l*n : (l+1)*n]
			wantPos := make([]int32, n)
			for j := range wantPos {
				wantPos[j] = int32(j)
			}
			slices.SortStableFunc(wantPos, func(i, j int32) int { return cmpNaNLast(line[i], line[j]) })
			if got := pos32[l*n : (l+1)*n]; !slices.Equal(got, wantPos) {
				t.Fatalf("ArgSort float32 n=%d line %d differs from the stable order", n, l)
			}
		}
		// The same values stored as columns: lines along axis 0.
		cols := make([]float64, len(v))
		for l := range lines {
			for j := range n {
				cols[j*lines+l] = v[l*n+j]
			}
		}
		f64t, outT := newOut(array.Float64, 0.0, n, lines)
		if err := Sort(outT, viewOf(cols, array.Float64, []int{n, lines}, nil, 0), 0); err != nil {
			t.Fatal(err)
		}
		back := make([]float64, len(v))
		for l := range lines {
			for j := range n {
				back[l*n+j] = f64t[j*lines+l]
			}
		}
		check("float64 along axis 0", back)

		v32 := make([]float32, len(v))
		for i, x := range v {
			v32[i] = float32(x)
		}
		want32 := make([]float64, len(v))
		for i, x := range v32 {
			want32[i] = float64(x)
		}
		for l := range lines {
			slices.SortFunc(want32[l*n:(l+1)*n], cmpNaNLast[float64])
		}
		f32, out32 := newOut(array.Float32, float32(0), lines, n)
		if err := Sort(out32, viewOf(v32, array.Float32, []int{lines, n}, nil, 0), 1); err != nil {
			t.Fatal(err)
		}
		for i := range want32 {
			if g := float64(f32[i]); !same(g, want32[i]) {
				t.Fatalf("float32 n=%d: element %d is %v, want %v", n, i, g, want32[i])
			}
		}

		h := make([]array.F16, len(v))
		for i, x := range v {
			h[i] = array.NewF16(float32(x))
		}
		wantH := make([]float64, len(v))
		for i, x := range h {
			wantH[i] = float64(x.Float32())
		}
		for l := range lines {
			slices.SortFunc(wantH[l*n:(l+1)*n], cmpNaNLast[float64])
		}
		gh, outH := newOut(array.Float16, array.NewF16(0), lines, n)
		if err := Sort(outH, viewOf(h, array.Float16, []int{lines, n}, nil, 0), 1); err != nil {
			t.Fatal(err)
		}
		for i := range wantH {
			if g := float64(gh[i].Float32()); !same(g, wantH[i]) {
				t.Fatalf("float16 n=%d: element %d is %v, want %v", n, i, g, wantH[i])
			}
		}
	}
}
