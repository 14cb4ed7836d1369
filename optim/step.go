package optim

import (
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/nn"
)

// LossFunc is a model's loss on a batch: a 0-d float array.
type LossFunc[M any] func(m M, in ...*array.Array) *array.Array

// Step runs one uncompiled training step: the loss of model on the batch
// in and its gradients (nn.ValueAndGrad), the optimiser's update of the
// trainable parameters, and the new parameters written back to model. It
// evaluates the loss, the parameters and the optimiser's state before it
// returns, and returns the loss; an evaluation failure is returned, and
// then neither the model's parameters nor the optimiser has taken the
// step. It computes exactly what CompileStep's steps compute, one
// operation at a time: use it to debug a step.
func Step[M any](model M, opt Optimizer, loss LossFunc[M], in ...*array.Array) (*array.Array, error) {
	const op = "optim.Step"
	checkStepArgs(op, model, opt, loss)
	l, grads := nn.ValueAndGrad(model, loss)(in...)
	trainable := nn.TrainableParameters(model)
	opt.Init(trainable)
	params, state := opt.Apply(trainable, grads, opt.State())
	all := nn.Parameters(model)
	for name, p := range params {
		all[name] = p
	}
	if err := array.Eval(append(evalList(all, state), l)...); err != nil {
		return nil, err
	}
	if err := nn.Update(model, params); err != nil {
		return nil, err
	}
	return l, opt.SetState(state)
}

func checkOptimizer(op string, opt Optimizer) {
	if opt == nil {
		array.Panicf(op, "nil optimiser")
	}
	if v := reflect.ValueOf(opt); v.Kind() == reflect.Pointer && v.IsNil() {
		array.Panicf(op, "nil optimiser")
	}
}

// checkNoNewState panics if an update made state entries beyond names:
// a compiled function's outputs must be the state it was given.
func checkNoNewState(op string, names []string, state map[string]*array.Array) {
	if len(state) == len(names) {
		return
	}
	var extra []string
	for name := range state {
		if !slices.Contains(names, name) {
			extra = append(extra, name)
		}
	}
	slices.Sort(extra)
	array.Panicf(op, "the update made state the optimiser's Init did not: %s", strings.Join(extra, ", "))
}

func checkStepArgs(op string, model any, opt Optimizer, loss any) {
	checkOptimizer(op, opt)
	if reflect.ValueOf(loss).IsNil() {
		array.Panicf(op, "nil loss function")
	}
	v := reflect.ValueOf(model)
	if !v.IsValid() || v.Kind() != reflect.Pointer || v.IsNil() {
		array.Panicf(op, "the model is a %T: pass a non-nil pointer, so that the step can write its parameters back", model)
	}
}

// evalList returns the arrays of maps, each map's in the order of its
// names.
func evalList(maps ...map[string]*array.Array) []*array.Array {
	var out []*array.Array
	for _, m := range maps {
		out = appendNamed(out, m, sortedKeys(m))
	}
	return out
}

// appendNamed appends m's arrays to dst in the order of names: a compiled
// function's inputs or outputs.
func appendNamed(dst []*array.Array, m map[string]*array.Array, names []string) []*array.Array {
	for _, name := range names {
		dst = append(dst, m[name])
	}
	return dst
}

// named maps names[i] to xs[i]: a compiled function's inputs or outputs
// back to their names.
func named(names []string, xs []*array.Array) map[string]*array.Array {
	m := make(map[string]*array.Array, len(names))
	for i, name := range names {
		m[name] = xs[i]
	}
	return m
}

// CompiledStep is a whole training step compiled into one function: the
// forward pass, the backward pass and the optimiser's update of every
// parameter are one trace, replayed on every call. Make one with
// CompileStep.
//
// The compiled function's inputs are the model's parameters, the
// optimiser's state (the step count and the learning rate among it) and
// the batch; its outputs are the loss, the new parameters and the new
// state. Nothing that changes from step to step is a constant of the
// trace, so one trace serves every step of a given batch shape.
// Hyperparameters other than the learning rate (betas, momentum, weight
// decay, the schedule) are constants of the trace: set them before the
// first call.
//
// A CompiledStep is safe for concurrent use: calls on one model run one
// after another. To train several models at once, make a step for each.
type CompiledStep[M any] struct {
	mu    sync.Mutex
	model M
	opt   Optimizer
	loss  LossFunc[M]
	stepOptions
	f   *compile.Func
	lay *layout
	// donated lists the inputs of f that a donating call gives up
	donated []int
}

// StepOption changes how a step made by CompileStep runs.
type StepOption func(*stepOptions)

type stepOptions struct{ donate bool }

// Donate makes each call of the step give it the model's parameters and
// the optimiser's state (compile.Func.CallDonating, as JAX's
// donate_argnums): their buffers go back to the pool as soon as the step
// has read them, and the new parameters and state take that memory. From
// the second step on, a step then takes no fresh memory and waits for no
// collection to give the old arrays back, so it costs what the hundredth
// does. The price: an array taken from the model or the optimiser before
// a call cannot be read after it (its Eval returns an *array.Error), nor
// after a call that failed, and neither can an array that shares their
// memory (a view they were made from). Use it when only the model and the optimiser
// hold them, as in a training loop that reads the parameters through the
// model after each step. Parameters that are not trained are never
// donated.
func Donate() StepOption { return func(o *stepOptions) { o.donate = true } }

