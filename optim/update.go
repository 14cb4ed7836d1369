package optim

import (
	"maps"
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
	lay *layout // params: the names of the parameters with a gradient
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
	lay := &layout{params: names, state: sortedKeys(state)}
	if u.f == nil || !u.lay.equal(lay) {
		u.f.Release()
		u.f, u.lay = compile.Compile(u.traced(lay)), lay
	}
	args := make([]*array.Array, 0, 2*len(names)+len(lay.state))
	args = appendNamed(args, trained, names)
	args = appendNamed(args, grads, names)
	args = appendNamed(args, state, lay.state)
	outs := w.Call(u.f, args...)
	if err := array.Eval(outs...); err != nil {
		return nil, err
	}
	if err := u.opt.SetState(named(lay.state, outs[len(names):])); err != nil {
		return nil, err
	}
	newParams := maps.Clone(params)
	maps.Copy(newParams, named(names, outs[:len(names)]))
	return newParams, nil
}

func (u *CompiledUpdate) traced(lay *layout) func(in ...*array.Array) []*array.Array {
	return func(in ...*array.Array) []*array.Array {
		n := len(lay.params)
		newP, newS := u.opt.Apply(named(lay.params, in[:n]), named(lay.params, in[n:2*n]), named(lay.state, in[2*n:]))
		checkNoNewState("optim.CompiledUpdate", lay.state, newS)
		outs := appendNamed(make([]*array.Array, 0, n+len(lay.state)), newP, lay.params)
		return appendNamed(outs, newS, lay.state)
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
