package arraytest_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
	"github.com/fathom-go/fathom/ops"
)

// recorder is a testing.TB that keeps what AssertClose reports.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper()           {}
func (r *recorder) Error(args ...any) { r.errs = append(r.errs, fmt.Sprint(args...)) }

// report returns what AssertClose(want, got, tol) reports, "" if nothing.
func report(t *testing.T, want, got *array.Array, tol arraytest.Tol) string {
	r := &recorder{TB: t}
	ok := arraytest.AssertClose(r, want, got, tol)
	if ok != (len(r.errs) == 0) {
		t.Fatalf("AssertClose returned %v after reporting %q", ok, r.errs)
	}
	return strings.Join(r.errs, "\n")
}

var (
	nan  = math.NaN()
	inf  = math.Inf(1)
	nanF = float32(nan)
)

func f32(v ...float32) *array.Array { return array.FromSlice(v) }
func f64(v ...float64) *array.Array { return array.FromSlice(v) }

func iota32(n int, shape ...int) *array.Array {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i)
	}
	return array.FromSlice(v, shape...)
}

// TestAssertCloseReports pins how AssertClose reads: a mismatch of dtype
// or shape alone, otherwise the count of differing elements with the
// first ten, as index, want and got, values in their dtype's shortest
// form.
func TestAssertCloseReports(t *testing.T) {
	for _, c := range []struct {
		name      string
		want, got *array.Array
		tol       arraytest.Tol
		report    string
	}{
		{name: "equal", want: iota32(6, 2, 3), got: iota32(6, 2, 3)},
		{name: "within the float32 default", want: f32(1, 100), got: f32(1+1e-5, 100.001)},
		{name: "NaN matches NaN", want: f32(1, nanF), got: f32(1, nanF)},
		{name: "infinity matches itself", want: f64(inf, -inf), got: f64(inf, -inf)},
		{
			name: "beyond the float32 default",
			want: f32(0.1, 0.2, 0.3), got: f32(0.1, 0.2001, 0.3),
			report: "float32 [3]: 1 of 3 elements differ beyond rtol 2e-05, atol 1e-06:\n" +
				"  index  want  got\n" +
				"  [1]    0.2   0.2001",
		},
		{
			name: "the package documentation's",
			want: array.FromSlice([]float32{0, 0.5, 2, 3, 4, 1}, 2, 3),
			got:  array.FromSlice([]float32{0, 0.25, 2, 3, 4, nanF}, 2, 3),
			report: "float32 [2 3]: 2 of 6 elements differ beyond rtol 2e-05, atol 1e-06:\n" +
				"  index  want  got\n" +
				"  [0 1]  0.5   0.25\n" +
				"  [1 2]  1     NaN",
		},
		{
			name: "NaN and infinities",
			want: f64(1, nan, inf, 4), got: f64(nan, 2, -inf, 4),
			report: "float64 [4]: 3 of 4 elements differ beyond rtol 1e-12, atol 1e-13:\n" +
				"  index  want  got\n" +
				"  [0]    1     NaN\n" +
				"  [1]    NaN   2\n" +
				"  [2]    +Inf  -Inf",
		},
		{
			name: "indices of a matrix",
			want: iota32(6, 2, 3), got: array.FromSlice([]float32{0, 1, 2, 3, 4, 5.5}, 2, 3), tol: arraytest.Tol{Atol: 0.25},
			report: "float32 [2 3]: 1 of 6 elements differ beyond rtol 0, atol 0.25:\n" +
				"  index  want  got\n" +
				"  [1 2]  5     5.5",
		},
		{
			name: "the first ten",
			want: iota32(24, 2, 3, 4), got: ops.AddScalar(iota32(24, 2, 3, 4), 0.25), tol: arraytest.Tol{Rtol: 0.018},
			report: "float32 [2 3 4]: 14 of 24 elements differ beyond rtol 0.018, atol 0; the first 10:\n" +
				"  index    want  got\n" +
				"  [0 0 0]  0     0.25\n" +
				"  [0 0 1]  1     1.25\n" +
				"  [0 0 2]  2     2.25\n" +
				"  [0 0 3]  3     3.25\n" +
				"  [0 1 0]  4     4.25\n" +
				"  [0 1 1]  5     5.25\n" +
				"  [0 1 2]  6     6.25\n" +
				"  [0 1 3]  7     7.25\n" +
				"  [0 2 0]  8     8.25\n" +
				"  [0 2 1]  9     9.25",
		},
		{
			name: "a scalar",
			want: array.Scalar(2.5), got: array.Scalar(2.75), tol: arraytest.Tol{Atol: 0.1},
			report: "float64 []: 1 of 1 elements differ beyond rtol 0, atol 0.1:\n" +
				"  index  want  got\n" +
				"  []     2.5   2.75",
		},
		{
			name: "dtype",
			want: f32(1, 2), got: f64(1, 2),
			report: "dtype: want float32, got float64",
		},
		{
			name: "shape",
			want: iota32(6, 2, 3), got: iota32(6, 3, 2),
			report: "shape: want [2 3], got [3 2]",
		},
		{
			name: "dtype and shape",
			want: iota32(6, 2, 3), got: f64(1, 2),
			report: "dtype: want float32, got float64\nshape: want [2 3], got [2]",
		},
		{
			name: "complex parts compare apart",
			want: array.FromSlice([]complex64{complex(1000, 1e-3), 1i}),
			got:  array.FromSlice([]complex64{complex(1000, 2e-3), 1i}),
			report: "complex64 [2]: 1 of 2 elements differ beyond rtol 2e-05, atol 1e-06:\n" +
				"  index  want           got\n" +
				"  [0]    (1000+0.001i)  (1000+0.002i)",
		},
		{
			name: "int64 beyond float64's integers",
			want: array.FromSlice([]int64{1 << 60}), got: array.FromSlice([]int64{1<<60 + 1}),
			report: "int64 [1]: 1 of 1 elements differ beyond rtol 0, atol 0:\n" +
				"  index  want                 got\n" +
				"  [0]    1152921504606846976  1152921504606846977",
		},
		{
			name: "booleans",
			want: array.FromSlice([]bool{true, false}), got: array.FromSlice([]bool{true, true}),
			report: "bool [2]: 1 of 2 elements differ beyond rtol 0, atol 0:\n" +
				"  index  want   got\n" +
				"  [1]    false  true",
		},
		{
			name: "float16 prints as float32",
			want: array.FromSlice([]array.F16{array.NewF16(0.1)}), got: array.FromSlice([]array.F16{array.NewF16(0.2)}),
			report: "float16 [1]: 1 of 1 elements differ beyond rtol 0.002, atol 0.001:\n" +
				"  index  want         got\n" +
				"  [0]    0.099975586  0.19995117",
		},
		{name: "nil arrays match", want: nil, got: nil},
		{name: "nil want", want: nil, got: f32(1), report: "want is a nil array, got float32 [1]"},
		{name: "nil got", want: f32(1), got: nil, report: "got a nil array, want float32 [1]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := report(t, c.want, c.got, c.tol); got != c.report {
				t.Errorf("AssertClose reports\n%s\nwant\n%s", got, c.report)
			}
		})
	}
}

