package ops_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// solveCaseOps are the ops of linalg_l2.json this package checks; Det,
// SlogDet and LU are compositions that package linalg checks.
var solveCaseOps = map[string]func(t *testing.T, c refCase, in []*array.Array) []*array.Array{
	"Inv": func(_ *testing.T, _ refCase, in []*array.Array) []*array.Array {
		return []*array.Array{ops.LinalgInv(in[0])}
	},
	"Solve": func(_ *testing.T, _ refCase, in []*array.Array) []*array.Array {
		return []*array.Array{ops.LinalgSolve(in[0], in[1])}
	},
	"SolveTriangular": func(t *testing.T, c refCase, in []*array.Array) []*array.Array {
		var upper, unit bool
		c.Param(t, "upper", &upper)
		c.Param(t, "unit", &unit)
		return []*array.Array{ops.LinalgSolveTriangular(in[0], in[1], upper, unit)}
	},
	"LUFactor": func(_ *testing.T, _ refCase, in []*array.Array) []*array.Array {
		lu, piv, rows := ops.LinalgLUFactor(in[0])
		return []*array.Array{lu, piv, rows}
	},
	"LUSolve": func(_ *testing.T, _ refCase, in []*array.Array) []*array.Array {
		return []*array.Array{ops.LinalgLUSolve(in[0], in[1], in[2])}
	},
}

// solveTol is the tolerance of a case: the dtype's, or looser for an
// ill-conditioned matrix (params.rtol), whose solution numpy's LAPACK and
// gonum's round differently.
func solveTol(t *testing.T, c refCase, dt array.DType) arraytest.Tol {
	tol := arraytest.DefaultTol(dt)
	if dt == array.Float32 {
		// float32 computes in float64 like the reference, but the inputs
		// of LUSolve cases are factors rounded to float32.
		tol = arraytest.Tol{Rtol: 1e-5, Atol: 1e-6}
	}
	var rtol float64
	if c.Param(t, "rtol", &rtol) && dt == array.Float64 {
		tol.Rtol = rtol
	}
	if dt == array.Float64 {
		tol.Atol = 1e-12
	}
	return tol
}

func TestLinalgSolveReference(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range loadCases(t, "linalg_l2.json") {
		run, ok := solveCaseOps[c.Op]
		if !ok {
			continue
		}
		seen[c.Op] = true
		t.Run(c.Name, func(t *testing.T) {
			for _, l := range refLayouts {
				in := make([]*array.Array, len(c.Inputs))
				for i, r := range c.Inputs {
					in[i] = l.of(r.Build(t))
				}
				got := run(t, c, in)
				for i, w := range c.Expected {
					want := w.Build(t)
					if got[i].DType() != want.DType() || !slices.Equal(got[i].Shape(), want.Shape()) {
						t.Fatalf("%s: output %d is %v %v, want %v %v", l.name, i, got[i].DType(), got[i].Shape(), want.DType(), want.Shape())
					}
					arraytest.AssertClose(t, want, got[i], solveTol(t, c, want.DType()), "%s: output %d", l.name, i)
				}
			}
		})
	}
	for op := range solveCaseOps {
		if !seen[op] {
			t.Errorf("no reference cases for %s", op)
		}
	}
}

