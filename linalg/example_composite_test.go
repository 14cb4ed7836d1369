package linalg_test

import (
	"fmt"
	"math"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/linalg"
)

func ExampleNorm() {
	a := array.FromSlice([]float64{3, -4, 0, 12}, 2, 2)
	fmt.Println(linalg.Norm(a, nil, nil, false))             // Frobenius
	fmt.Println(linalg.Norm(a, 1, []int{1}, false))          // Σ|x| of each row
	fmt.Println(linalg.Norm(a, math.Inf(1), nil, false))     // largest row sum
	fmt.Println(linalg.Norm(a, nil, []int{0}, true).Shape()) // keepDims
	// Output:
	// array(13., dtype=float64)
	// array([ 7., 12.], dtype=float64)
	// array(12., dtype=float64)
	// [1 2]
}

// Lstsq fits a line y = c0 + c1·x to four points.
func ExampleLstsq() {
	a := array.FromSlice([]float64{1, 0, 1, 1, 1, 2, 1, 3}, 4, 2)
	y := array.FromSlice([]float64{1, 3, 5, 7.5})
	x, res, rank, _ := linalg.Lstsq(a, y)
	fmt.Println(x)
	fmt.Printf("%.4f %v\n", res.Item(), rank.Item())
	// Output:
	// array([0.9 , 2.15], dtype=float64)
	// 0.0750 2
}

func ExampleMatrixPower() {
	fib := array.FromSlice([]int32{1, 1, 1, 0}, 2, 2)
	fmt.Println(linalg.MatrixPower(fib, 10))
	// Output:
	// array([[89, 55],
	//        [55, 34]], dtype=int32)
}

func ExampleCross() {
	x := array.FromSlice([]float32{1, 0, 0})
	y := array.FromSlice([]float32{0, 1, 0})
	fmt.Println(linalg.Cross(x, y, -1))
	// Output: array([0., 0., 1.], dtype=float32)
}
