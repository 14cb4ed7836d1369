package ops_test

import (
	"errors"
	"math"
	"math/cmplx"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/internal/refcase"
	"github.com/fathom-go/fathom/ops"
)

// The decompositions against numpy (testdata/gen_linalg_l1.py), on every
// layout of refLayouts. Signs and orders of vectors are not unique, so
// vectors are compared with numpy's up to a sign (a phase for Eig) where
// they are unique, and every factorisation is checked by reconstruction
// and orthogonality too.

// dcTol is the tolerance of a case: its dtype's, looser for the
// ill-conditioned matrices, whose results carry cond·ε from either
// library.
func dcTol(t *testing.T, c refCase, dt array.DType) arraytest.Tol {
	tol := arraytest.Tol{Rtol: 1e-10, Atol: 1e-11}
	if dt == array.Float32 || dt == array.Complex64 {
		tol = arraytest.Tol{Rtol: 1e-5, Atol: 1e-5}
	}
	if strings.Contains(c.Name, "Hilbert") {
		tol = arraytest.Tol{Rtol: 1e-6, Atol: 1e-7}
	}
	var scale float64
	if c.Param(t, "scaled", &scale) {
		tol.Atol *= scale
	}
	return tol
}

// dcRun calls the case's op on a and evaluates the results.
func dcRun(t *testing.T, c refCase, a *array.Array) ([]*array.Array, error) {
	t.Helper()
	var upper, complete, full bool
	c.Param(t, "upper", &upper)
	c.Param(t, "complete", &complete)
	c.Param(t, "full", &full)
	var outs []*array.Array
	switch c.Op {
	case "Cholesky":
		outs = []*array.Array{ops.LinalgCholesky(a, upper)}
	case "CholeskyInv":
		outs = []*array.Array{ops.LinalgCholeskyInv(a, upper)}
	case "QR":
		q, r := ops.LinalgQR(a, complete)
		outs = []*array.Array{q, r}
	case "SVD":
		u, s, vt := ops.LinalgSVD(a, full)
		outs = []*array.Array{u, s, vt}
	case "SVDVals":
		outs = []*array.Array{ops.LinalgSVDVals(a)}
	case "Eigh":
		w, v := ops.LinalgEigh(a, upper)
		outs = []*array.Array{w, v}
	case "Eigvalsh":
		outs = []*array.Array{ops.LinalgEigvalsh(a, upper)}
	case "Eig":
		w, v := ops.LinalgEig(a)
		outs = []*array.Array{w, v}
	case "Eigvals":
		outs = []*array.Array{ops.LinalgEigvals(a)}
	default:
		t.Fatalf("unknown op %q", c.Op)
	}
	return outs, array.Eval(outs...)
}

func TestLinalgDecompReference(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range loadCases(t, "linalg_l1.json") {
		seen[c.Op] = true
		t.Run(c.Name, func(t *testing.T) {
			for _, l := range refLayouts {
				a := l.of(c.Inputs[0].Build(t))
				outs, err := dcRun(t, c, a)
				var kind string
				if c.Param(t, "error", &kind) {
					dcError(t, c, l.name, err, kind)
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", l.name, err)
				}
				dcCheck(t, c, l.name, a, outs)
			}
		})
	}
	for _, op := range []string{"Cholesky", "CholeskyInv", "QR", "SVD", "SVDVals", "Eigh", "Eigvalsh", "Eig", "Eigvals"} {
		if !seen[op] {
			t.Errorf("no reference case for %s", op)
		}
	}
}

func dcError(t *testing.T, c refCase, layout string, err error, kind string) {
	t.Helper()
	want := map[string]error{"not_pd": cpu.ErrNotPositiveDefinite, "no_convergence": cpu.ErrNoConvergence,
		"not_finite": cpu.ErrNotFinite, "singular": cpu.ErrSingular}[kind]
	if want == nil {
		t.Fatalf("unknown error kind %q", kind)
	}
	if !errors.Is(err, want) {
		t.Fatalf("%s: error %v, want one wrapping %v", layout, err, want)
	}
	var ae *array.Error
	if !errors.As(err, &ae) || !strings.HasPrefix(ae.Op, "linalg.") {
		t.Fatalf("%s: error %v does not name a linalg op", layout, err)
	}
	var index []int
	if c.Param(t, "index", &index) {
		if at := "batch index " + dcFmtInts(index); !strings.Contains(err.Error(), at) {
			t.Fatalf("%s: error %q does not say %q", layout, err, at)
		}
	}
}

func dcFmtInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = dcItoa(x)
	}
	return "[" + strings.Join(s, " ") + "]"
}

func dcItoa(x int) string {
	if x < 10 {
		return string(rune('0' + x))
	}
	return dcItoa(x/10) + string(rune('0'+x%10))
}

// dcCheck checks one case's results.
func dcCheck(t *testing.T, c refCase, layout string, a *array.Array, outs []*array.Array) {
	t.Helper()
	dt := a.DType()
	tol := dcTol(t, c, dt)
	for i, o := range outs {
		if !slices.Equal(o.Shape(), c.Expected[i].Shape) {
			t.Fatalf("%s: output %d has shape %v, want %v", layout, i, o.Shape(), c.Expected[i].Shape)
		}
		wantDT := dt
		if c.Op == "Eig" || c.Op == "Eigvals" {
			wantDT = array.Complex64
		}
		if o.DType() != wantDT {
			t.Fatalf("%s: output %d has dtype %v, want %v", layout, i, o.DType(), wantDT)
		}
	}
	var nan bool
	c.Param(t, "nan", &nan)
	switch {
	case nan:
		for i, o := range outs {
			arraytest.AssertClose(t, c.Expected[i].Build(t), o, tol, "%s output %d", layout, i)
		}
	case c.Op == "Cholesky" || c.Op == "CholeskyInv" || c.Op == "SVDVals" || c.Op == "Eigvalsh":
		arraytest.AssertClose(t, c.Expected[0].Build(t), outs[0], tol, layout)
		if c.Op == "Cholesky" {
			var upper bool
			c.Param(t, "upper", &upper)
			dcCholesky(t, layout, a, outs[0], upper, tol)
		}
	case c.Op == "QR":
		dcQR(t, c, layout, a, outs, tol)
	case c.Op == "SVD":
		dcSVD(t, c, layout, a, outs, tol)
	case c.Op == "Eigh":
		dcEigh(t, c, layout, a, outs, tol)
	case c.Op == "Eig" || c.Op == "Eigvals":
		dcEig(t, c, layout, a, outs, tol)
	}
}

// dcMats is a stack of matrices as float64 values.
type dcMats struct {
	v           []float64
	count, r, c int
}

func dcMatsOf(t *testing.T, a *array.Array) dcMats {
	t.Helper()
	v, err := array.ToSlice[float64](ops.AsType(a, array.Float64))
	if err != nil {
		t.Fatal(err)
	}
	s := a.Shape()
	m := dcMats{v: v, r: s[len(s)-2], c: s[len(s)-1]}
	if m.r*m.c > 0 {
		m.count = len(v) / (m.r * m.c)
	}
	return m
}

func (m dcMats) at(b, i, j int) float64 { return m.v[(b*m.r+i)*m.c+j] }