// TestLinalgSolveLarge factors matrices above gonum's block size (so its
// blocked LAPACK runs) and a batch large enough to be split over cores,
// and checks the results by their defining equations.
func TestLinalgSolveLarge(t *testing.T) {
	for _, shape := range [][]int{{80, 80}, {64, 6, 6}} {
		n := shape[len(shape)-1]
		size := 1
		for _, d := range shape {
			size *= d
		}
		vals := make([]float64, size)
		for i := range vals {
			vals[i] = math.Sin(float64(i)*1.7) + math.Cos(float64(i*i)*0.3)
		}
		a := ops.Add(array.FromSlice(vals, shape...), ops.MulScalar(ops.Eye(n, n, 0, array.Float64), float64(n)))
		eye := ops.BroadcastTo(ops.Eye(n, n, 0, array.Float64), shape...)
		tol := arraytest.Tol{Rtol: 1e-10, Atol: 1e-10}
		arraytest.AssertClose(t, eye, ops.MatMul(a, ops.LinalgInv(a)), tol, "a·Inv(a), %v", shape)
		b := ops.Sin(ops.Reshape(ops.Arange(0, float64(size/n*3), 1, array.Float64), append(shape[:len(shape)-1:len(shape)-1], 3)...))
		arraytest.AssertClose(t, b, ops.MatMul(a, ops.LinalgSolve(a, b)), tol, "a·Solve(a, b), %v", shape)
		lu, _, rows := ops.LinalgLUFactor(a)
		l := ops.Add(ops.Tril(lu, -1), ops.Eye(n, n, 0, array.Float64))
		lp := ops.TakeAlongAxis(l, ops.BroadcastTo(ops.ExpandDims(rows, -1), shape...), -2)
		arraytest.AssertClose(t, a, ops.MatMul(lp, ops.Triu(lu, 0)), tol, "L[p]·U, %v", shape)
		lower := ops.Tril(a, 0)
		arraytest.AssertClose(t, b, ops.MatMul(lower, ops.LinalgSolveTriangular(a, b, false, false)), tol, "tril(a)·x, %v", shape)
	}
}

// TestLinalgSolveSingular is the table of runtime failures: errors from
// Eval that wrap cpu.ErrSingular and name the op, the shape and the
// batch element, never a wrong answer. numpy raises LinAlgError for the
// same matrices; NaN inputs give NaN (reference cases), as numpy's do.
func TestLinalgSolveSingular(t *testing.T) {
	ok := []float64{2, 0, 0, 2}
	sing := []float64{1, 2, 2, 4}
	batch := array.FromSlice(append(slices.Clone(ok), sing...), 2, 2, 2)
	b := array.FromSlice([]float64{1, 1})
	tests := []struct {
		name string
		f    func() *array.Array
		op   string
		want []string
	}{
		{"Inv", func() *array.Array { return ops.LinalgInv(batch) }, "linalg.Inv", []string{"batch index [1]", "[2 2 2]", "U[1,1]"}},
		{"Solve", func() *array.Array { return ops.LinalgSolve(batch, b) }, "linalg.Solve", []string{"batch index [1]"}},
		{"Solve float32", func() *array.Array { return ops.LinalgSolve(array.FromSlice([]float32{0, 0, 0, 0}, 2, 2), b) }, "linalg.Solve", []string{"U[0,0]"}},
		{"SolveTriangular", func() *array.Array {
			return ops.LinalgSolveTriangular(array.FromSlice([]float64{1, 5, 0, 0}, 2, 2), b, true, false)
		}, "linalg.SolveTriangular", []string{"U[1,1]"}},
		{"LUSolve", func() *array.Array {
			lu, piv, _ := ops.LinalgLUFactor(array.FromSlice(sing, 2, 2))
			return ops.LinalgLUSolve(lu, piv, b)
		}, "linalg.SolveTriangular", []string{"U[1,1]"}},
	}
	for _, tc := range tests {
		err := tc.f().Eval()
		var e *array.Error
		if !errors.As(err, &e) || !errors.Is(err, cpu.ErrSingular) {
			t.Errorf("%s: got %v, want an *array.Error wrapping ErrSingular", tc.name, err)
			continue
		}
		if e.Op != tc.op {
			t.Errorf("%s: op %q, want %q", tc.name, e.Op, tc.op)
		}
		for _, w := range tc.want {
			if !strings.Contains(e.Msg, w) {
				t.Errorf("%s: %q does not mention %q", tc.name, e.Msg, w)
			}
		}
	}
	// A unit diagonal is not read: zeros there are no error.
	x := ops.LinalgSolveTriangular(array.FromSlice([]float64{0, 5, 0, 0}, 2, 2), b, true, true)
	arraytest.AssertClose(t, array.FromSlice([]float64{-4, 1}), x, arraytest.Tol{}, "unit diagonal")
	// A singular matrix factors without error.
	lu, piv, rows := ops.LinalgLUFactor(array.FromSlice(sing, 2, 2))
	arraytest.AssertClose(t, array.FromSlice([]float64{2, 4, 0.5, 0}, 2, 2), lu, arraytest.Tol{}, "lu of a singular matrix")
	arraytest.AssertClose(t, array.FromSlice([]int32{1, 1}), piv, arraytest.Tol{}, "pivots")
	arraytest.AssertClose(t, array.FromSlice([]int32{1, 0}), rows, arraytest.Tol{}, "rows")
	// Pivots out of range are an error, not an index panic.
	bad := ops.LinalgLUSolve(array.FromSlice(ok, 2, 2), array.FromSlice([]int32{0, 7}), b)
	if err := bad.Eval(); err == nil || !strings.Contains(err.Error(), "outside [0, 2)") {
		t.Errorf("LUSolve with pivot 7: got %v", err)
	}
}