// diff is cmp.Diff with the non-breaking spaces that cmp mixes in at
// random (so that no test depends on its layout) made plain.
func diff(want, got any, opts ...cmp.Option) string {
	return strings.ReplaceAll(cmp.Diff(want, got, opts...), "\u00a0", " ")
}

// TestApproxDiffs pins how cmp.Diff reads under Approx for a few
// representative pairs. The layout is cmp's own (of the version in
// go.mod): what Approx decides is which values cmp sees, indexed
// elements when only they differ, dtype and shape alone otherwise.
func TestApproxDiffs(t *testing.T) {
	type pair struct{ A, B *array.Array }
	for _, c := range []struct {
		name      string
		want, got any
		opts      []cmp.Option
		diff      string
	}{
		{
			name: "elements",
			want: f64(1, 2, 3, 4, 5, 6, 7, 8), got: f64(1, 2, 3.5, 4, 5, 6, 7, 8.25),
			opts: []cmp.Option{arraytest.Approx(0, 0.1)},
			diff: `  (*array.Array)(Inverse(arraytest.Values, arraytest.values{
  	DType: "float64",
  	Shape: {8},
  	Elements: map[[1]int]arraytest.number{
  		{0}: 1,
  		{1}: 2,
- 		{2}: 3,
+ 		{2}: 3.5,
  		{3}: 4,
  		{4}: 5,
  		{5}: 6,
  		{6}: 7,
- 		{7}: 8,
+ 		{7}: 8.25,
  	},
  }))
`,
		},
		{
			name: "shape",
			want: iota32(6, 2, 3), got: iota32(6, 3, 2),
			opts: []cmp.Option{arraytest.Approx(0, 0)},
			diff: `  (*array.Array)(Inverse(arraytest.Header, arraytest.header{
  	DType: "float32",
  	Shape: []int{
- 		2, 3,
+ 		3, 2,
  	},
  }))
`,
		},
		{
			name: "dtype",
			want: f32(1, 2), got: f64(1, 2),
			opts: []cmp.Option{arraytest.Approx(0, 0)},
			diff: `  (*array.Array)(Inverse(arraytest.Header, arraytest.header{
- 	DType: "float32",
+ 	DType: "float64",
  	Shape: {2},
  }))
`,
		},
		{
			name: "NaNs differ by default",
			want: f64(1, nan), got: f64(1, nan),
			opts: []cmp.Option{arraytest.Approx(0, 0)},
			diff: `  (*array.Array)(Inverse(arraytest.Values, arraytest.values{
  	DType: "float64",
  	Shape: {2},
  	Elements: map[[1]int]arraytest.number{
  		{0}: 1,
- 		{1}: NaN,
+ 		{1}: NaN,
  	},
  }))
`,
		},
		{
			name: "EquateNaNs",
			want: f64(1, nan), got: f64(1, nan),
			opts: []cmp.Option{arraytest.Approx(0, 0), arraytest.EquateNaNs()},
		},
		{
			name: "complex",
			want: array.FromSlice([]complex64{1 + 2i}), got: array.FromSlice([]complex64{1 + 2.5i}),
			opts: []cmp.Option{arraytest.Approx(1e-6, 0)},
			diff: `  (*array.Array)(Inverse(arraytest.Values, arraytest.values{
  	DType: "complex64",
  	Shape: {1},
  	Elements: map[[1]int]arraytest.cnumber{
  		{0}: {
  			Re: 1,
- 			Im: 2,
+ 			Im: 2.5,
  		},
  	},
  }))
`,
		},
		{
			name: "fields of a struct",
			want: pair{A: array.Scalar(int32(7)), B: nil},
			got:  pair{A: array.Scalar(int32(8)), B: nil},
			opts: []cmp.Option{arraytest.Approx(0, 0)},
			diff: `  arraytest_test.pair{
  	A: Inverse(arraytest.Values, arraytest.values{
  		DType:    "int32",
  		Shape:    {},
- 		Elements: map[[0]int]arraytest.integer{{}: 7},
+ 		Elements: map[[0]int]arraytest.integer{{}: 8},
  	}),
  	B: nil,
  }
`,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := diff(c.want, c.got, c.opts...); got != c.diff {
				t.Errorf("cmp.Diff gives\n%s\nwant\n%s", got, c.diff)
			}
		})
	}
}

