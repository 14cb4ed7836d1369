package ops_test

import (
	"fmt"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

func ExampleAdd() {
	a := array.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	b := array.FromSlice([]float32{10, 20, 30})
	fmt.Println(ops.Add(a, b)) // b is broadcast over the rows of a
	// Output:
	// array([[11., 22., 33.],
	//        [14., 25., 36.]], dtype=float32)
}

func ExampleAdd_promotion() {
	i := array.FromSlice([]int32{1, 2})
	f := array.FromSlice([]float32{0.5, 0.25})
	fmt.Println(ops.Add(i, f).DType())
	fmt.Println(ops.AddScalar(i, 3).DType(), ops.AddScalar(i, 0.5).DType())
	// Output:
	// float32
	// int32 float32
}

func ExampleSum() {
	a := array.FromSlice([]int32{1, 2, 3, 4, 5, 6}, 2, 3)
	fmt.Println(ops.Sum(a))
	fmt.Println(ops.Sum(a, 0))
	fmt.Println(ops.Sum(a, -1))
	fmt.Println(ops.KeepDims(ops.Sum, a, 1).Shape())
	// Output:
	// array(21, dtype=int32)
	// array([5, 7, 9], dtype=int32)
	// array([ 6, 15], dtype=int32)
	// [2 1]
}

func ExampleMatMul() {
	a := array.FromSlice([]float64{1, 2, 3, 4}, 2, 2)
	fmt.Println(ops.MatMul(a, ops.Transpose(a)))
	v := array.FromSlice([]float64{1, 1})
	fmt.Println(ops.MatMul(a, v)) // a 1-D right operand is a column
	// Output:
	// array([[ 5., 11.],
	//        [11., 25.]], dtype=float64)
	// array([3., 7.], dtype=float64)
}

func ExampleSlice() {
	a := ops.Arange(0, 10, 1, array.Int32)
	fmt.Println(ops.Slice(a, ops.R(1, 8, 3)))
	fmt.Println(ops.Slice(a, ops.R(ops.None, ops.None, -1)))
	// Output:
	// array([1, 4, 7], dtype=int32)
	// array([9, 8, 7, 6, 5, 4, 3, 2, 1, 0], dtype=int32)
}

func ExampleReshape() {
	a := ops.Arange(0, 6, 1, array.Float32)
	fmt.Println(ops.Reshape(a, 2, -1))
	// Output:
	// array([[0., 1., 2.],
	//        [3., 4., 5.]], dtype=float32)
}

func ExampleSoftmax() {
	x := array.FromSlice([]float32{1, 2, 3, 1000, 1001, 1002}, 2, 3)
	fmt.Println(ops.Softmax(x, -1)) // stable for large inputs
	// Output:
	// array([[0.09003057, 0.24472848, 0.66524094],
	//        [0.09003057, 0.24472848, 0.66524094]], dtype=float32)
}

func ExampleTake() {
	a := array.FromSlice([]float32{10, 20, 30, 40})
	idx := array.FromSlice([]int32{3, 0, -1})
	fmt.Println(ops.Take(a, idx, 0))
	// Output:
	// array([40., 10., 40.], dtype=float32)
}

func ExampleWhere() {
	x := array.FromSlice([]float32{-2, -1, 0, 1, 2})
	fmt.Println(ops.Where(ops.Greater(x, ops.ZerosLike(x)), x, ops.ZerosLike(x)))
	// Output:
	// array([0., 0., 0., 1., 2.], dtype=float32)
}

func ExampleConcatenate() {
	a := array.FromSlice([]int32{1, 2, 3, 4}, 2, 2)
	b := array.FromSlice([]int32{5, 6}, 1, 2)
	fmt.Println(ops.Concatenate([]*array.Array{a, b}, 0))
	// Output:
	// array([[1, 2],
	//        [3, 4],
	//        [5, 6]], dtype=int32)
}

func ExampleSort() {
	a := array.FromSlice([]float32{3, 1, 2})
	fmt.Println(ops.Sort(a, 0), ops.ArgSort(a, 0), ops.TopK(a, 2, 0))
	// Output:
	// array([1., 2., 3.], dtype=float32) array([1, 2, 0], dtype=int32) array([3., 2.], dtype=float32)
}

func Example_errors() {
	a := array.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	err := array.Try(func() { ops.MatMul(a, a) })
	fmt.Println(err)
	err = array.Try(func() { ops.Sum(a, 2) })
	fmt.Println(err)
	// Output:
	// ops.MatMul: shapes [2 3] and [2 3]: inner dimensions 3 and 2 differ
	// ops.Sum: axis 2 out of range for 2 dimensions
}
