package graph_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// catch runs f and returns what it panicked with as an error. Unlike
// array.Try it recovers every panic, so that a nil dereference fails its
// case instead of ending the test binary.
func catch(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = e
			} else {
				err = fmt.Errorf("%v", r)
			}
		}
	}()
	f()
	return nil
}

// TestNilFunctionsAreErrors passes a nil function (or a nil array in a
// slice the transform walks) to each transform: each must panic with an
// *array.Error naming the transform, never a nil dereference.
func TestNilFunctionsAreErrors(t *testing.T) {
	x := vec(1, 2, 3)
	xs := []*array.Array{x}
	id := func(in ...*array.Array) []*array.Array { return []*array.Array{ops.MulScalar(in[0], 1)} }
	rule := func(_, _, cots []*array.Array) []*array.Array { return cots }
	cases := []struct {
		name, op string
		f        func()
	}{
		{"Grad", "graph.Grad", func() { graph.Grad(nil)(x) }},
		{"ValueAndGrad", "graph.ValueAndGrad", func() { graph.ValueAndGrad(nil)(x) }},
		{"VJP", "graph.VJP", func() { graph.VJP(nil, xs, xs) }},
		{"JVP", "graph.JVP", func() { graph.JVP(nil, xs, xs) }},
		{"Vmap", "graph.Vmap", func() { graph.Vmap(nil, nil, nil)(x) }},
		{"CustomVJP function", "graph.CustomVJP", func() { graph.CustomVJP(nil, rule)(x) }},
		{"CustomVJP rule", "graph.CustomVJP", func() { graph.VJP(graph.CustomVJP(id, nil), xs, xs) }},
		{"Checkpoint", "graph.Checkpoint", func() { graph.Checkpoint(nil)(x) }},
		{"NewTape input", "graph.NewTape", func() { graph.NewTape([]*array.Array{nil}, xs) }},
		{"NewTape output", "graph.NewTape", func() { graph.NewTape(nil, []*array.Array{x, nil}) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := catch(c.f)
			var e *array.Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want an *array.Error from %s", err, c.op)
			}
			if e.Op != c.op {
				t.Fatalf("error %q is from %s, want %s", e, e.Op, c.op)
			}
		})
	}
}
