package linalg_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/linalg"
	"github.com/fathom-go/fathom/ops"
)

// decompWantPanic checks that f panics with an *array.Error of op whose message
// holds want.
func decompWantPanic(t *testing.T, name string, f func(), op, want string) {
	t.Helper()
	err := array.Try(f)
	var e *array.Error
	if !errors.As(err, &e) || e.Op != op || !strings.Contains(e.Msg, want) {
		t.Errorf("%s: got %v, want an *array.Error of %s mentioning %q", name, err, op, want)
	}
}

// TestEigHasNoDerivative: differentiating through Eig or Eigvals, in
// either mode, is a clear error rather than a wrong answer.
func TestEigHasNoDerivative(t *testing.T) {
	a := array.FromSlice([]float64{1, 2, 3, 4}, 2, 2)
	realPart := func(f func(*array.Array) *array.Array) graph.Fn {
		return func(in ...*array.Array) []*array.Array { return []*array.Array{ops.Real(f(in[0]))} }
	}
	eig := func(x *array.Array) *array.Array { w, _ := linalg.Eig(x); return w }
	for op, f := range map[string]graph.Fn{"linalg.Eig": realPart(eig), "linalg.Eigvals": realPart(linalg.Eigvals)} {
		decompWantPanic(t, op+" VJP", func() {
			graph.VJP(f, []*array.Array{a}, []*array.Array{ops.Ones([]int{2}, array.Float32)})
		}, op, "no derivative")
		decompWantPanic(t, op+" JVP", func() { graph.JVP(f, []*array.Array{a}, []*array.Array{a}) }, op, "no derivative")
	}
}

// TestSVDFullNonSquareDerivative: the full SVD of a non-square matrix is
// differentiable through s alone (as SVDVals), and a gradient through u
// or vt, or any JVP, is a clear error.
func TestSVDFullNonSquareDerivative(t *testing.T) {
	a := array.FromSlice([]float64{1, 2, 3, -1, 0.5, 2, 4, 1}, 4, 2)
	viaSVD := graph.Grad(func(in ...*array.Array) *array.Array {
		_, s, _ := linalg.SVD(in[0])
		return ops.Sum(ops.Square(s))
	})(a)[0]
	viaVals := graph.Grad(func(in ...*array.Array) *array.Array { return ops.Sum(ops.Square(linalg.SVDVals(in[0]))) })(a)[0]
	// the gradient of the squared Frobenius norm is 2a
	arraytest.AssertClose(t, ops.MulScalar(a, 2), viaVals, arraytest.Tol{Rtol: 1e-12, Atol: 1e-12}, "via SVDVals")
	arraytest.AssertClose(t, viaVals, viaSVD, arraytest.Tol{Rtol: 1e-12, Atol: 1e-12}, "via SVD's s")
	decompWantPanic(t, "gradient through u", func() {
		graph.Grad(func(in ...*array.Array) *array.Array { u, _, _ := linalg.SVD(in[0]); return ops.Sum(u) })(a)
	}, "linalg.SVD", "SVDThin")
	decompWantPanic(t, "JVP", func() {
		graph.JVP(func(in ...*array.Array) []*array.Array { _, s, _ := linalg.SVD(in[0]); return []*array.Array{s} },
			[]*array.Array{a}, []*array.Array{a})
	}, "linalg.SVD", "not unique")
	// square: full is thin, and differentiable
	sq := ops.Reshape(ops.SliceAxis(ops.Reshape(a, 8), 0, ops.R(0, 4)), 2, 2)
	g := graph.Grad(func(in ...*array.Array) *array.Array { u, _, _ := linalg.SVD(in[0]); return ops.Sum(ops.Mul(u, u)) })(sq)[0]
	arraytest.AssertClose(t, ops.ZerosLike(sq), g, arraytest.Tol{Atol: 1e-12}, "gradient of ‖U‖² of a square matrix")
}

