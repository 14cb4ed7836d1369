package main

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/ops"
)

// smallTasks are issue 22's small-op rows, where the time is what each
// engine adds around an operation rather than arithmetic: a chain of 100
// AddScalar on 16 float32 built and evaluated (numpy and PyTorch: y = y +
// 1, 100 times), and a compiled call of five Tanh(Mul) pairs on 16
// elements (numpy and PyTorch run the same ten ops eagerly).
// workloads.py's build_small builds the same. A row's time divided by the
// op count is the cost of one op.
func smallTasks() []task {
	return []task{
		{name: "small-ops/100x16", setup: func() func() {
			x := randF32(1, 16)
			eval(x)
			return func() {
				y := x
				for range 100 {
					y = ops.AddScalar(y, 1)
				}
				eval(y)
			}
		}},
		{name: "compiled-small/10x16", setup: func() func() {
			f := compile.Compile(func(in ...*array.Array) []*array.Array {
				y := in[0]
				for range 5 {
					y = ops.Tanh(ops.Mul(y, in[1]))
				}
				return []*array.Array{y}
			})
			x, w := randF32(1, 16), randF32(2, 16)
			eval(x)
			eval(w)
			return func() { eval(f.Call(x, w)[0]) }
		}},
	}
}
