package ops_test

import (
	"fmt"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// wgradCall returns the weight's cotangent of the case's ConvGeneral at
// x for the output's cotangent g (the weight's values do not matter).
func wgradCall(t *testing.T, c refCase, x, g *array.Array) *array.Array {
	t.Helper()
	var ws, stride, lo, hi, kdil, idil []int
	groups, flip := 1, false
	for name, v := range map[string]any{"wshape": &ws, "stride": &stride, "lo": &lo, "hi": &hi, "kdil": &kdil, "idil": &idil, "groups": &groups, "flip": &flip} {
		if !c.Param(t, name, v) {
			t.Fatalf("%s: no param %s", c.Name, name)
		}
	}
	f := func(in ...*array.Array) []*array.Array {
		return []*array.Array{ops.ConvGeneral(in[0], in[1], stride, lo, hi, kdil, idil, groups, flip)}
	}
	_, grads := graph.VJP(f, []*array.Array{x, ops.Zeros(ws, x.DType())}, []*array.Array{g})
	return grads[1]
}

// TestConvWeightGradReference checks the weight's cotangent of
// ConvGeneral (convWGradPrim) against numpy's loop
// (testdata/gen_conv_wgrad.py), with the input and the cotangent in each
// of the reference layouts.
func TestConvWeightGradReference(t *testing.T) {
	for _, c := range loadCases(t, "conv_wgrad.json") {
		t.Run(c.Name, func(t *testing.T) {
			x, g := c.Inputs[0].Build(t), c.Inputs[1].Build(t)
			for _, l := range refLayouts {
				got := wgradCall(t, c, l.of(x), l.of(g))
				if err := got.Eval(); err != nil {
					t.Fatalf("%s: %v", l.name, err)
				}
				if got.DType() != array.Float32 {
					checkArray(t, l.name, got, c.Expected[0])
					continue
				}
				// A float32 sum of k products, k the rows of g, is off by up
				// to about k roundings of its terms' size, here near 1.
				tol := arraytest.DefaultTol(array.Float32)
				tol.Atol = max(tol.Atol, 1e-7*float64(g.Size()/g.Shape()[g.Ndim()-1]))
				arraytest.AssertClose(t, c.Expected[0].Build(t), got, tol, l.name)
			}
		})
	}
}

// TestConvWeightGradVmap checks the batching rule, which folds the batch
// into the channel groups, against a loop over the batch: with x and g
// both batched (on different axes), and with only one of them batched.
func TestConvWeightGradVmap(t *testing.T) {
	ramp := func(n int, shape ...int) *array.Array {
		size := 1
		for _, s := range shape {
			size *= s
		}
		v := make([]float64, size)
		for i := range v {
			v[i] = float64((i*n)%11-5) / 4
		}
		return array.FromSlice(v, shape...)
	}
	wgrad := func(x, g *array.Array) *array.Array {
		f := func(in ...*array.Array) []*array.Array {
			return []*array.Array{ops.ConvGeneral(in[0], in[1], []int{2, 1}, []int{1, 0}, []int{0, 1}, []int{1, 2}, []int{1, 1}, 2, true)}
		}
		_, grads := graph.VJP(f, []*array.Array{x, ops.Zeros([]int{4, 2, 2, 2}, array.Float64)}, []*array.Array{g})
		return grads[1]
	}
	// x [B=3, N=2, 5, 4, C=4] batched on axis 0; g [N=2, 3, 3, B=3, C=4]
	// batched on axis 3.
	xb, gb := ramp(3, 3, 2, 5, 4, 4), ramp(5, 2, 3, 3, 3, 4)
	x1, g1 := ramp(7, 2, 5, 4, 4), ramp(2, 2, 3, 3, 4)
	for _, c := range []struct {
		name   string
		x, g   *array.Array
		inAxes []int
	}{
		{"both batched", xb, gb, []int{0, 3}},
		{"x batched", xb, g1, []int{0, graph.NoAxis}},
		{"g batched", x1, gb, []int{graph.NoAxis, 3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := graph.Vmap(func(in ...*array.Array) []*array.Array {
				return []*array.Array{wgrad(in[0], in[1])}
			}, c.inAxes, nil)(c.x, c.g)[0]
			for b := range 3 {
				xi, gi := c.x, c.g
				if c.inAxes[0] >= 0 {
					xi = ops.Squeeze(ops.SliceAxis(xi, c.inAxes[0], ops.R(b, b+1)), c.inAxes[0])
				}
				if c.inAxes[1] >= 0 {
					gi = ops.Squeeze(ops.SliceAxis(gi, c.inAxes[1], ops.R(b, b+1)), c.inAxes[1])
				}
				want := wgrad(xi, gi)
				arraytest.AssertClose(t, want, ops.Squeeze(ops.SliceAxis(got, 0, ops.R(b, b+1)), 0), arraytest.DefaultTol(array.Float64), fmt.Sprintf("batch element %d", b))
			}
		})
	}
}