// layout is the order of a compiled step's inputs and outputs: the
// model's parameters by name, which of them are trained, and the state's
// names. A model or state whose names change (a parameter frozen, a
// state loaded with other entries) needs another trace, made by a new
// compiled function. A compiled update's layout has the names of the
// parameters it updates and no trainable flags.
type layout struct {
	params    []string
	trainable []bool
	state     []string
}

func (a *layout) equal(b *layout) bool {
	return slices.Equal(a.params, b.params) && slices.Equal(a.trainable, b.trainable) && slices.Equal(a.state, b.state)
}

// CompileStep returns model's training step with optimiser opt and loss
// function loss, compiled. model must be a pointer; the step writes the
// new parameters back to it and the new state to opt.
//
//	step := optim.CompileStep(model, optim.NewAdam(1e-3), lossFn)
//	defer step.Release()
//	for x, y := range batches {
//		loss, err := step.Call(x, y)
//		...
//	}
func CompileStep[M any](model M, opt Optimizer, loss LossFunc[M], opts ...StepOption) *CompiledStep[M] {
	checkStepArgs("optim.CompileStep", model, opt, loss)
	s := &CompiledStep[M]{model: model, opt: opt, loss: loss}
	for _, f := range opts {
		f(&s.stepOptions)
	}
	return s
}

// Call runs one step on the batch in on compile's default worker and
// returns the loss. The loss, the parameters and the state are evaluated
// before it returns; an evaluation failure is returned as the error and
// leaves the model and the optimiser as they were.
func (s *CompiledStep[M]) Call(in ...*array.Array) (*array.Array, error) {
	return s.CallOn(compile.DefaultWorker(), in...)
}

// CallOn is Call on worker w: its trace cache and stream.
func (s *CompiledStep[M]) CallOn(w *compile.Worker, in ...*array.Array) (*array.Array, error) {
	const op = "optim.CompiledStep.Call"
	if s == nil || s.opt == nil {
		array.Panicf(op, "the step was not made by CompileStep")
	}
	if w == nil {
		array.Panicf(op, "nil worker")
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	trainable := nn.TrainableParameters(s.model)
	s.opt.Init(trainable)
	params := nn.Parameters(s.model)
	state := s.opt.State()
	lay := &layout{params: sortedKeys(params), state: sortedKeys(state)}
	for _, name := range lay.params {
		_, ok := trainable[name]
		lay.trainable = append(lay.trainable, ok)
	}
	if s.f == nil || !s.lay.equal(lay) {
		s.f.Release()
		s.f, s.lay, s.donated = compile.Compile(s.traced(lay)), lay, lay.donated()
	}
	args := make([]*array.Array, 0, len(lay.params)+len(lay.state)+len(in))
	args = appendNamed(args, params, lay.params)
	args = appendNamed(args, state, lay.state)
	if s.donate {
		// compile does not donate an input that is not yet evaluated, and
		// a new optimiser's state is lazy zeros
		if err := array.Eval(args...); err != nil {
			return nil, err
		}
	}
	args = append(args, in...)

	outs := func() []*array.Array {
		// a trace writes placeholders into the model; whatever happens,
		// the model gets its own arrays back
		defer func() {
			if err := nn.Update(s.model, params); err != nil {
				panic(err)
			}
		}()
		if s.donate {
			return w.CallDonating(s.f, s.donated, args...)
		}
		return w.Call(s.f, args...)
	}()
	if err := array.Eval(outs...); err != nil {
		return nil, err
	}
	np := len(lay.params)
	if err := nn.Update(s.model, named(lay.params, outs[1:1+np])); err != nil {
		return nil, err
	}
	if err := s.opt.SetState(named(lay.state, outs[1+np:])); err != nil {
		return nil, err
	}
	return outs[0], nil
}

// donated returns the indices of a compiled step's inputs that a
// donating call gives up: the trained parameters and the state.
func (a *layout) donated() []int {
	var idx []int
	for i, trained := range a.trainable {
		if trained {
			idx = append(idx, i)
		}
	}
	for i := range a.state {
		idx = append(idx, len(a.params)+i)
	}
	return idx
}

// traced returns the function CompileStep compiles for layout lay.
func (s *CompiledStep[M]) traced(lay *layout) func(in ...*array.Array) []*array.Array {
	const op = "optim.CompiledStep"
	return func(in ...*array.Array) []*array.Array {
		np, ns := len(lay.params), len(lay.state)
		params := named(lay.params, in[:np])
		trainable := map[string]*array.Array{}
		for i, name := range lay.params {
			if lay.trainable[i] {
				trainable[name] = in[i]
			}
		}
		state := named(lay.state, in[np:np+ns])
		if err := nn.Update(s.model, params); err != nil {
			panic(err)
		}
		loss, grads := nn.ValueAndGrad(s.model, s.loss)(in[np+ns:]...)
		after := nn.Parameters(s.model)
		newParams, newState := s.opt.Apply(trainable, grads, state)
		outs := make([]*array.Array, 0, 1+np+ns)
		outs = append(outs, loss)
		for i, name := range lay.params {
			if lay.trainable[i] {
				outs = append(outs, newParams[name])
			} else {
				outs = append(outs, after[name])
			}
		}
		checkNoNewState(op, lay.state, newState)
		return appendNamed(outs, newState, lay.state)
	}
}

// Release drops the step's compiled traces (compile.Func.Release). A
// later Call compiles the step again.
func (s *CompiledStep[M]) Release() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.f.Release()
	s.f, s.lay = nil, nil
}
