package linalg_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/internal/refcase"
	"github.com/fathom-go/fathom/linalg"
	"github.com/fathom-go/fathom/ops"
)

// slvTol allows the float32 results, computed in float64 and rounded
// like numpy's, a few units of float32; float64 a few of its own, or the
// case's rtol for an ill-conditioned matrix.
func slvTol(t *testing.T, c refcase.Case, dt array.DType) arraytest.Tol {
	if dt == array.Float32 {
		return arraytest.Tol{Rtol: 1e-5, Atol: 1e-6}
	}
	tol := arraytest.Tol{Rtol: 1e-11, Atol: 1e-12}
	c.Param(t, "rtol", &tol.Rtol)
	if strings.Contains(c.Name, "hilbert") {
		tol.Rtol = max(tol.Rtol, 1e-9)
	}
	return tol
}

// TestSolveFunctionsMatchNumpy runs every case through package linalg's
// functions: the determinants against numpy's values (0 and (0, -Inf) for
// singular matrices, NaN for NaN inputs), LU against the factors of the
// reference's packed lu, the rest as the ops they call. The cases are
// ../ops/testdata/linalg_l2.json, which gen_linalg_l2.py writes from numpy.
func TestSolveFunctionsMatchNumpy(t *testing.T) {
	for _, c := range refcase.Load(t, "../ops/testdata/linalg_l2.json") {
		t.Run(c.Name, func(t *testing.T) {
			in := make([]*array.Array, len(c.Inputs))
			for i, r := range c.Inputs {
				in[i] = r.Build(t)
			}
			want := make([]*array.Array, len(c.Expected))
			for i, r := range c.Expected {
				want[i] = r.Build(t)
			}
			var got []*array.Array
			switch c.Op {
			case "Inv":
				got = []*array.Array{linalg.Inv(in[0])}
			case "Solve":
				got = []*array.Array{linalg.Solve(in[0], in[1])}
			case "SolveTriangular":
				var upper, unit bool
				c.Param(t, "upper", &upper)
				c.Param(t, "unit", &unit)
				got = []*array.Array{linalg.SolveTriangular(in[0], in[1], upper, unit)}
			case "LUSolve":
				got = []*array.Array{linalg.LUSolve(in[0], in[1], in[2])}
			case "Det":
				got = []*array.Array{linalg.Det(in[0])}
			case "SlogDet":
				s, l := linalg.SlogDet(in[0])
				got = []*array.Array{s, l}
			case "LUFactor":
				lu, piv := linalg.LUFactor(in[0])
				p, l, u := linalg.LU(in[0])
				m, n := want[0].Dim(-2), want[0].Dim(-1)
				k := min(m, n)
				wl := ops.Add(ops.Tril(ops.SliceAxis(want[0], -1, ops.R(0, k)), -1), ops.Eye(m, k, 0, want[0].DType()))
				wu := ops.Triu(ops.SliceAxis(want[0], -2, ops.R(0, k)), 0)
				got = []*array.Array{lu, piv, p, l, u}
				want = []*array.Array{want[0], want[1], want[2], wl, wu}
			default:
				t.Fatalf("unknown op %q", c.Op)
			}
			for i := range want {
				if got[i].DType() != want[i].DType() || !slices.Equal(got[i].Shape(), want[i].Shape()) {
					t.Fatalf("output %d is %v %v, want %v %v", i, got[i].DType(), got[i].Shape(), want[i].DType(), want[i].Shape())
				}
				arraytest.AssertClose(t, want[i], got[i], slvTol(t, c, want[i].DType()), "output %d", i)
			}
		})
	}
}

