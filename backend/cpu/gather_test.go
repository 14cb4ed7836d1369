package cpu

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
)

func iota32(n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(i)
	}
	return s
}

func wantKernelError(t *testing.T, name string, err error, op string, parts ...string) {
	t.Helper()
	var e *array.Error
	if !errors.As(err, &e) || e.Op != op {
		t.Errorf("%s: got %v, want a %s *array.Error", name, err, op)
		return
	}
	for _, p := range parts {
		if !strings.Contains(e.Error(), p) {
			t.Errorf("%s: %q does not mention %q", name, e.Error(), p)
		}
	}
}

func TestTake(t *testing.T) {
	// a is the transpose of a stored 4×3 matrix: a[i][j] = 3*j + i.
	ad := iota32(12)
	a := viewOf(ad, array.Float32, []int{3, 4}, []int{1, 3}, 0)
	for _, c := range []struct {
		name  string
		idx   Buf
		axis  int
		shape []int
		want  []float32
	}{
		{"rows int32", viewOf([]int32{2, -3, 2}, array.Int32, []int{3}, nil, 0), 0, []int{3, 4},
			[]float32{2, 5, 8, 11, 0, 3, 6, 9, 2, 5, 8, 11}},
		{"columns int64 2-D", viewOf([]int64{3, 0, -1, 1}, array.Int64, []int{2, 2}, nil, 0), 1, []int{3, 2, 2},
			[]float32{9, 0, 9, 3, 10, 1, 10, 4, 11, 2, 11, 5}},
		{"0-d uint8", viewOf([]uint8{1}, array.Uint8, []int{}, nil, 0), 1, []int{3},
			[]float32{3, 4, 5}},
		{"strided indices", viewOf([]int32{1, 99, 0, 99}, array.Int32, []int{2}, []int{2}, 0), 0, []int{2, 4},
			[]float32{1, 4, 7, 10, 0, 3, 6, 9}},
		{"broadcast index", viewOf([]int32{-1}, array.Int32, []int{3}, []int{0}, 0), 1, []int{3, 3},
			[]float32{9, 9, 9, 10, 10, 10, 11, 11, 11}},
		{"empty indices", viewOf([]int32{}, array.Int32, []int{0}, nil, 0), 1, []int{3, 0}, []float32{}},
	} {
		got, out := newOut(array.Float32, float32(-1), c.shape...)
		if err := Take(out, a, c.idx, c.axis); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestTakeElementSizes(t *testing.T) {
	idx := viewOf([]int32{2, 0}, array.Int32, []int{2}, nil, 0)
	c := []complex64{1 + 1i, 2 + 2i, 3 + 3i}
	gc, oc := newOut(array.Complex64, complex64(0), 2)
	if err := Take(oc, viewOf(c, array.Complex64, []int{3}, nil, 0), idx, 0); err != nil || !slices.Equal(gc, []complex64{3 + 3i, 1 + 1i}) {
		t.Errorf("complex64: %v, %v", gc, err)
	}
	b := []bool{true, false, false}
	gb, ob := newOut(array.Bool, false, 2)
	if err := Take(ob, viewOf(b, array.Bool, []int{3}, nil, 0), idx, 0); err != nil || !slices.Equal(gb, []bool{false, true}) {
		t.Errorf("bool: %v, %v", gb, err)
	}
	h := []array.F16{array.NewF16(1), array.NewF16(2), array.NewF16(3)}
	gh, oh := newOut(array.Float16, array.F16(0), 2)
	if err := Take(oh, viewOf(h, array.Float16, []int{3}, nil, 0), idx, 0); err != nil || !slices.Equal(gh, []array.F16{h[2], h[0]}) {
		t.Errorf("float16: %v, %v", gh, err)
	}
}

func TestTakeBig(t *testing.T) {
	// Above grain, so the gather runs in parallel under the race detector.
	n := 3 * grain
	ad := iota32(n)
	id := make([]int64, n)
	for i := range id {
		id[i] = int64(n - 1 - i)
	}
	got, out := newOut(array.Float32, float32(-1), n)
	if err := Take(out, viewOf(ad, array.Float32, []int{n}, nil, 0), viewOf(id, array.Int64, []int{n}, nil, 0), 0); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != float32(n-1-i) {
			t.Fatalf("element %d = %v, want %v", i, v, n-1-i)
		}
	}
	id[n/2] = int64(n)
	err := Take(out, viewOf(ad, array.Float32, []int{n}, nil, 0), viewOf(id, array.Int64, []int{n}, nil, 0), 0)
	wantKernelError(t, "big out of range", err, "cpu.Take", "index 196608", "size 196608")
}

func TestTakeBad(t *testing.T) {
	a := viewOf(iota32(6), array.Float32, []int{2, 3}, nil, 0)
	_, out := newOut(array.Float32, float32(0), 2, 2)
	for _, c := range []struct {
		name  string
		idx   Buf
		axis  int
		parts []string
	}{
		{"too big", viewOf([]int32{0, 3}, array.Int32, []int{2}, nil, 0), 1, []string{"index 3", "axis 1 of size 3"}},
		{"too negative", viewOf([]int64{-4, 0}, array.Int64, []int{2}, nil, 0), 1, []string{"index -4", "size 3"}},
		{"uint8 too big", viewOf([]uint8{200, 0}, array.Uint8, []int{2}, nil, 0), 1, []string{"index 200"}},
		{"float indices", viewOf([]float32{0, 1}, array.Float32, []int{2}, nil, 0), 1, []string{"float32"}},
	} {
		wantKernelError(t, c.name, Take(out, a, c.idx, c.axis), "cpu.Take", c.parts...)
	}
}

func TestTakeAlongAxis(t *testing.T) {
	a := viewOf([]int32{10, 11, 12, 20, 21, 22}, array.Int32, []int{2, 3}, nil, 0)
	idx := viewOf([]int64{2, 0, -1, 1}, array.Int64, []int{2, 2}, nil, 0)
	got, out := newOut(array.Int32, int32(-1), 2, 2)
	if err := TakeAlongAxis(out, a, idx, 1); err != nil {
		t.Fatal(err)
	}
	if want := []int32{12, 10, 22, 21}; !slices.Equal(got, want) {
		t.Errorf("axis 1: got %v, want %v", got, want)
	}
	// Along axis 0 with indices broadcast over columns (stride 0).
	idx0 := viewOf([]uint8{1, 0}, array.Uint8, []int{2, 3}, []int{1, 0}, 0)
	got, out = newOut(array.Int32, int32(-1), 2, 3)
	if err := TakeAlongAxis(out, a, idx0, 0); err != nil {
		t.Fatal(err)
	}
	if want := []int32{20, 21, 22, 10, 11, 12}; !slices.Equal(got, want) {
		t.Errorf("axis 0: got %v, want %v", got, want)
	}
	bad := viewOf([]int64{0, 3, 0, 0}, array.Int64, []int{2, 2}, nil, 0)
	_, out = newOut(array.Int32, int32(-1), 2, 2)
	wantKernelError(t, "out of range", TakeAlongAxis(out, a, bad, 1), "cpu.TakeAlongAxis", "index 3", "size 3")
}

func TestPutAlongAxis(t *testing.T) {
	a := viewOf([]float64{1, 2, 3, 4, 5, 6}, array.Float64, []int{2, 3}, nil, 0)
	// Row 0 writes position 2 twice: the later value (9) wins.
	idx := viewOf([]int32{2, -1, 0, 1}, array.Int32, []int{2, 2}, nil, 0)
	vals := viewOf([]float64{7, 9, 8, 0}, array.Float64, []int{2, 2}, nil, 0)
	got, out := newOut(array.Float64, math.NaN(), 2, 3)
	if err := PutAlongAxis(out, a, idx, vals, 1); err != nil {
		t.Fatal(err)
	}
	if want := []float64{1, 2, 9, 8, 0, 6}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// Values broadcast along the axis (stride 0), complex elements.
	ca := viewOf([]complex64{1, 2, 3}, array.Complex64, []int{3}, nil, 0)
	ci := viewOf([]int64{0, 2}, array.Int64, []int{2}, nil, 0)
	cv := viewOf([]complex64{5i}, array.Complex64, []int{2}, []int{0}, 0)
	gc, oc := newOut(array.Complex64, complex64(-1), 3)
	if err := PutAlongAxis(oc, ca, ci, cv, 0); err != nil {
		t.Fatal(err)
	}
	if want := []complex64{5i, 2, 5i}; !slices.Equal(gc, want) {
		t.Errorf("complex64: got %v, want %v", gc, want)
	}
	bad := viewOf([]int32{0, 3, 0, 0}, array.Int32, []int{2, 2}, nil, 0)
	_, out = newOut(array.Float64, math.NaN(), 2, 3)
	wantKernelError(t, "out of range", PutAlongAxis(out, a, bad, vals, 1), "cpu.PutAlongAxis", "index 3", "size 3")
}

func TestScatterAddAlongAxis(t *testing.T) {
	// Along axis 1 of a 2×3 output, indices read through a transposed
	// view: row 0 adds to place 0 twice (0 and -3), row 1 to place 2 three
	// times (2, -1 and 2).
	idx := viewOf([]int32{0, 2, -3, -1, 1, 2}, array.Int32, []int{2, 3}, []int{1, 2}, 0)
	upd := viewOf([]float64{1, 2, 4, 8, 16, 32}, array.Float64, []int{2, 3}, nil, 0)
	got, out := newOut(array.Float64, math.NaN(), 2, 3)
	if err := ScatterAddAlongAxis(out, idx, upd, 1); err != nil {
		t.Fatal(err)
	}
	if want := []float64{3, 4, 0, 0, 0, 56}; !slices.Equal(got, want) {
		t.Errorf("float64: got %v, want %v", got, want)
	}
	// float16 sums in float32: 1024 + 0.5 + 0.5 is 1025, though 1024 +
	// 0.5 alone rounds back to 1024 in float16.
	h := func(v ...float32) []array.F16 {
		out := make([]array.F16, len(v))
		for i, x := range v {
			out[i] = array.NewF16(x)
		}
		return out
	}
	hi := viewOf([]uint8{1, 1, 1}, array.Uint8, []int{3, 1}, nil, 0)
	hu := viewOf(h(1024, 0.5, 0.5), array.Float16, []int{3, 1}, nil, 0)
	gh, oh := newOut(array.Float16, array.NewF16(-1), 2, 1)
	if err := ScatterAddAlongAxis(oh, hi, hu, 0); err != nil {
		t.Fatal(err)
	}
	if gh[0].Float32() != 0 || gh[1].Float32() != 1025 {
		t.Errorf("float16: got [%v %v], want [0 1025]", gh[0].Float32(), gh[1].Float32())
	}
	// Broadcast updates (stride 0), int64 indices, complex64 elements,
	// and a line with no updates at all still zeroed.
	ci := viewOf([]int64{2, 2, 0}, array.Int64, []int{3}, nil, 0)
	cu := viewOf([]complex64{1 + 1i}, array.Complex64, []int{3}, []int{0}, 0)
	gc, oc := newOut(array.Complex64, complex64(-1), 4)
	if err := ScatterAddAlongAxis(oc, ci, cu, 0); err != nil {
		t.Fatal(err)
	}
	if want := []complex64{1 + 1i, 0, 2 + 2i, 0}; !slices.Equal(gc, want) {
		t.Errorf("complex64: got %v, want %v", gc, want)
	}
	gz, oz := newOut(array.Int32, int32(-1), 2, 2)
	if err := ScatterAddAlongAxis(oz, viewOf([]int32{}, array.Int32, []int{2, 0}, nil, 0), viewOf([]int32{}, array.Int32, []int{2, 0}, nil, 0), 1); err != nil {
		t.Fatal(err)
	}
	if want := []int32{0, 0, 0, 0}; !slices.Equal(gz, want) {
		t.Errorf("no updates: got %v, want %v", gz, want)
	}
	_, out = newOut(array.Float64, math.NaN(), 2, 3)
	bad := viewOf([]int32{0, 3, 0, 0, 0, 0}, array.Int32, []int{2, 3}, nil, 0)
	wantKernelError(t, "out of range", ScatterAddAlongAxis(out, bad, upd, 1), "cpu.ScatterAddAlongAxis", "index 3", "size 3")
	bools := viewOf([]bool{true}, array.Bool, []int{1}, nil, 0)
	_, ob := newOut(array.Bool, false, 1)
	wantKernelError(t, "bool", ScatterAddAlongAxis(ob, viewOf([]int32{0}, array.Int32, []int{1}, nil, 0), bools, 0), "cpu.ScatterAddAlongAxis", "bool")
}

func TestSortKernels(t *testing.T) {
	nan := float32(math.NaN())
	// Sorted along axis 0 of a transposed view: columns of the stored
	// matrix.
	d := []float32{3, nan, 1, 1, -2, 0, nan, 5, 1}
	in := viewOf(d, array.Float32, []int{3, 3}, []int{1, 3}, 0)
	got, out := newOut(array.Float32, float32(-9), 3, 3)
	if err := Sort(out, in, 0); err != nil {
		t.Fatal(err)
	}
	want := []float32{1, -2, 1, 3, 0, 5, nan, 1, nan}
	for i := range want {
		if got[i] != want[i] && !(math.IsNaN(float64(got[i])) && math.IsNaN(float64(want[i]))) {
			t.Fatalf("Sort: got %v, want %v", got, want)
		}
	}
	gi, outi := newOut(array.Int32, int32(-9), 3, 3)
	if err := ArgSort(outi, in, 0); err != nil {
		t.Fatal(err)
	}
	if w := []int32{2, 1, 2, 0, 2, 1, 1, 0, 0}; !slices.Equal(gi, w) {
		t.Errorf("ArgSort: got %v, want %v", gi, w)
	}
	gk, outk := newOut(array.Float32, float32(-9), 3, 2)
	if err := TopK(outk, viewOf(d, array.Float32, []int{3, 3}, nil, 0), 1, 2); err != nil {
		t.Fatal(err)
	}
	// Rows [3 NaN 1], [1 -2 0], [NaN 5 1]: NaN counts as the largest.
	if !math.IsNaN(float64(gk[0])) || gk[1] != 3 || gk[2] != 1 || gk[3] != 0 || !math.IsNaN(float64(gk[4])) || gk[5] != 5 {
		t.Errorf("TopK: got %v, want [NaN 3 1 0 NaN 5]", gk)
	}
}

func TestArgSortStable(t *testing.T) {
	d := []int64{2, 1, 2, 1, 0, 2}
	got, out := newOut(array.Int32, int32(-1), 6)
	if err := ArgSort(out, viewOf(d, array.Int64, []int{6}, nil, 0), 0); err != nil {
		t.Fatal(err)
	}
	if w := []int32{4, 1, 3, 0, 2, 5}; !slices.Equal(got, w) {
		t.Errorf("got %v, want %v", got, w)
	}
	// Long lines of few distinct values: pdqsort alone would reorder
	// ties; the positions must come out as a stable sort's.
	r := rand.New(rand.NewPCG(11, 12))
	long := make([]float32, 2000)
	for i := range long {
		long[i] = float32(r.IntN(5))
		if r.IntN(20) == 0 {
			long[i] = float32(math.NaN())
		}
	}
	want := make([]int32, len(long))
	for i := range want {
		want[i] = int32(i)
	}
	slices.SortStableFunc(want, func(x, y int32) int { return cmpNaNLast(long[x], long[y]) })
	got, out = newOut(array.Int32, int32(-1), len(long))
	if err := ArgSort(out, viewOf(long, array.Float32, []int{len(long)}, nil, 0), 0); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("long line: ArgSort is not the stable order")
	}
	b := []bool{true, false, true, false}
	gb, ob := newOut(array.Bool, true, 4)
	if err := Sort(ob, viewOf(b, array.Bool, []int{4}, nil, 0), 0); err != nil || !slices.Equal(gb, []bool{false, false, true, true}) {
		t.Errorf("bool Sort: %v, %v", gb, err)
	}
}