func TestLinalgSolveBadInput(t *testing.T) {
	m22 := array.FromSlice([]float64{1, 0, 0, 1}, 2, 2)
	v2 := array.FromSlice([]float64{1, 2})
	piv := array.FromSlice([]int32{0, 1})
	wantOpErrors(t, []opError{
		{"Inv 1-D", func() { ops.LinalgInv(v2) }, "ops.LinalgInv", []string{"[2]", "not a matrix"}},
		{"Inv non-square", func() { ops.LinalgInv(ops.Zeros([]int{2, 3}, array.Float64)) }, "ops.LinalgInv", []string{"[2 3]", "not square"}},
		{"Inv complex", func() { ops.LinalgInv(ops.Zeros([]int{2, 2}, array.Complex64)) }, "ops.LinalgInv", []string{"complex64"}},
		{"Inv float16", func() { ops.LinalgInv(ops.Zeros([]int{2, 2}, array.Float16)) }, "ops.LinalgInv", []string{"float16"}},
		{"Inv nil", func() { ops.LinalgInv(nil) }, "ops.LinalgInv", nil},
		{"Solve b length", func() { ops.LinalgSolve(m22, array.FromSlice([]float64{1, 2, 3})) }, "ops.LinalgSolve", []string{"[3]", "[2 2]"}},
		{"Solve b rows", func() { ops.LinalgSolve(m22, ops.Zeros([]int{3, 2}, array.Float64)) }, "ops.LinalgSolve", []string{"[3 2]", "rows"}},
		{"Solve b 0-d", func() { ops.LinalgSolve(m22, array.Scalar(1.0)) }, "ops.LinalgSolve", []string{"0-d"}},
		{"Solve batch", func() {
			ops.LinalgSolve(ops.Zeros([]int{3, 2, 2}, array.Float64), ops.Zeros([]int{4, 2, 1}, array.Float64))
		}, "ops.LinalgSolve", []string{"[3]", "[4]"}},
		{"Solve a non-square", func() { ops.LinalgSolve(ops.Zeros([]int{2, 3}, array.Float64), v2) }, "ops.LinalgSolve", []string{"not square"}},
		{"SolveTriangular b", func() { ops.LinalgSolveTriangular(m22, ops.Zeros([]int{3}, array.Float64), true, false) }, "ops.LinalgSolveTriangular", []string{"[3]"}},
		{"LUFactor 1-D", func() { ops.LinalgLUFactor(v2) }, "ops.LinalgLUFactor", []string{"not a matrix"}},
		{"LUSolve pivots dtype", func() { ops.LinalgLUSolve(m22, v2, v2) }, "ops.LinalgLUSolve", []string{"float64", "int32"}},
		{"LUSolve pivots length", func() { ops.LinalgLUSolve(m22, array.FromSlice([]int32{0}), v2) }, "ops.LinalgLUSolve", []string{"[1]", "[2 2]"}},
		{"LUSolve lu", func() { ops.LinalgLUSolve(ops.Zeros([]int{2, 3}, array.Float64), piv, v2) }, "ops.LinalgLUSolve", []string{"not square"}},
		{"LUSolve batch", func() {
			ops.LinalgLUSolve(ops.Zeros([]int{3, 2, 2}, array.Float64), ops.Zeros([]int{4, 2}, array.Int32), v2)
		}, "ops.LinalgLUSolve", []string{"[3]", "[4]"}},
	})
}