// TestLUReconstructs checks LU by its definition on shapes the reference
// does not have: a = l[p]·u, l unit lower triangular with entries of at
// most 1 in magnitude (partial pivoting), u upper triangular.
func TestLUReconstructs(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 2))
	for _, shape := range [][]int{{5, 5}, {3, 4, 6}, {2, 6, 4}, {1, 1}} {
		size := 1
		for _, d := range shape {
			size *= d
		}
		v := make([]float64, size)
		for i := range v {
			v[i] = r.Float64()*2 - 1
		}
		a := array.FromSlice(v, shape...)
		p, l, u := linalg.LU(a)
		m, n := shape[len(shape)-2], shape[len(shape)-1]
		k := min(m, n)
		lp := ops.TakeAlongAxis(l, ops.BroadcastTo(ops.ExpandDims(p, -1), append(slices.Clone(shape[:len(shape)-1]), k)...), -2)
		tol := arraytest.Tol{Rtol: 1e-12, Atol: 1e-14}
		arraytest.AssertClose(t, a, ops.MatMul(lp, u), tol, "l[p]·u of %v", shape)
		arraytest.AssertClose(t, ops.Tril(l, 0), l, arraytest.Tol{}, "l lower, %v", shape)
		arraytest.AssertClose(t, ops.Triu(u, 0), u, arraytest.Tol{}, "u upper, %v", shape)
		arraytest.AssertClose(t, ops.Ones(append(slices.Clone(shape[:len(shape)-2]), k), array.Float64), ops.Diagonal(ops.SliceAxis(l, -2, ops.R(0, k)), 0, -2, -1), arraytest.Tol{}, "l's diagonal, %v", shape)
		if big := ops.Max(ops.Abs(l)).Item(); big > 1 {
			t.Errorf("%v: |l| reaches %v, want at most 1", shape, big)
		}
	}
}