// TestTopKMatchesSort drives both selection paths (heap for small k, sort
// for large) on many lines, in parallel, against a full sort.
func TestTopKMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	rows, n := 200, 500
	d := make([]float64, rows*n)
	for i := range d {
		switch r.IntN(50) {
		case 0:
			d[i] = math.NaN()
		case 1:
			d[i] = math.Inf(-1)
		default:
			d[i] = float64(r.IntN(100)) // many ties
		}
	}
	old := grain
	grain = 1000
	defer func() { grain = old }()
	in := viewOf(d, array.Float64, []int{rows, n}, nil, 0)
	sorted, so := newOut(array.Float64, 0.0, rows, n)
	if err := Sort(so, in, 1); err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{0, 1, 7, n / 4, n/4 + 1, n} {
		got, out := newOut(array.Float64, -1.0, rows, k)
		if err := TopK(out, in, 1, k); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < rows; i++ {
			row := sorted[i*n : (i+1)*n]
			for j := 0; j < k; j++ {
				w, g := row[n-1-j], got[i*k+j]
				if g != w && !(math.IsNaN(g) && math.IsNaN(w)) {
					t.Fatalf("k=%d row %d: position %d = %v, want %v", k, i, j, g, w)
				}
			}
		}
	}
	for i := 0; i < rows; i++ {
		row := sorted[i*n : (i+1)*n]
		seenNaN := false
		for j := 1; j < n; j++ {
			if math.IsNaN(row[j]) {
				seenNaN = true
			} else if seenNaN || row[j] < row[j-1] {
				t.Fatalf("row %d not sorted with NaNs last at %d: %v", i, j, row)
			}
		}
	}
}

func TestSortBad(t *testing.T) {
	c := viewOf([]complex64{1, 2}, array.Complex64, []int{2}, nil, 0)
	_, oc := newOut(array.Complex64, complex64(0), 2)
	wantKernelError(t, "complex", Sort(oc, c, 0), "cpu.Sort", "complex64")
	f := viewOf([]float32{1, 2}, array.Float32, []int{2}, nil, 0)
	_, of := newOut(array.Float32, float32(0), 2)
	wantKernelError(t, "argsort out dtype", ArgSort(of, f, 0), "cpu.ArgSort", "int32")
}
