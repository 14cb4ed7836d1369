package ops_test

import (
	"fmt"
	"math"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// One query attends over three keys; with causal, a query aligned to the
// end of the keys (L = 1, S = 3) still sees all of them.
func ExampleScaledDotProductAttention() {
	q := array.FromSlice([]float32{1, 0}, 1, 1, 1, 2)
	k := array.FromSlice([]float32{1, 0, 0, 1, -1, 0}, 1, 1, 3, 2)
	v := array.FromSlice([]float32{1, 0, 0, 1, 1, 1}, 1, 1, 3, 2)
	fmt.Println(ops.ScaledDotProductAttention(q, k, v, 1/math.Sqrt(2), nil, true))
	// Output:
	// array([[[[0.7160046 , 0.42402467]]]], dtype=float32)
}

// LayerNorm normalises each row to zero mean and unit variance.
func ExampleLayerNorm() {
	x := array.FromSlice([]float32{1, 2, 3, 4, 10, 10, 10, 30}, 2, 4)
	fmt.Println(ops.LayerNorm(x, nil, nil, 0))
	// Output:
	// array([[-1.3416407 , -0.4472136 ,  0.4472136 ,  1.3416407 ],
	//        [-0.57735026, -0.57735026, -0.57735026,  1.7320508 ]],
	//       dtype=float32)
}