// slvFD checks the VJP and the JVP of f, a function of one square
// matrix, against central differences in float64.
func slvFD(t *testing.T, name string, f func(a *array.Array) *array.Array, a0 []float64, shape []int) {
	t.Helper()
	fn := func(xs ...*array.Array) []*array.Array { return []*array.Array{f(xs[0])} }
	eval := func(v []float64) []float64 {
		out, err := array.ToSlice[float64](f(array.FromSlice(v, shape...)))
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	y := eval(a0)
	r := rand.New(rand.NewPCG(7, uint64(len(name))))
	cot := make([]float64, len(y))
	tan := make([]float64, len(a0))
	for i := range cot {
		cot[i] = r.Float64()*2 - 1
	}
	for i := range tan {
		tan[i] = r.Float64()*2 - 1
	}
	const h = 1e-6
	fdGrad := make([]float64, len(a0))
	for j := range a0 {
		v := slices.Clone(a0)
		v[j] += h
		hi := eval(v)
		v[j] -= 2 * h
		lo := eval(v)
		for i := range hi {
			fdGrad[j] += cot[i] * (hi[i] - lo[i]) / (2 * h)
		}
	}
	plus, minus := slices.Clone(a0), slices.Clone(a0)
	for j := range a0 {
		plus[j] += h * tan[j]
		minus[j] -= h * tan[j]
	}
	hi, lo := eval(plus), eval(minus)
	fdTan := make([]float64, len(hi))
	for i := range hi {
		fdTan[i] = (hi[i] - lo[i]) / (2 * h)
	}
	x := array.FromSlice(a0, shape...)
	_, vjps := graph.VJP(fn, []*array.Array{x}, []*array.Array{array.FromSlice(cot, slices.Clone(shape[:len(shape)-2])...)})
	tol := arraytest.Tol{Rtol: 1e-5, Atol: 1e-6}
	arraytest.AssertClose(t, array.FromSlice(fdGrad, shape...), vjps[0], tol, "%s: VJP", name)
	_, jvps := graph.JVP(fn, []*array.Array{x}, []*array.Array{array.FromSlice(tan, shape...)})
	arraytest.AssertClose(t, array.FromSlice(fdTan, shape[:len(shape)-2]...), jvps[0], tol, "%s: JVP", name)
}

// TestDeterminantGradients checks Det's and SlogDet's derivatives (JAX's:
// det·tr(a⁻¹·da) and tr(a⁻¹·da)) against finite differences, on matrices
// that pivot and on a batch with a negative determinant.
func TestDeterminantGradients(t *testing.T) {
	a := []float64{0.3, 2, -0.5, -1.5, 0.2, 0.4, 0.1, 0.7, 1.8}
	batch := append(slices.Clone(a), 1, 0.5, 0.2, 0.3, -2, 0.1, 0.6, 0.4, 1.2)
	logabs := func(a *array.Array) *array.Array { _, l := linalg.SlogDet(a); return l }
	for _, tc := range []struct {
		v     []float64
		shape []int
	}{{a, []int{3, 3}}, {batch, []int{2, 3, 3}}} {
		slvFD(t, "Det", linalg.Det, tc.v, tc.shape)
		slvFD(t, "SlogDet", logabs, tc.v, tc.shape)
	}
	// Vmap: the batch of the loop.
	x := array.FromSlice(batch, 2, 3, 3)
	got := graph.Vmap(func(xs ...*array.Array) []*array.Array { return []*array.Array{linalg.Det(xs[0])} }, nil, nil)(x)[0]
	arraytest.AssertClose(t, linalg.Det(x), got, arraytest.Tol{Rtol: 1e-14}, "Vmap of Det")
}

// TestSolveErrors is the table of what singular and bad inputs give at
// the linalg level: errors that errors.Is finds as ErrSingular, and
// panics with *array.Error naming the function.
func TestSolveErrors(t *testing.T) {
	sing := array.FromSlice([]float64{1, 2, 2, 4}, 2, 2)
	if err := linalg.Inv(sing).Eval(); !errors.Is(err, linalg.ErrSingular) {
		t.Errorf("Inv of a singular matrix: %v, want ErrSingular", err)
	}
	if err := linalg.Solve(sing, array.FromSlice([]float64{1, 2})).Eval(); !errors.Is(err, linalg.ErrSingular) {
		t.Errorf("Solve with a singular matrix: %v, want ErrSingular", err)
	}
	for _, tc := range []struct {
		name, op string
		f        func()
	}{
		{"Det 1-D", "linalg.Det", func() { linalg.Det(array.FromSlice([]float64{1, 2})) }},
		{"Det non-square", "linalg.Det", func() { linalg.Det(ops.Zeros([]int{2, 3}, array.Float64)) }},
		{"SlogDet nil", "linalg.SlogDet", func() { linalg.SlogDet(nil) }},
		{"LU 1-D", "ops.LinalgLUFactor", func() { linalg.LU(array.FromSlice([]float64{1, 2})) }},
	} {
		var e *array.Error
		if err := array.Try(tc.f); !errors.As(err, &e) || e.Op != tc.op {
			t.Errorf("%s: got %v, want an *array.Error of %s", tc.name, err, tc.op)
		}
	}
}

// TestSolveSecondOrder differentiates the gradients again (their rules
// are built from differentiable ops): the directional second derivative
// vᵀ·H·v of scalar functions of the solvers and the determinant against
// finite differences of the gradient.
func TestSolveSecondOrder(t *testing.T) {
	a0 := []float64{0.3, 2, -0.5, -1.5, 0.2, 0.4, 0.1, 0.7, 1.8}
	v := array.FromSlice([]float64{1, -0.5, 0.2, 0.3, 0.9, -1, 0.4, 0.1, -0.2}, 3, 3)
	b := array.FromSlice([]float64{1, 2, 3})
	for _, tc := range []struct {
		name string
		f    func(x *array.Array) *array.Array
	}{
		{"SlogDet", func(x *array.Array) *array.Array { _, l := linalg.SlogDet(x); return l }},
		{"Det", linalg.Det},
		{"Inv", func(x *array.Array) *array.Array { return ops.Sum(ops.Square(linalg.Inv(x))) }},
		{"Solve", func(x *array.Array) *array.Array { return ops.Sum(ops.Square(linalg.Solve(x, b))) }},
		{"LUSolve", func(x *array.Array) *array.Array {
			lu, piv := linalg.LUFactor(x)
			return ops.Sum(ops.Square(linalg.LUSolve(lu, piv, b)))
		}},
	} {
		grad := graph.Grad(func(in ...*array.Array) *array.Array { return tc.f(in[0]) })
		dir := func(x *array.Array) *array.Array { return ops.Sum(ops.Mul(grad(x)[0], v)) }
		hv := graph.Grad(func(in ...*array.Array) *array.Array { return dir(in[0]) })(array.FromSlice(a0, 3, 3))[0]
		got := ops.Sum(ops.Mul(hv, v)).Item()
		const h = 1e-5
		at := func(s float64) float64 { return dir(ops.Add(array.FromSlice(a0, 3, 3), ops.MulScalar(v, s))).Item() }
		want := (at(h) - at(-h)) / (2 * h)
		if math.Abs(got-want) > 1e-6*(1+math.Abs(want)) {
			t.Errorf("%s: vᵀ·H·v = %v, finite differences give %v", tc.name, got, want)
		}
	}
}
