package linalg_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/linalg"
	"github.com/fathom-go/fathom/ops"
)

// A gonum matrix goes in, fathom computes, and the result comes back as
// a *mat.Dense.
func ExampleFromDense() {
	m := mat.NewDense(2, 2, []float64{4, 1, 2, 3})
	a := linalg.FromDense(m)
	d, err := linalg.ToDense(ops.MatMul(a, a))
	if err != nil {
		panic(err)
	}
	fmt.Printf("%v\n", mat.Formatted(d))
	// Output:
	// ⎡18   7⎤
	// ⎣14  11⎦
}

// ToVecDense converts float32 arrays to float64 as it copies.
func ExampleToVecDense() {
	v, err := linalg.ToVecDense(array.FromSlice([]float32{0.5, 1.5, 2.5}))
	if err != nil {
		panic(err)
	}
	fmt.Println(v.Len(), v.AtVec(2))
	// Output: 3 2.5
}