// TestQRCompleteTallDerivative: the complete QR of a tall matrix is
// differentiable through r (as the reduced QR's), not through q.
func TestQRCompleteTallDerivative(t *testing.T) {
	a := array.FromSlice([]float64{1, 2, 3, -1, 0.5, 2, 4, 1}, 4, 2)
	w := array.FromSlice([]float64{1, -2, 3, 0.5}, 2, 2)
	viaComplete := graph.Grad(func(in ...*array.Array) *array.Array {
		_, r := linalg.QRComplete(in[0])
		return ops.Sum(ops.Mul(ops.SliceAxis(r, 0, ops.R(0, 2)), w))
	})(a)[0]
	viaReduced := graph.Grad(func(in ...*array.Array) *array.Array {
		_, r := linalg.QR(in[0])
		return ops.Sum(ops.Mul(r, w))
	})(a)[0]
	arraytest.AssertClose(t, viaReduced, viaComplete, arraytest.Tol{Rtol: 1e-12, Atol: 1e-12}, "r's gradient")
	decompWantPanic(t, "gradient through q", func() {
		graph.Grad(func(in ...*array.Array) *array.Array { q, _ := linalg.QRComplete(in[0]); return ops.Sum(q) })(a)
	}, "linalg.QRComplete", "reduced")
}

// TestEighTriangle: Upper reads the upper triangle, Lower (the default)
// the lower; anything else is refused.
func TestEighTriangle(t *testing.T) {
	a := array.FromSlice([]float64{2, 1, 0, 9, 3, 1, 9, 9, 4}, 3, 3)
	up := array.FromSlice([]float64{2, 1, 0, 1, 3, 1, 0, 1, 4}, 3, 3)
	low := array.FromSlice([]float64{2, 9, 9, 9, 3, 9, 9, 9, 4}, 3, 3)
	tol := arraytest.Tol{Rtol: 1e-12, Atol: 1e-12}
	arraytest.AssertClose(t, linalg.Eigvalsh(up), linalg.Eigvalsh(a, linalg.Upper), tol, "Upper")
	arraytest.AssertClose(t, linalg.Eigvalsh(low), linalg.Eigvalsh(a), tol, "default")
	arraytest.AssertClose(t, linalg.Eigvalsh(low), linalg.Eigvalsh(a, linalg.Lower), tol, "Lower")
	w, v := linalg.Eigh(a, linalg.Upper)
	arraytest.AssertClose(t, up, ops.MatMul(ops.Mul(v, w), ops.SwapAxes(v, 0, 1)), tol, "V·diag(w)·Vᵀ")
	decompWantPanic(t, "two triangles", func() { linalg.Eigh(a, linalg.Lower, linalg.Upper) }, "linalg.Eigh", "2 triangles")
	decompWantPanic(t, "bad triangle", func() { linalg.Eigvalsh(a, linalg.Triangle(7)) }, "linalg.Eigvalsh", "triangle 7")
}

// TestCholeskyInvIsInverse: CholeskyInv of the factor is the inverse, for
// either triangle, in a batch.
func TestCholeskyInvIsInverse(t *testing.T) {
	a := array.FromSlice([]float64{4, 2, 0.5, 2, 5, 1, 0.5, 1, 3, 2, -1, 0, -1, 2, -1, 0, -1, 2}, 2, 3, 3)
	inv := linalg.Inv(a)
	tol := arraytest.Tol{Rtol: 1e-12, Atol: 1e-12}
	for _, upper := range []bool{false, true} {
		arraytest.AssertClose(t, inv, linalg.CholeskyInv(linalg.Cholesky(a, upper), upper), tol, "upper=%v", upper)
	}
	err := linalg.CholeskyInv(array.FromSlice([]float64{1, 0, 2, 0}, 2, 2), false).Eval()
	if !errors.Is(err, linalg.ErrSingular) {
		t.Errorf("CholeskyInv of a singular factor: %v, want ErrSingular", err)
	}
}
