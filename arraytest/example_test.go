package arraytest_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
	"github.com/fathom-go/fathom/ops"
)

func ExampleApprox() {
	want := array.FromSlice([]float32{0.5, 0.25, 0.25})
	got := ops.Softmax(array.FromSlice([]float32{float32(math.Ln2), 0, 0}))
	fmt.Println(cmp.Equal(want, got, arraytest.Approx(1e-6, 0)))
	fmt.Println(cmp.Equal(want, ops.AddScalar(got, 1e-3), arraytest.Approx(1e-6, 0)))
	// Output:
	// true
	// false
}

// Approx compares the arrays in any value cmp walks, such as the
// parameters of a model.
func ExampleApprox_struct() {
	type linear struct {
		Weight, Bias *array.Array
	}
	want := linear{Weight: array.FromSlice([]float64{1, 2, 3, 4}, 2, 2), Bias: array.FromSlice([]float64{0, 0})}
	got := linear{Weight: ops.Transpose(array.FromSlice([]float64{1, 3, 2, 4}, 2, 2)), Bias: ops.Zeros([]int{2}, array.Float64)}
	fmt.Println(cmp.Equal(want, got, arraytest.Approx(0, 0)))
	// Output:
	// true
}

func ExampleEquateNaNs() {
	want := array.FromSlice([]float64{0, math.NaN()})
	got := ops.Log(array.FromSlice([]float64{1, -1}))
	fmt.Println(cmp.Equal(want, got, arraytest.Approx(1e-12, 0)))
	fmt.Println(cmp.Equal(want, got, arraytest.Approx(1e-12, 0), arraytest.EquateNaNs()))
	// Output:
	// false
	// true
}

func ExampleAssertClose() {
	t := new(testing.T) // in a test, the test's *testing.T
	x := array.FromSlice([]float32{1, 2, 3})
	want := array.FromSlice([]float32{2, 4, 6})
	arraytest.AssertClose(t, want, ops.MulScalar(x, 2), arraytest.Tol{})
}

func ExampleDefaultTol() {
	for _, dt := range []array.DType{array.Float16, array.BFloat16, array.Float32, array.Float64, array.Int32} {
		fmt.Printf("%v %+v\n", dt, arraytest.DefaultTol(dt))
	}
	// Output:
	// float16 {Rtol:0.002 Atol:0.001}
	// bfloat16 {Rtol:0.016 Atol:0.01}
	// float32 {Rtol:2e-05 Atol:1e-06}
	// float64 {Rtol:1e-12 Atol:1e-13}
	// int32 {Rtol:0 Atol:0}
}