// dcVecs reads [..., k] values.
func dcVecs(t *testing.T, a *array.Array) []float64 {
	t.Helper()
	v, err := array.ToSlice[float64](ops.AsType(a, array.Float64))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func dcClose(x, y float64, tol arraytest.Tol, scale float64) bool {
	return math.Abs(x-y) <= tol.Atol*max(1, scale)+tol.Rtol*math.Abs(y)
}

// dcOrthonormal checks that the first k columns of every matrix of
// q are orthonormal.
func dcOrthonormal(t *testing.T, what string, q dcMats, k int, tol arraytest.Tol) {
	t.Helper()
	for b := range q.count {
		for i := range k {
			for j := range k {
				d := 0.0
				for r := range q.r {
					d += q.at(b, r, i) * q.at(b, r, j)
				}
				want := 0.0
				if i == j {
					want = 1
				}
				if !dcClose(d, want, tol, float64(q.r)) {
					t.Fatalf("%s: matrix %d: column %d · column %d = %v, want %v", what, b, i, j, d, want)
				}
			}
		}
	}
}

// dcTranspose swaps the last two axes.
func dcTranspose(m dcMats) dcMats {
	out := dcMats{v: make([]float64, len(m.v)), count: m.count, r: m.c, c: m.r}
	for b := range m.count {
		for i := range m.r {
			for j := range m.c {
				out.v[(b*out.r+j)*out.c+i] = m.at(b, i, j)
			}
		}
	}
	return out
}

// dcMatchColumns checks that the first k columns of got equal want's up to
// one sign per column, returning the signs.
func dcMatchColumns(t *testing.T, what string, got, want dcMats, k int, tol arraytest.Tol) [][]float64 {
	t.Helper()
	signs := make([][]float64, got.count)
	for b := range got.count {
		signs[b] = make([]float64, k)
		for j := range k {
			d := 0.0
			for r := range got.r {
				d += got.at(b, r, j) * want.at(b, r, j)
			}
			sg := 1.0
			if d < 0 {
				sg = -1
			}
			signs[b][j] = sg
			for r := range got.r {
				if !dcClose(sg*got.at(b, r, j), want.at(b, r, j), tol, 1) {
					t.Fatalf("%s: matrix %d column %d row %d: %v, want ±%v", what, b, j, r, got.at(b, r, j), want.at(b, r, j))
				}
			}
		}
	}
	return signs
}

// dcProduct checks that x·diag(d)·y (d nil: the identity; only the
// first k columns of x and rows of y) reproduces a.
func dcProduct(t *testing.T, what string, a, x dcMats, d []float64, y dcMats, k int, tol arraytest.Tol) {
	t.Helper()
	for b := range a.count {
		for i := range a.r {
			for j := range a.c {
				s := 0.0
				for l := range k {
					f := x.at(b, i, l) * y.at(b, l, j)
					if d != nil {
						f *= d[b*k+l]
					}
					s += f
				}
				if !dcClose(s, a.at(b, i, j), tol, float64(k)) {
					t.Fatalf("%s: matrix %d [%d %d]: the product is %v, want %v", what, b, i, j, s, a.at(b, i, j))
				}
			}
		}
	}
}

// dcSym is the symmetric matrix a routine reading one triangle of a sees.
func dcSym(a dcMats, upper bool) dcMats {
	out := dcMats{v: slices.Clone(a.v), count: a.count, r: a.r, c: a.c}
	for b := range a.count {
		for i := range a.r {
			for j := range i {
				if upper {
					out.v[(b*a.r+i)*a.c+j] = a.at(b, j, i)
				} else {
					out.v[(b*a.r+j)*a.c+i] = a.at(b, i, j)
				}
			}
		}
	}
	return out
}

func dcCholesky(t *testing.T, layout string, a, f *array.Array, upper bool, tol arraytest.Tol) {
	t.Helper()
	am, fm := dcSym(dcMatsOf(t, a), upper), dcMatsOf(t, f)
	l := fm
	if upper {
		l = dcTranspose(fm)
	}
	dcProduct(t, layout+" L·Lᵀ", am, l, nil, dcTranspose(l), am.c, tol)
}

func dcQR(t *testing.T, c refCase, layout string, a *array.Array, outs []*array.Array, tol arraytest.Tol) {
	t.Helper()
	am, q, r := dcMatsOf(t, a), dcMatsOf(t, outs[0]), dcMatsOf(t, outs[1])
	k := min(am.r, am.c)
	dcOrthonormal(t, layout+" Q", q, q.c, tol)
	dcProduct(t, layout+" Q·R", am, q, nil, r, q.c, tol)
	for b := range r.count {
		for i := range r.r {
			for j := range min(i, r.c) {
				if r.at(b, i, j) != 0 {
					t.Fatalf("%s: R[%d][%d %d] = %v below the diagonal", layout, b, i, j, r.at(b, i, j))
				}
			}
		}
	}
	if strings.Contains(c.Name, "rank deficient") {
		return
	}
	signs := dcMatchColumns(t, layout+" Q", q, dcMatsOf(t, c.Expected[0].Build(t)), k, tol)
	want := dcMatsOf(t, c.Expected[1].Build(t))
	for b := range r.count {
		for i := range k {
			for j := range r.c {
				if !dcClose(signs[b][i]*r.at(b, i, j), want.at(b, i, j), tol, 1) {
					t.Fatalf("%s: R[%d][%d %d] = %v, want ±%v", layout, b, i, j, r.at(b, i, j), want.at(b, i, j))
				}
			}
		}
	}
}

func dcSVD(t *testing.T, c refCase, layout string, a *array.Array, outs []*array.Array, tol arraytest.Tol) {
	t.Helper()
	arraytest.AssertClose(t, c.Expected[1].Build(t), outs[1], tol, "%s s", layout)
	am, u, vt := dcMatsOf(t, a), dcMatsOf(t, outs[0]), dcMatsOf(t, outs[2])
	s := dcVecs(t, outs[1])
	k := min(am.r, am.c)
	v := dcTranspose(vt)
	dcOrthonormal(t, layout+" U", u, u.c, tol)
	dcOrthonormal(t, layout+" V", v, v.c, tol)
	dcProduct(t, layout+" U·diag(s)·Vᵀ", am, u, s, vt, k, tol)
	// singular vectors are unique up to sign where the values are
	// distinct and nonzero: all the cases' are
	su := dcMatchColumns(t, layout+" U", u, dcMatsOf(t, c.Expected[0].Build(t)), k, tol)
	sv := dcMatchColumns(t, layout+" V", v, dcTranspose(dcMatsOf(t, c.Expected[2].Build(t))), k, tol)
	for b := range su {
		for j := range su[b] {
			if su[b][j] != sv[b][j] {
				t.Fatalf("%s: matrix %d: the signs of u's and v's column %d differ", layout, b, j)
			}
		}
	}
}

func dcEigh(t *testing.T, c refCase, layout string, a *array.Array, outs []*array.Array, tol arraytest.Tol) {
	t.Helper()
	arraytest.AssertClose(t, c.Expected[0].Build(t), outs[0], tol, "%s w", layout)
	var upper, repeated bool
	c.Param(t, "upper", &upper)
	c.Param(t, "repeated", &repeated)
	am, v := dcSym(dcMatsOf(t, a), upper), dcMatsOf(t, outs[1])
	w := dcVecs(t, outs[0])
	ortho := tol
	var scale float64
	if c.Param(t, "scaled", &scale) {
		ortho.Atol /= scale
	}
	dcOrthonormal(t, layout+" V", v, v.c, ortho)
	dcProduct(t, layout+" V·diag(w)·Vᵀ", am, v, w, dcTranspose(v), v.c, tol)
	if !repeated {
		dcMatchColumns(t, layout+" V", v, dcMatsOf(t, c.Expected[1].Build(t)), v.c, ortho)
	}
}

// dcComplex reads complex64 values.
func dcComplex(t *testing.T, a *array.Array) []complex128 {
	t.Helper()
	v, err := array.ToSlice[complex64](a)
	if err != nil {
		t.Fatal(err)
	}
	return refcase.MapSlice(v, func(c complex64) complex128 { return complex128(c) })
}

func dcEig(t *testing.T, c refCase, layout string, a *array.Array, outs []*array.Array, tol arraytest.Tol) {
	t.Helper()
	am := dcMatsOf(t, a)
	n := am.c
	w, want := dcComplex(t, outs[0]), c.Expected[0].Values(t)
	ctol := 1e-5 // complex64 results
	// the same eigenvalues, matched one to one
	for b := range am.count {
		used := make([]bool, n)
		for i := range n {
			best := -1
			for j := range n {
				if !used[j] && (best < 0 || cmplx.Abs(w[b*n+j]-want[b*n+i]) < cmplx.Abs(w[b*n+best]-want[b*n+i])) {
					best = j
				}
			}
			if cmplx.Abs(w[b*n+best]-want[b*n+i]) > ctol*max(1, cmplx.Abs(want[b*n+i])) {
				t.Fatalf("%s: matrix %d: eigenvalue %v of numpy's is not among %v", layout, b, want[b*n+i], w[b*n:b*n+n])
			}
			used[best] = true
		}
	}
	if c.Op == "Eigvals" {
		return
	}
	v, wantV := dcComplex(t, outs[1]), c.Expected[1].Values(t)
	for b := range am.count {
		for j := range n {
			lam := w[b*n+j]
			norm := 0.0
			for r := range n {
				av := complex128(0)
				for k := range n {
					av += complex(am.at(b, r, k), 0) * v[(b*n+k)*n+j]
				}
				if cmplx.Abs(av-lam*v[(b*n+r)*n+j]) > ctol*max(1, cmplx.Abs(lam)) {
					t.Fatalf("%s: matrix %d: A·v ≠ λ·v for eigenvalue %d (%v)", layout, b, j, lam)
				}
				norm += real(v[(b*n+r)*n+j] * cmplx.Conj(v[(b*n+r)*n+j]))
			}
			if math.Abs(norm-1) > ctol {
				t.Fatalf("%s: matrix %d: eigenvector %d has norm² %v", layout, b, j, norm)
			}
			// numpy's vector for the same eigenvalue, up to a phase
			for i := range n {
				if cmplx.Abs(want[b*n+i]-lam) > ctol*max(1, cmplx.Abs(lam)) {
					continue
				}
				dot := complex128(0)
				for r := range n {
					dot += cmplx.Conj(wantV[(b*n+r)*n+i]) * v[(b*n+r)*n+j]
				}
				if math.Abs(cmplx.Abs(dot)-1) > 1e-4 {
					t.Fatalf("%s: matrix %d: eigenvector %d is not numpy's up to a phase (|⟨v, v_np⟩| = %v)", layout, b, j, cmplx.Abs(dot))
				}
			}
		}
	}
}

// dcCalls builds each decomposition on a, one entry per exported function
// and form, with every output.
func dcCalls() map[string]func(a *array.Array) []*array.Array {
	two := func(x, y *array.Array) []*array.Array { return []*array.Array{x, y} }
	three := func(x, y, z *array.Array) []*array.Array { return []*array.Array{x, y, z} }
	return map[string]func(a *array.Array) []*array.Array{
		"LinalgCholesky":    func(a *array.Array) []*array.Array { return []*array.Array{ops.LinalgCholesky(a, false)} },
		"LinalgCholeskyInv": func(a *array.Array) []*array.Array { return []*array.Array{ops.LinalgCholeskyInv(a, true)} },
		"LinalgQR":          func(a *array.Array) []*array.Array { return two(ops.LinalgQR(a, false)) },
		"LinalgQR complete": func(a *array.Array) []*array.Array { return two(ops.LinalgQR(a, true)) },
		"LinalgSVD":         func(a *array.Array) []*array.Array { return three(ops.LinalgSVD(a, true)) },
		"LinalgSVD thin":    func(a *array.Array) []*array.Array { return three(ops.LinalgSVD(a, false)) },
		"LinalgSVDVals":     func(a *array.Array) []*array.Array { return []*array.Array{ops.LinalgSVDVals(a)} },
		"LinalgEigh":        func(a *array.Array) []*array.Array { return two(ops.LinalgEigh(a, false)) },
		"LinalgEigvalsh":    func(a *array.Array) []*array.Array { return []*array.Array{ops.LinalgEigvalsh(a, true)} },
		"LinalgEig":         func(a *array.Array) []*array.Array { return two(ops.LinalgEig(a)) },
		"LinalgEigvals":     func(a *array.Array) []*array.Array { return []*array.Array{ops.LinalgEigvals(a)} },
	}
}

// dcSquare reports whether the op takes square matrices only.
func dcSquare(name string) bool {
	return !strings.HasPrefix(name, "LinalgQR") && !strings.HasPrefix(name, "LinalgSVD")
}

// dcOpName is the name the op's errors carry.
func dcOpName(name string) string { return "ops." + strings.Fields(name)[0] }

func TestLinalgDecompBadInput(t *testing.T) {
	var tests []opError
	for name, f := range dcCalls() {
		op := dcOpName(name)
		tests = append(tests,
			opError{name + " nil", func() { f(nil) }, op, []string{"nil"}},
			opError{name + " 1-D", func() { f(array.FromSlice([]float32{1, 2})) }, op, []string{"[2]", "not a matrix"}},
			opError{name + " 0-D", func() { f(array.Scalar(float32(1))) }, op, []string{"[]", "not a matrix"}},
			opError{name + " complex64", func() { f(array.FromSlice([]complex64{1, 2, 3, 4}, 2, 2)) }, op, []string{"complex64"}},
			opError{name + " float16", func() { f(ops.AsType(array.FromSlice([]float32{1, 2, 3, 4}, 2, 2), array.Float16)) }, op, []string{"float16"}},
		)
		if dcSquare(name) {
			tests = append(tests, opError{name + " non-square", func() { f(ops.Zeros([]int{2, 2, 3}, array.Float32)) }, op, []string{"[2 2 3]", "not square"}})
		}
	}
	wantOpErrors(t, tests)
}

// TestLinalgDecompShapeRules checks each primitive's OutputShapes (which
// shapeless compilation replays) against the shapes the call gave, the
// result dtypes, and Equivalent.
func TestLinalgDecompShapeRules(t *testing.T) {
	for name, f := range dcCalls() {
		for _, shape := range [][]int{{3, 3}, {2, 4, 4}, {0, 2, 2}, {1, 1}, {4, 2}, {2, 3}, {2, 0, 3}} {
			if dcSquare(name) && shape[len(shape)-1] != shape[len(shape)-2] {
				continue
			}
			for _, dt := range []array.DType{array.Float32, array.Float64, array.Int32} {
				a := ops.Zeros(shape, dt)
				outs := f(a)
				prim := outs[0].Primitive()
				got, err := prim.(array.ShapeRule).OutputShapes(outs[0].Inputs())
				if err != nil {
					t.Fatalf("%s %v: OutputShapes: %v", name, shape, err)
				}
				if len(got) != len(outs) {
					t.Fatalf("%s %v: %d shapes for %d outputs", name, shape, len(got), len(outs))
				}
				for i, o := range outs {
					if !slices.Equal(got[i], o.Shape()) {
						t.Errorf("%s %v: OutputShapes gives %v for output %d of shape %v", name, shape, got[i], i, o.Shape())
					}
					want := dt
					if dt == array.Int32 {
						want = array.Float32
					}
					if strings.HasPrefix(name, "LinalgEig") && !strings.HasPrefix(name, "LinalgEigh") && name != "LinalgEigvalsh" {
						want = array.Complex64
					}
					if o.DType() != want {
						t.Errorf("%s %v %v: output %d has dtype %v, want %v", name, shape, dt, i, o.DType(), want)
					}
				}
				if !prim.(array.Equivalence).Equivalent(f(a)[0].Primitive()) {
					t.Errorf("%s: not Equivalent to itself", name)
				}
			}
		}
	}
	a := ops.Zeros([]int{3, 3}, array.Float64)
	for _, c := range []struct {
		name string
		x, y *array.Array
	}{
		{"Cholesky upper", ops.LinalgCholesky(a, true), ops.LinalgCholesky(a, false)},
		{"CholeskyInv upper", ops.LinalgCholeskyInv(a, true), ops.LinalgCholeskyInv(a, false)},
		{"Eigvalsh upper", ops.LinalgEigvalsh(a, true), ops.LinalgEigvalsh(a, false)},
		{"QR complete", dcFirst(ops.LinalgQR(a, true)), dcFirst(ops.LinalgQR(a, false))},
		{"SVD full", dcFirst3(ops.LinalgSVD(a, true)), dcFirst3(ops.LinalgSVD(a, false))},
		{"Eigh upper", dcFirst(ops.LinalgEigh(a, true)), dcFirst(ops.LinalgEigh(a, false))},
		{"Eig vectors", dcFirst(ops.LinalgEig(a)), ops.LinalgEigvals(a)},
	} {
		if c.x.Primitive().(array.Equivalence).Equivalent(c.y.Primitive()) {
			t.Errorf("%s: Equivalent across different parameters", c.name)
		}
	}
}

func dcFirst(x, _ *array.Array) *array.Array     { return x }
func dcFirst3(x, _, _ *array.Array) *array.Array { return x }

// TestLinalgDecompIntegers: integers compute in float32, as MLX's.
func TestLinalgDecompIntegers(t *testing.T) {
	l := ops.LinalgCholesky(array.FromSlice([]int32{4, 2, 2, 5}, 2, 2), false)
	arraytest.AssertClose(t, array.FromSlice([]float32{2, 0, 1, 2}, 2, 2), l, arraytest.Tol{Rtol: 1e-6}, "Cholesky of int32")
	w := ops.LinalgEigvalsh(array.FromSlice([]int64{2, 1, 1, 2}, 2, 2), false)
	arraytest.AssertClose(t, array.FromSlice([]float32{1, 3}), w, arraytest.Tol{Rtol: 1e-6}, "Eigvalsh of int64")
	s := ops.LinalgSVDVals(array.FromSlice([]bool{true, false, false, true, false, false}, 3, 2))
	arraytest.AssertClose(t, array.FromSlice([]float32{1, 1}), s, arraytest.Tol{Rtol: 1e-6}, "SVDVals of bool")
}

// TestLinalgDecompManyMatrices runs batches large enough to split over
// cores, with a failing matrix late in the batch, against each matrix
// decomposed alone.
func TestLinalgDecompManyMatrices(t *testing.T) {
	const batch, n = 300, 3
	data := make([]float64, batch*n*n)
	for b := range batch {
		for i := range n {
			for j := range n {
				v := float64((b*7+i*3+j*5)%11) / 11
				if i == j {
					v += 3
				}
				data[(b*n+i)*n+j] = v
			}
		}
	}
	a := array.FromSlice(data, batch, n, n)
	w, v := ops.LinalgEigh(a, false)
	l := ops.LinalgCholesky(a, false)
	s := ops.LinalgSVDVals(a)
	if err := array.Eval(w, v, l, s); err != nil {
		t.Fatal(err)
	}
	for _, b := range []int{0, 1, 150, 299} {
		one := ops.SliceAxis(a, 0, ops.R(b, b+1))
		w1, v1 := ops.LinalgEigh(one, false)
		for _, c := range []struct {
			name      string
			got, want *array.Array
		}{
			{"Eigh w", w, w1}, {"Eigh v", v, v1}, {"Cholesky", l, ops.LinalgCholesky(one, false)}, {"SVDVals", s, ops.LinalgSVDVals(one)},
		} {
			arraytest.AssertClose(t, c.want, ops.SliceAxis(c.got, 0, ops.R(b, b+1)), arraytest.Tol{}, "%s of matrix %d", c.name, b)
		}
	}
	bad := slices.Clone(data)
	for i := range n * n {
		bad[200*n*n+i] = -1
		bad[280*n*n+i] = -1
	}
	err := ops.LinalgCholesky(array.FromSlice(bad, 2, batch/2, n, n), false).Eval()
	if !errors.Is(err, cpu.ErrNotPositiveDefinite) || !strings.Contains(err.Error(), "batch index [1 50]") || !strings.Contains(err.Error(), "[2 150 3 3]") {
		t.Fatalf("Cholesky of a batch with a bad matrix: %v", err)
	}
}

// TestLinalgDecompHugeMatrix: a broadcast view can hold one matrix larger
// than memory while the result is small; its scratch is refused with an
// error, not a crash.
func TestLinalgDecompHugeMatrix(t *testing.T) {
	huge := ops.BroadcastTo(array.Scalar(float32(1)), 1<<21, 1<<21)
	for name, x := range map[string]*array.Array{
		"Eigvalsh": ops.LinalgEigvalsh(huge, false),
		"SVDVals":  ops.LinalgSVDVals(ops.BroadcastTo(array.Scalar(float32(1)), 2, 1<<42)),
	} {
		err := x.Eval()
		if !errors.Is(err, array.ErrOutOfMemory) || !strings.HasPrefix(err.Error(), "linalg."+name+": cannot allocate the float64 copy of one matrix") {
			t.Errorf("%s: Eval returned %v, want an error wrapping ErrOutOfMemory about the copy of a matrix", name, err)
		}
	}
}

// TestLinalgDecompCompiled replays the decompositions and a gradient
// through them from a compiled trace, and the decompositions from a
// shapeless trace over a new batch size (their OutputShapes give the new
// shapes; the matrix size stays, since the masks Tril builds are
// constants of the trace), and compares with the uncompiled results.
// (graph's transforms cannot be traced shapeless: their tracers have no
// shape rule.)
func TestLinalgDecompCompiled(t *testing.T) {
	fwd := func(in ...*array.Array) []*array.Array {
		a := in[0]
		eye := ops.Tril(ops.Triu(ops.OnesLike(a), 0), 0)
		spd := ops.Add(ops.MatMul(a, ops.SwapAxes(a, -1, -2)), ops.MulScalar(eye, 4))
		w, _ := ops.LinalgEigh(spd, false)
		_, r := ops.LinalgQR(a, false)
		_, s, _ := ops.LinalgSVD(a, false)
		return []*array.Array{w, ops.Abs(r), s, ops.LinalgCholesky(spd, true), spd}
	}
	withGrad := func(in ...*array.Array) []*array.Array {
		outs := fwd(in...)
		loss := func(x ...*array.Array) *array.Array {
			w, v := ops.LinalgEigh(x[0], false)
			u, s, _ := ops.LinalgSVD(x[0], false)
			return ops.Add(ops.Sum(ops.LinalgCholesky(x[0], false)),
				ops.Add(ops.Sum(ops.Mul(ops.ExpandDims(w, -2), ops.Square(v))), ops.Sum(ops.Mul(ops.ExpandDims(s, -2), ops.Square(u)))))
		}
		return append(outs, graph.Grad(loss)(outs[len(outs)-1])[0])
	}
	for _, c := range []struct {
		f      graph.Fn
		opts   []compile.Option
		shapes [][3]int
	}{
		{withGrad, nil, [][3]int{{2, 3, 3}, {2, 4, 4}, {2, 3, 3}}},
		{fwd, []compile.Option{compile.Shapeless()}, [][3]int{{2, 3, 3}, {5, 3, 3}}},
	} {
		cf := compile.Compile(c.f, c.opts...)
		for _, sh := range c.shapes {
			b, n := sh[0], sh[1]
			x := ops.Reshape(ops.Sin(ops.Arange(0, float64(b*n*n), 1, array.Float64)), b, n, n)
			want, got := c.f(x), cf.Call(x)
			for i := range want {
				arraytest.AssertClose(t, want[i], got[i], arraytest.Tol{Rtol: 1e-12, Atol: 1e-12}, "%v output %d", sh, i)
			}
		}
		cf.Release()
	}
}

// TestLinalgEigVmap: Eig and Eigvals, which have no gradient row (and so
// no Vmap check in graph's table), batch under Vmap as a loop does.
func TestLinalgEigVmap(t *testing.T) {
	x := ops.Reshape(ops.Cos(ops.Arange(0, 27, 1, array.Float64)), 3, 3, 3)
	f := func(in ...*array.Array) []*array.Array {
		w, v := ops.LinalgEig(in[0])
		return []*array.Array{w, v, ops.LinalgEigvals(in[0])}
	}
	got := graph.Vmap(f, []int{-1}, nil)(x)
	for b := range 3 {
		want := f(ops.Squeeze(ops.SliceAxis(x, -1, ops.R(b, b+1)), -1))
		for i := range want {
			arraytest.AssertClose(t, want[i], ops.Squeeze(ops.SliceAxis(got[i], 0, ops.R(b, b+1)), 0), arraytest.Tol{}, "batch %d output %d", b, i)
		}
	}
}