// TestLinalgSolveDTypes: integer inputs compute in float32 and mixed
// float operands promote, as the doc comments say.
func TestLinalgSolveDTypes(t *testing.T) {
	ai := array.FromSlice([]int32{2, 0, 0, 4}, 2, 2)
	if got := ops.LinalgInv(ai); got.DType() != array.Float32 {
		t.Errorf("Inv of int32: dtype %v, want float32", got.DType())
	} else {
		arraytest.AssertClose(t, array.FromSlice([]float32{0.5, 0, 0, 0.25}, 2, 2), got, arraytest.Tol{}, "Inv of int32")
	}
	x := ops.LinalgSolve(ops.AsType(ai, array.Float32), array.FromSlice([]float64{1, 1}))
	arraytest.AssertClose(t, array.FromSlice([]float64{0.5, 0.25}), x, arraytest.Tol{}, "float32 a, float64 b")
}

// TestLinalgSolveCompilesAndMaps: a compiled function replays the solvers
// and the three outputs of the factorisation, shapeless too, and Vmap
// over a batch axis
// that is not first gives every output of LinalgLUFactor as the batched
// call does.
func TestLinalgSolveCompilesAndMaps(t *testing.T) {
	f := func(in ...*array.Array) []*array.Array {
		lu, piv, rows := ops.LinalgLUFactor(in[0])
		return []*array.Array{ops.LinalgSolve(in[0], in[1]), lu, piv, rows, ops.LinalgLUSolve(lu, piv, in[1]), ops.LinalgInv(in[0])}
	}
	cf := compile.Compile(f)
	defer cf.Release()
	a := array.FromSlice([]float64{1, 2, 0, 3, 1, 1, 0, 2, 5}, 3, 3)
	b := array.FromSlice([]float64{1, 2, 3})
	want := f(a, b)
	for call := range 2 {
		got := cf.Call(a, b)
		for i := range want {
			arraytest.AssertClose(t, want[i], got[i], arraytest.Tol{Rtol: 1e-14, Atol: 1e-15}, "call %d, output %d", call, i)
		}
	}

	// A shapeless trace replays on other sizes through the primitives'
	// shape rules (with b a matrix: a vector b is reshaped, and Reshape
	// has no shape rule).
	sf := compile.Compile(f, compile.Shapeless())
	defer sf.Release()
	for _, n := range []int{3, 5, 2} {
		v := make([]float64, n*n)
		for i := range v {
			v[i] = float64((i*7)%5) - 2
		}
		for i := range n {
			v[i*n+i] += 10
		}
		a, b := array.FromSlice(v, n, n), ops.Reshape(ops.Arange(0, float64(2*n), 1, array.Float64), n, 2)
		want, got := f(a, b), sf.Call(a, b)
		for i := range want {
			arraytest.AssertClose(t, want[i], got[i], arraytest.Tol{Rtol: 1e-14, Atol: 1e-15}, "shapeless, n = %d, output %d", n, i)
		}
	}

	stack := array.FromSlice([]float64{
		1, 2, 0, 3, 1, 1, 0, 2, 5,
		4, 1, 2, 0, 3, 1, 2, 2, 1,
	}, 2, 3, 3)
	lu, piv, rows := ops.LinalgLUFactor(stack)
	factor := func(in ...*array.Array) []*array.Array {
		lu, piv, rows := ops.LinalgLUFactor(in[0])
		return []*array.Array{lu, piv, rows}
	}
	// the batch on axis 2: stack[i, r, c] at [r, c, i]
	got := graph.Vmap(factor, []int{2}, nil)(ops.Transpose(stack, 1, 2, 0))
	for i, w := range []*array.Array{lu, piv, rows} {
		arraytest.AssertClose(t, w, got[i], arraytest.Tol{}, "Vmap output %d", i)
	}
}
