package optim

import (
	"slices"
	"sync"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
)

// CompiledUpdate is an optimiser's update of every parameter compiled
// into one function of the parameters, the gradients and the state, for
// training loops that compute gradients themselves (CompileStep compiles
// the gradients too). Make one with CompileUpdate.
type CompiledUpdate struct {
	mu  sync.Mutex
	opt Optimizer
	f   *compile.Func
	lay *updateLayout
}

// updateLayout is the order of a compiled update's inputs: the names of
// the parameters updated (those with a gradient) and of the state.
type updateLayout struct {
	names, state []string
}

// CompileUpdate returns opt's update compiled: Call(params, grads) is
// opt.Update(params, grads) as one replayed trace, in which the
// elementwise work of each parameter's update is one fused pass. As for
// CompiledStep, the step count and the learning rate are inputs, and the
// other hyperparameters are constants of the trace.
func CompileUpdate(opt Optimizer) *CompiledUpdate {
	checkOptimizer("optim.CompileUpdate", opt)
	return &CompiledUpdate{opt: opt}
}

// Call updates params with grads on compile's default worker, keeps the
// new state in the optimiser, and returns the new parameters, evaluated.
// Parameters without a gradient are returned as they are. An evaluation
// failure is returned, and then the optimiser is unchanged.
func (u *CompiledUpdate) Call(params, grads map[string]*array.Array) (map[string]*array.Array, error) {
	return u.CallOn(compile.DefaultWorker(), params, grads)
}

// CallOn is Call on worker w.
func (u *CompiledUpdate) CallOn(w *compile.Worker, params, grads map[string]*array.Array) (map[string]*array.Array, error) {
	const op = "optim.CompiledUpdate.Call"
	if u == nil || u.opt == nil {
		array.Panicf(op, "the update was not made by CompileUpdate")
	}
	if w == nil {
		array.Panicf(op, "nil worker")
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	names := sortedKeys(grads)
	trained := make(map[string]*array.Array, len(names))
	for _, name := range names {
		p, ok := params[name]
		if !ok || p == nil || grads[name] == nil {
			array.Panicf(op, "gradient %q: no parameter, or a nil array (parameters: %s)", name, nameList(params))
		}
		trained[name] = p
	}
	u.opt.Init(trained)
	state := u.opt.State()
	lay := &updateLayout{names: names, state: sortedKeys(state)}
	if u.f == nil || !slices.Equal(u.lay.names, lay.names) || !slices.Equal(u.lay.state, lay.state) {
		u.f.Release()
		u.f, u.lay = compile.Compile(u.traced(lay)), lay
	}
	args := make([]*array.Array, 0, 2*len(names)+len(lay.state))
	for _, name := range names {
		args = append(args, trained[name])
	}
	for _, name := range names {
		args = append(args, grads[name])
	}
	for _, name := range lay.state {
		args = append(args, state[name])
	}
	outs := w.Call(u.f, args...)
	if err := array.Eval(outs...); err != nil {
		return nil, err
	}
	newParams := make(map[string]*array.Array, len(params))
	for name, p := range params {
		newParams[name] = p
	}
	for i, name := range names {
		newParams[name] = outs[i]
	}
	newState := make(map[string]*array.Array, len(lay.state))
	for i, name := range lay.state {
		newState[name] = outs[len(names)+i]
	}
	if err := u.opt.SetState(newState); err != nil {
		return nil, err
	}
	return newParams, nil
}

func (u *CompiledUpdate) traced(lay *updateLayout) func(in ...*array.Array) []*array.Array {
	return func(in ...*array.Array) []*array.Array {
		n := len(lay.names)
		p, g := make(map[string]*array.Array, n), make(map[string]*array.Array, n)
		for i, name := range lay.names {
			p[name], g[name] = in[i], in[n+i]
		}
		s := make(map[string]*array.Array, len(lay.state))
		for i, name := range lay.state {
			s[name] = in[2*n+i]
		}
		newP, newS := u.opt.Apply(p, g, s)
		checkNoNewState("optim.CompiledUpdate", lay.state, newS)
		outs := make([]*array.Array, 0, n+len(lay.state))
		for _, name := range lay.names {
			outs = append(outs, newP[name])
		}
		for _, name := range lay.state {
			outs = append(outs, newS[name])
		}
		return outs
	}
}

// Release drops the update's compiled traces. A later Call compiles it
// again.
func (u *CompiledUpdate) Release() {
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.f.Release()
	u.f, u.lay = nil, nil
}
