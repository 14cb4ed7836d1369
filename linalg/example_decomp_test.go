package linalg_test

import (
	"errors"
	"fmt"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/linalg"
	"github.com/fathom-go/fathom/ops"
)

// The Cholesky factor of a covariance matrix, the inverse from it, and
// the error of a matrix that is not positive definite.
func ExampleCholesky() {
	cov := array.FromSlice([]float64{4, 2, 2, 10}, 2, 2)
	l := linalg.Cholesky(cov, false)
	fmt.Println(l)
	fmt.Println(linalg.CholeskyInv(l, false))

	err := linalg.Cholesky(array.FromSlice([]float64{1, 2, 2, 1}, 2, 2), false).Eval()
	fmt.Println(errors.Is(err, linalg.ErrNotPositiveDefinite))
	fmt.Println(err)
	// Output:
	// array([[2., 0.],
	//        [1., 3.]], dtype=float64)
	// array([[ 0.27777778, -0.05555556],
	//        [-0.05555556,  0.11111111]], dtype=float64)
	// true
	// linalg.Cholesky: the matrix of shape [2 2] is not positive definite
}

// The reduced and the complete QR of a tall matrix: q·r gives a back
// (to rounding, which the example hides).
func ExampleQR() {
	a := array.FromSlice([]float64{3, 0, 4, 5, 0, 4}, 3, 2)
	q, r := linalg.QR(a)
	fmt.Println(q.Shape(), r.Shape())
	fmt.Println(ops.AddScalar(ops.RoundDecimals(ops.MatMul(q, r), 12), 0))
	qc, rc := linalg.QRComplete(a)
	fmt.Println(qc.Shape(), rc.Shape())
	// Output:
	// [3 2] [2 2]
	// array([[3., 0.],
	//        [4., 5.],
	//        [0., 4.]], dtype=float64)
	// [3 3] [3 2]
}

// Singular values, the thin decomposition and its reconstruction.
func ExampleSVD() {
	a := array.FromSlice([]float64{3, 0, 0, 0, 0, -2}, 2, 3)
	fmt.Println(linalg.SVDVals(a))
	u, s, vt := linalg.SVD(a)
	fmt.Println(u.Shape(), s.Shape(), vt.Shape())
	ut, st, vtt := linalg.SVDThin(a)
	fmt.Println(ops.MatMul(ops.Mul(ut, st), vtt))
	// Output:
	// array([3., 2.], dtype=float64)
	// [2 2] [2] [3 3]
	// array([[ 3.,  0.,  0.],
	//        [ 0.,  0., -2.]], dtype=float64)
}

// The eigenvalues of a symmetric matrix, read from either triangle, and
// their gradient: the outer products of the eigenvectors, on the
// triangle read.
func ExampleEigh() {
	a := array.FromSlice([]float64{2, 99, 1, 2}, 2, 2) // the lower triangle holds 2, 1, 2
	w, _ := linalg.Eigh(a)
	fmt.Println(w)
	fmt.Println(linalg.Eigvalsh(a, linalg.Upper))

	largest := func(in ...*array.Array) *array.Array {
		return ops.Index(linalg.Eigvalsh(in[0]), 1)
	}
	fmt.Println(graph.Grad(largest)(a)[0])
	// Output:
	// array([1., 3.], dtype=float64)
	// array([-97., 101.], dtype=float64)
	// array([[0.5, 0. ],
	//        [1. , 0.5]], dtype=float64)
}

// A rotation has complex eigenvalues; Eig returns complex64.
func ExampleEig() {
	rot := array.FromSlice([]float32{0, -1, 1, 0}, 2, 2)
	fmt.Println(linalg.Eigvals(rot))
	// Output:
	// array([0.+1.j, 0.-1.j], dtype=complex64)
}
