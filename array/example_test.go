package array_test

import (
	"fmt"

	"github.com/fathom-go/fathom/array"
)

func ExampleFromSlice() {
	a := array.FromSlice([]int32{1, 2, 3, 4, 5, 6}, 2, 3)
	fmt.Println(a.Shape(), a.DType(), a.Size())
	fmt.Println(a)
	// Output:
	// [2 3] int32 6
	// array([[1, 2, 3],
	//        [4, 5, 6]], dtype=int32)
}

func ExampleToSlice() {
	a := array.FromSlice([]float32{0.5, 1.5, 2.5}, 3)
	xs, err := array.ToSlice[float32](a)
	fmt.Println(xs, err)

	// The element type must be the array's: float32 here, not float64.
	_, err = array.ToSlice[float64](a)
	fmt.Println(err)
	// Output:
	// [0.5 1.5 2.5] <nil>
	// array.ToSlice: array has dtype float32, not float64
}

func ExampleArray_Item() {
	fmt.Println(array.Scalar(int32(42)).Item())
	fmt.Println(array.Scalar(array.NewF16(0.1)).Item()) // the float16 nearest 0.1
	fmt.Println(array.FromSlice([]bool{true}).Item())
	// Output:
	// 42
	// 0.0999755859375
	// 1
}

func ExampleArray_String() {
	fmt.Println(array.FromSlice([]float32{1, 2.5, -3.25}))
	fmt.Println(array.FromSlice([]float64{1e-7, 1, 1e3}))
	fmt.Println(array.FromSlice([]array.F16{array.NewF16(0.1), array.NewF16(0.2)}))
	fmt.Println(array.Scalar(true))
	fmt.Println(array.FromSlice([]float32{}, 0, 3))
	// Output:
	// array([ 1.  ,  2.5 , -3.25], dtype=float32)
	// array([1.e-07, 1.e+00, 1.e+03], dtype=float64)
	// array([0.1, 0.2], dtype=float16)
	// array(True, dtype=bool)
	// array([], shape=(0, 3), dtype=float32)
}

func ExampleArray_String_summarised() {
	xs := make([]int32, 2000)
	for i := range xs {
		xs[i] = int32(i)
	}
	fmt.Println(array.FromSlice(xs, 40, 50))
	// Output:
	// array([[   0,    1,    2, ...,   47,   48,   49],
	//        [  50,   51,   52, ...,   97,   98,   99],
	//        [ 100,  101,  102, ...,  147,  148,  149],
	//        ...,
	//        [1850, 1851, 1852, ..., 1897, 1898, 1899],
	//        [1900, 1901, 1902, ..., 1947, 1948, 1949],
	//        [1950, 1951, 1952, ..., 1997, 1998, 1999]], dtype=int32)
}

func ExampleTry() {
	err := array.Try(func() {
		array.FromSlice([]float32{1, 2, 3}, 2, 2) // 3 elements cannot fill 2x2
	})
	fmt.Println(err)
	if e, ok := err.(*array.Error); ok {
		fmt.Println(e.Op)
	}
	// Output:
	// array.FromSlice: 3 elements do not fill shape [2 2] (4 elements)
	// array.FromSlice
}
