// Command basics is fathom's first demo: it builds arrays, broadcasts,
// reduces and multiplies them, and shows a bad-input error.
package main

import (
	"fmt"
	"os"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

func main() {
	if err := array.DeviceError(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("device:", array.DefaultDevice())

	a := ops.Reshape(ops.Arange(0, 6, 1, array.Float32), 2, 3)
	fmt.Printf("a =\n%v\n\n", a)

	b := array.FromSlice([]float32{10, 20, 30})
	fmt.Printf("a + b (b broadcast over the rows of a) =\n%v\n\n", ops.Add(a, b))

	fmt.Printf("column sums of a = %v\n", ops.Sum(a, 0))
	fmt.Printf("mean of a = %v\n\n", ops.Mean(a).Item())

	fmt.Printf("a @ a.T =\n%v\n\n", ops.MatMul(a, ops.Transpose(a)))

	fmt.Printf("softmax over the rows of a =\n%v\n\n", ops.Softmax(a, -1))

	err := array.Try(func() { ops.Add(a, array.FromSlice([]float32{1, 2})) })
	fmt.Println("a bad call is an error, not a crash:", err)
}
