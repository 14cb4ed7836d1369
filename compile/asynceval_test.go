package compile_test

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/ops"
)

// TestAsyncEvalOfCompiledSteps runs a compiled update step in a loop,
// each step built on the previous one's pending output and started with
// AsyncEval, as a training loop would; then many goroutines read every
// step's result while the background evaluation may still be running.
// Each must match the step computed on the host in float32.
func TestAsyncEvalOfCompiledSteps(t *testing.T) {
	const n, steps = 16, 24
	// w <- w - 0.125*(w*x - y)*x: gradient descent on a least-squares toy
	step := compile.Compile(func(in ...*array.Array) []*array.Array {
		w, x, y := in[0], in[1], in[2]
		return []*array.Array{ops.Sub(w, ops.MulScalar(ops.Mul(ops.Sub(ops.Mul(w, x), y), x), 0.125))}
	})
	defer step.Release()
	xs, ys, ws := make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range n {
		xs[i] = 0.5 + float32(i)/n
		ys[i] = float32(i%5) - 2
	}
	x, y := array.FromSlice(xs, n), array.FromSlice(ys, n)
	w := array.FromSlice(ws, n)
	var outs []*array.Array
	var want [][]float32
	for range steps {
		w = step.Call(w, x, y)[0]
		array.AsyncEval(w)
		outs = append(outs, w)
		next := make([]float32, n)
		for i := range n {
			next[i] = ws[i] - ((ws[i]*xs[i]-ys[i])*xs[i])*0.125
		}
		ws = next
		want = append(want, next)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8*steps)
	for r := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range steps {
				i := (k*5 + r*3) % steps
				got, err := array.ToSlice[float32](outs[i])
				if err != nil {
					errs <- err
					return
				}
				for j := range n {
					if d := math.Abs(float64(got[j] - want[i][j])); d > 1e-5*(1+math.Abs(float64(want[i][j]))) {
						errs <- fmt.Errorf("step %d, element %d: %v, want %v", i, j, got[j], want[i][j])
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
