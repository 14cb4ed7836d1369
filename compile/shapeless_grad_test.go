package compile_test

import (
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// TestShapelessVJP replays a VJP traced once at new shapes: the
// transforms' identity stand-ins have a shape rule (without one the
// shapeless trace refused to replay any derivative). A Grad through a
// reduction still cannot be shapeless: its backward broadcasts with
// Reshape, whose result shape is a constant of the trace.
func TestShapelessVJP(t *testing.T) {
	traces := 0
	square := func(in ...*array.Array) []*array.Array { return []*array.Array{ops.Square(in[0])} }
	f := compile.Compile(func(in ...*array.Array) []*array.Array {
		traces++
		_, vjps := graph.VJP(square, in[:1], in[1:])
		return vjps
	}, compile.Shapeless())
	defer f.Release()
	for _, n := range []int{3, 5, 2} {
		x := ops.Arange(0, float64(n), 1, array.Float64)
		got, err := array.ToSlice[float64](f.Call(x, ops.OnesLike(x))[0])
		if err != nil {
			t.Fatalf("n = %d: %v", n, err)
		}
		if len(got) != n {
			t.Fatalf("n = %d: %d gradient values", n, len(got))
		}
		for i, g := range got {
			if g != 2*float64(i) {
				t.Errorf("n = %d: d/dx[%d] = %v, want %v", n, i, g, 2*float64(i))
			}
		}
	}
	if traces != 1 {
		t.Errorf("traced %d times, want 1", traces)
	}
}
