package linalg_test

import (
	"errors"
	"fmt"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/linalg"
)

// Solve one system, and a batch of two with a vector each.
func ExampleSolve() {
	a := array.FromSlice([]float64{3, 1, 1, 2}, 2, 2)
	b := array.FromSlice([]float64{9, 8})
	fmt.Println(linalg.Solve(a, b))

	batch := array.FromSlice([]float64{3, 1, 1, 2, 2, 0, 0, 4}, 2, 2, 2)
	cols := array.FromSlice([]float64{9, 8, 2, 4}, 2, 2, 1) // b as [..., n, 1]: one column each
	fmt.Println(linalg.Solve(batch, cols))
	// Output:
	// array([2., 3.], dtype=float64)
	// array([[[2.],
	//         [3.]],
	//
	//        [[1.],
	//         [1.]]], dtype=float64)
}

// A singular matrix is an error from Eval, which errors.Is tells apart.
func ExampleInv() {
	fmt.Println(linalg.Inv(array.FromSlice([]float64{4, 7, 2, 6}, 2, 2)))

	err := linalg.Inv(array.FromSlice([]float64{1, 2, 2, 4}, 2, 2)).Eval()
	fmt.Println(errors.Is(err, linalg.ErrSingular))
	fmt.Println(err)
	// Output:
	// array([[ 0.6, -0.7],
	//        [-0.2,  0.4]], dtype=float64)
	// true
	// linalg.Inv: the matrix of shape [2 2] is singular: U[1,1] is exactly zero
}

func ExampleSolveTriangular() {
	l := array.FromSlice([]float64{2, 0, 1, 4}, 2, 2)
	fmt.Println(linalg.SolveTriangular(l, array.FromSlice([]float64{4, 6}), false, false))
	// Output:
	// array([2., 1.], dtype=float64)
}

// The determinants of a batch of two matrices.
func ExampleDet() {
	a := array.FromSlice([]float64{0, 2, 3, 1, 1, 2, 2, 1}, 2, 2, 2) // [[0 2] [3 1]], [[1 2] [2 1]]
	fmt.Println(linalg.Det(a))
	// Output:
	// array([-6., -3.], dtype=float64)
}

// SlogDet of a regular and a singular matrix (numpy's values): the
// logarithm does not overflow where the determinant would.
func ExampleSlogDet() {
	a := array.FromSlice([]float64{0, 2, 3, 1, 1, 2, 2, 1}, 2, 2, 2)
	sign, logabs := linalg.SlogDet(a)
	fmt.Println(sign, logabs)

	sign, logabs = linalg.SlogDet(array.FromSlice([]float64{1, 2, 2, 4}, 2, 2))
	fmt.Println(sign, logabs)
	// Output:
	// array([-1., -1.], dtype=float64) array([1.79175947, 1.09861229], dtype=float64)
	// array(0., dtype=float64) array(-inf, dtype=float64)
}

// LU's permutation is row indices: a = l[p]·u.
func ExampleLU() {
	p, l, u := linalg.LU(array.FromSlice([]float64{1, 2, 4, 4}, 2, 2))
	fmt.Println(p)
	fmt.Println(l)
	fmt.Println(u)
	// Output:
	// array([1, 0], dtype=int32)
	// array([[1.  , 0.  ],
	//        [0.25, 1.  ]], dtype=float64)
	// array([[4., 4.],
	//        [0., 1.]], dtype=float64)
}

// Factor once, solve for several right-hand sides.
func ExampleLUFactor() {
	lu, piv := linalg.LUFactor(array.FromSlice([]float64{1, 2, 4, 4}, 2, 2))
	fmt.Println(piv)
	fmt.Println(linalg.LUSolve(lu, piv, array.FromSlice([]float64{5, 12})))
	fmt.Println(linalg.LUSolve(lu, piv, array.FromSlice([]float64{3, 8})))
	// Output:
	// array([1, 1], dtype=int32)
	// array([1., 2.], dtype=float64)
	// array([1., 1.], dtype=float64)
}
