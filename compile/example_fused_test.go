package compile_test

import (
	"fmt"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/ops"
)

// A softmax written by hand compiles to one row-wise step: a pass for
// the maximum of each row, one for the exponentials and their sum, one
// for the quotients.
func ExampleFused() {
	softmax := func(in ...*array.Array) []*array.Array {
		x := in[0]
		e := ops.Exp(ops.Sub(x, ops.KeepDims(ops.Max, x, -1)))
		return []*array.Array{ops.Div(e, ops.KeepDims(ops.Sum, e, -1))}
	}
	x := array.FromSlice(make([]float32, 64*512), 64, 512)
	for _, step := range compile.Fused(softmax, x) {
		fmt.Println(step)
	}
	// Output:
	// Compiled: row-wise over the last axis, 3 passes; 1 input, 1 output, 5 instructions
	// rows 1
	// r0 = in0 float32
	// r1 = Max(r0) float32 row
	// r2 = Sub(r0, r1) float32
	// r3 = Exp(r2) float32
	// r4 = Sum(r3) float32 row
	// r5 = Div(r3, r4) float32
	// out r5
}
