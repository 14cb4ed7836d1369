// Command linreg fits a linear regression by gradient descent with
// fathom's autodiff: synthetic data y = X w + b + noise with w = [2, -3.4]
// and b = 4.2 (the example of Dive into Deep Learning), a mean squared
// error loss, and graph.ValueAndGrad for its gradient. It prints the loss
// as it falls and the coefficients it recovers.
package main

import (
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

const (
	examples = 1000
	steps    = 50
	every    = 5
	rate     = 0.1
)

var (
	trueW = []float32{2, -3.4}
	trueB = float32(4.2)
)

// synthetic returns the features (examples x 2, standard normal) and the
// targets X trueW + trueB plus normal noise of standard deviation 0.01.
func synthetic(r *rand.Rand) (x, y *array.Array) {
	xs := make([]float32, examples*len(trueW))
	ys := make([]float32, examples)
	for i := range ys {
		t := trueB + float32(0.01*r.NormFloat64())
		for j, w := range trueW {
			v := float32(r.NormFloat64())
			xs[i*len(trueW)+j] = v
			t += w * v
		}
		ys[i] = t
	}
	return array.FromSlice(xs, examples, len(trueW)), array.FromSlice(ys, examples)
}

// loss is the mean squared error of the model w, b on the data x, y.
func loss(in ...*array.Array) *array.Array {
	w, b, x, y := in[0], in[1], in[2], in[3]
	pred := ops.Add(ops.MatMul(x, w), b)
	return ops.Mean(ops.Square(ops.Sub(pred, y)))
}

// fit runs gradient descent from w = 0, b = 0 and calls report with the
// loss of the first step and of every every-th step.
func fit(x, y *array.Array, report func(step int, loss float64)) (w []float32, b float32, err error) {
	wa := ops.Zeros([]int{len(trueW)}, array.Float32)
	ba := ops.Zeros([]int{}, array.Float32)
	step := graph.ValueAndGrad(loss, 0, 1) // gradients with respect to w and b
	for i := 1; i <= steps; i++ {
		l, g := step(wa, ba, x, y)
		wa = ops.Sub(wa, ops.MulScalar(g[0], rate))
		ba = ops.Sub(ba, ops.MulScalar(g[1], rate))
		// evaluate every step, so each step's graph is computed and freed
		if err := array.Eval(l, wa, ba); err != nil {
			return nil, 0, err
		}
		if i == 1 || i%every == 0 {
			report(i, l.Item())
		}
	}
	w, err = array.ToSlice[float32](wa)
	if err != nil {
		return nil, 0, err
	}
	return w, float32(ba.Item()), nil
}

func run() error {
	x, y := synthetic(rand.New(rand.NewPCG(42, 1)))
	w, b, err := fit(x, y, func(step int, loss float64) {
		fmt.Printf("step %3d  loss %.6f\n", step, loss)
	})
	if err != nil {
		return err
	}
	fmt.Printf("w = [%.4f %.4f]  (true [%g %g])\n", w[0], w[1], trueW[0], trueW[1])
	fmt.Printf("b = %.4f  (true %g)\n", b, trueB)
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "linreg:", err)
		os.Exit(1)
	}
}
