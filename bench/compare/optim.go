package main

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/optim"
)

// optimTasks are issue 23's optimiser row: one Adam update (PyTorch's
// rule, bias correction included) of the MNIST MLP's 669,706 float32
// parameters, compiled (optim.CompileUpdate), against PyTorch's
// torch.optim.Adam.step and the same rule in numpy with in-place
// operations; workloads.py's build_optim builds the same shapes. An
// update reads the parameter, the gradient and both moments and writes
// the parameter and the moments: 7·4 bytes per parameter.
func optimTasks() []task {
	shapes := [][]int{{512, 784}, {512}, {512, 512}, {512}, {10, 512}, {10}}
	n := 0
	for _, s := range shapes {
		size := 1
		for _, d := range s {
			size *= d
		}
		n += size
	}
	return []task{
		{name: "adam-update/670K", bytes: float64(7 * 4 * n), setup: func() func() {
			params, grads := map[string]*array.Array{}, map[string]*array.Array{}
			for i, s := range shapes {
				name := string(rune('a' + i))
				params[name], grads[name] = randF32(uint64(2*i+1), s...), randF32(uint64(2*i+2), s...)
				eval(params[name])
				eval(grads[name])
			}
			upd := optim.CompileUpdate(optim.NewAdam(1e-3))
			return func() {
				var err error
				if params, err = upd.Call(params, grads); err != nil {
					panic(err)
				}
			}
		}},
	}
}