// TestAssertCloseNamesWhat checks the report's optional prefix.
func TestAssertCloseNamesWhat(t *testing.T) {
	for _, c := range []struct {
		msgAndArgs []any
		report     string
	}{
		{nil, "dtype: want float32, got float64"},
		{[]any{"output"}, "output: dtype: want float32, got float64"},
		{[]any{"output %d of %s", 2, "Split"}, "output 2 of Split: dtype: want float32, got float64"},
		{[]any{3}, "3: dtype: want float32, got float64"},
	} {
		r := &recorder{TB: t}
		arraytest.AssertClose(r, f32(1), f64(1), arraytest.Tol{}, c.msgAndArgs...)
		if got := strings.Join(r.errs, "\n"); got != c.report {
			t.Errorf("AssertClose(..., %v) reports %q, want %q", c.msgAndArgs, got, c.report)
		}
	}
}

// TestApproxMatches checks which pairs Approx matches, in both orders, and
// that AssertClose, given the same tolerance, agrees wherever NaNs are
// equated (as it always equates them).
func TestApproxMatches(t *testing.T) {
	huge := int64(1) << 60
	for _, c := range []struct {
		name       string
		x, y       *array.Array
		rtol, atol float64
		nans       bool
		match      bool
	}{
		{name: "atol reached", x: f64(1), y: f64(1.5), atol: 0.5, match: true},
		{name: "atol exceeded", x: f64(1), y: f64(1.5), atol: 0.49},
		{name: "rtol of the smaller magnitude", x: f64(100), y: f64(101), rtol: 0.01, match: true},
		{name: "rtol exceeded", x: f64(100), y: f64(101), rtol: 0.0099},
		{name: "exact", x: f64(1, 2), y: f64(1, 2), match: true},
		{name: "exact, one ulp off", x: f64(1), y: f64(math.Nextafter(1, 2))},
		{name: "infinities", x: f64(inf, -inf), y: f64(inf, -inf), match: true},
		{name: "opposite infinities", x: f64(inf), y: f64(-inf), rtol: 1},
		{name: "infinity and the largest float", x: f64(inf), y: f64(math.MaxFloat64), rtol: 1},
		{name: "NaNs", x: f64(nan), y: f64(nan)},
		{name: "NaNs equated", x: f64(nan), y: f64(nan), nans: true, match: true},
		{name: "NaN and a number", x: f64(nan), y: f64(1), atol: inf, nans: true},
		{
			name: "complex parts apart", rtol: 1e-3, nans: true,
			x: array.FromSlice([]complex64{complex(1000, 1e-3)}), y: array.FromSlice([]complex64{complex(1000, 1.1e-3)}),
		},
		{
			name: "complex NaN parts in place", nans: true, match: true,
			x: array.FromSlice([]complex64{complex(nanF, 1)}), y: array.FromSlice([]complex64{complex(nanF, 1)}),
		},
		{
			name: "complex NaN parts swapped", nans: true,
			x: array.FromSlice([]complex64{complex(nanF, 1)}), y: array.FromSlice([]complex64{complex(1, nanF)}),
		},
		{name: "int64 exactly", x: array.FromSlice([]int64{huge}), y: array.FromSlice([]int64{huge + 1})},
		{name: "int64 within atol", x: array.FromSlice([]int64{huge}), y: array.FromSlice([]int64{huge + 1}), atol: 1, match: true},
		{name: "int64 extremes", x: array.FromSlice([]int64{math.MinInt64}), y: array.FromSlice([]int64{math.MaxInt64}), atol: 2e19, match: true},
		{name: "booleans exactly", x: array.FromSlice([]bool{true}), y: array.FromSlice([]bool{false}), atol: 1},
		{name: "float16", x: array.FromSlice([]array.F16{array.NewF16(1)}), y: array.FromSlice([]array.F16{array.NewF16(1.001)}), rtol: 1e-3, match: true},
		{name: "dtypes differ", x: f32(1), y: f64(1), atol: 1},
		{name: "shapes differ", x: iota32(6, 2, 3), y: iota32(6, 3, 2), atol: 100},
		{name: "empty", x: iota32(0, 0, 3), y: iota32(0, 0, 3), match: true},
		{name: "a view and a copy", x: ops.Transpose(iota32(6, 2, 3)), y: ops.Copy(ops.Transpose(iota32(6, 2, 3))), match: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := []cmp.Option{arraytest.Approx(c.rtol, c.atol)}
			if c.nans {
				opts = append(opts, arraytest.EquateNaNs())
			}
			if got := cmp.Equal(c.x, c.y, opts...); got != c.match {
				t.Errorf("cmp.Equal(x, y) = %v, want %v", got, c.match)
			}
			if got := cmp.Equal(c.y, c.x, opts...); got != c.match {
				t.Errorf("cmp.Equal(y, x) = %v, want %v", got, c.match)
			}
			if tol := (arraytest.Tol{Rtol: c.rtol, Atol: c.atol}); c.nans && tol != (arraytest.Tol{}) {
				if got := report(t, c.x, c.y, tol) == ""; got != c.match {
					t.Errorf("AssertClose matches: %v, want %v", got, c.match)
				}
			}
		})
	}
}

// TestEvaluationErrors checks that an array that cannot be evaluated (a
// broadcast view larger than memory, which ToSlice refuses) matches
// nothing, not even itself, and that both checks say why.
func TestEvaluationErrors(t *testing.T) {
	big := ops.BroadcastTo(array.Scalar(float32(1)), 1<<20, 1<<20, 1<<10)
	if r := report(t, big, big, arraytest.Tol{}); !strings.HasPrefix(r, "want: array.ToSlice: ") {
		t.Errorf("AssertClose reports %q, want the evaluation error", r)
	}
	if d := diff(big, big, arraytest.Approx(0, 0)); strings.Count(d, `evalError{Err: "array.ToSlice: `) != 2 {
		t.Errorf("cmp.Diff gives\n%s\nwant the evaluation error", d)
	}
}
