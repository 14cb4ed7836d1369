package optim

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// Optimizer updates parameters from their gradients. Parameters, gradients
// and state are maps from dotted names ("layers.0.weight") to arrays, as
// nn.Parameters returns them.
//
// Every optimiser of this package is a pure rule (Apply) plus the state it
// keeps between updates (Update, State, SetState). The state holds the
// step count and the learning rate as arrays, so a compiled training step
// takes them as inputs and replays one trace for every step.
type Optimizer interface {
	// Init creates the state of every parameter of params that has none:
	// the step count, the learning rate and the per-parameter slots. Update
	// does it by itself; a compiled step needs it before its first call,
	// so that every call has the same inputs.
	Init(params map[string]*array.Array)
	// Update returns the parameters after one step with the gradients
	// grads and keeps the new state. Parameters without a gradient
	// (frozen ones) are returned unchanged and get no state. Nothing is
	// evaluated: the results are lazy.
	Update(params, grads map[string]*array.Array) map[string]*array.Array
	// Apply is Update as a pure function of its arguments: it returns the
	// new parameters and the new state, and changes nothing. State must
	// hold "step" and "learning_rate" (take it from State).
	Apply(params, grads, state map[string]*array.Array) (newParams, newState map[string]*array.Array)
	// State returns the optimiser's state: "step" (int32, the number of
	// updates made), "learning_rate" (the rate of the last update, or of
	// the next one before the first) and one entry per slot and
	// parameter, named slot + "." + parameter ("m.layers.0.weight").
	State() map[string]*array.Array
	// SetState replaces the state, as a checkpoint restores it. It checks
	// the names and kinds of what it is given.
	SetState(state map[string]*array.Array) error
	// LearningRate returns the current learning rate (evaluating it).
	LearningRate() float64
	// SetLearningRate sets the learning rate of the updates to come. It
	// changes an array of the state, not a constant of a compiled step,
	// so a compiled step picks it up without tracing again. With a
	// Schedule, the schedule overrides it at the next update.
	SetLearningRate(lr float64)
}

// Schedule gives the learning rate of an update from the number of
// updates made before it (0 for the first), as MLX's schedulers do. The
// step is a 0-d float array (float32, or float64 when the parameters are
// float64) holding an integer; the result must be a 0-d float array.
// Schedules are array functions, not Go functions of an int, so that a
// compiled step computes the rate of each step rather than baking in the
// rate of the step it was traced on.
type Schedule func(step *array.Array) *array.Array

// rule is what distinguishes one optimiser from another: the state slots
// it keeps per parameter and the update of one parameter. Slots start at
// zero unless the rule is a slotStarter too.
type rule interface {
	// slots names the per-parameter state, in the order update takes it.
	slots() []string
	// update returns the new parameter and slots. g is already checked
	// against p; s holds the slots in the order of slots().
	update(c *stepCtx, p, g *array.Array, s []*array.Array) (*array.Array, []*array.Array)
}

// slotStarter is a rule whose slots start from other values than zero.
type slotStarter interface {
	initial(slot string, p *array.Array) *array.Array
}

// Base holds what every optimiser of the package shares: the state, the
// learning rate and its schedule. Each optimiser embeds it; make them with
// their New functions, not as struct literals.
type Base struct {
	// Schedule, when not nil, sets the learning rate of every update
	// from the step count, replacing the rate given to the constructor
	// (and SetLearningRate).
	Schedule Schedule

	op    string
	rule  rule
	lr    float64
	state map[string]*array.Array
}

func newBase(op string, r rule, lr float64) Base {
	return Base{op: op, rule: r, lr: lr}
}

// The names of the two scalar entries of every optimiser's state.
const (
	stepKey = "step"
	lrKey   = "learning_rate"
)

// startSlot returns the value a slot of parameter p starts from.
func (b *Base) startSlot(slot string, p *array.Array) *array.Array {
	if s, ok := b.rule.(slotStarter); ok {
		return s.initial(slot, p)
	}
	return ops.ZerosLike(p)
}

func (b *Base) checkMade(op string) {
	if b == nil || b.rule == nil {
		array.Panicf(op, "the optimiser was not made by its New function")
	}
}

// scalarDType is the dtype of the learning rate and of the float step
// count: float64 when some parameter is, float32 otherwise, so that a
// float64 model gets its learning rate to full precision and the GPU,
// which has no float64, never sees one unless the model has.
func scalarDType(params map[string]*array.Array) array.DType {
	for _, p := range params {
		if p != nil && p.DType() == array.Float64 {
			return array.Float64
		}
	}
	return array.Float32
}

// fresh returns the scalar state of an optimiser that has made no update.
func (b *Base) fresh(dt array.DType) map[string]*array.Array {
	step := array.Scalar[int32](0)
	lr := ops.Full(nil, b.lr, dt)
	if b.Schedule != nil {
		lr = b.scheduled(step, dt)
	}
	return map[string]*array.Array{stepKey: step, lrKey: lr}
}

// scheduled returns the schedule's rate for step (int32) in dtype dt.
func (b *Base) scheduled(step *array.Array, dt array.DType) *array.Array {
	lr := b.Schedule(ops.AsType(step, dt))
	if lr == nil || lr.Ndim() != 0 || !lr.DType().IsFloat() {
		array.Panicf(b.op, "the Schedule returned %s, want a 0-d float array", describe(lr))
	}
	return ops.AsType(lr, dt)
}

// Init creates the state of every parameter of params that has none.
func (b *Base) Init(params map[string]*array.Array) {
	b.checkMade(b.op + ".Init")
	for _, name := range sortedKeys(params) {
		p := params[name]
		if p == nil {
			array.Panicf(b.op+".Init", "parameter %q is nil", name)
		}
		if !p.DType().IsFloat() {
			array.Panicf(b.op+".Init", "parameter %q is %s, want a float dtype", name, p.DType())
		}
	}
	if b.state == nil {
		b.state = b.fresh(scalarDType(params))
	}
	for _, name := range sortedKeys(params) {
		for _, slot := range b.rule.slots() {
			key := slot + "." + name
			if _, ok := b.state[key]; !ok {
				b.state[key] = b.startSlot(slot, params[name])
			}
		}
	}
}

// Update returns the parameters after one step and keeps the new state.
func (b *Base) Update(params, grads map[string]*array.Array) map[string]*array.Array {
	b.checkMade(b.op + ".Update")
	if b.state == nil {
		b.state = b.fresh(scalarDType(params))
	}
	newParams, newState := b.Apply(params, grads, b.state)
	b.state = newState
	return newParams
}

// Apply returns the new parameters and state, changing nothing.
func (b *Base) Apply(params, grads, state map[string]*array.Array) (map[string]*array.Array, map[string]*array.Array) {
	b.checkMade(b.op + ".Apply")
	op := b.op
	step, lr := state[stepKey], state[lrKey]
	if step == nil || lr == nil {
		array.Panicf(op, "the state has no %q or no %q: start from the optimiser's State", stepKey, lrKey)
	}
	checkScalars(op, step, lr)
	newState := maps.Clone(state)
	if b.Schedule != nil {
		lr = b.scheduled(step, lr.DType())
		newState[lrKey] = lr
	}
	next := ops.AddScalar(step, 1)
	newState[stepKey] = next
	c := &stepCtx{lr: lr, t: ops.AsType(next, lr.DType()), scalars: map[scalarKey]*array.Array{}}

	newParams := maps.Clone(params)
	slots := b.rule.slots()
	for _, name := range sortedKeys(grads) {
		g := grads[name]
		p, ok := params[name]
		if !ok {
			array.Panicf(op, "gradient %q has no parameter (parameters: %s)", name, nameList(params))
		}
		if g == nil || p == nil {
			array.Panicf(op, "%q: nil parameter or gradient", name)
		}
		if !p.DType().IsFloat() {
			array.Panicf(op, "parameter %q is %s, want a float dtype", name, p.DType())
		}
		if g.DType() != p.DType() || !slices.Equal(g.Shape(), p.Shape()) {
			array.Panicf(op, "gradient %q is %s, its parameter %s", name, describe(g), describe(p))
		}
		s := make([]*array.Array, len(slots))
		c.fresh = false
		for i, slot := range slots {
			key := slot + "." + name
			v, ok := state[key]
			if !ok {
				v = b.startSlot(slot, p)
				c.fresh = true
			} else if v == nil || v.DType() != p.DType() || !slices.Equal(v.Shape(), p.Shape()) {
				array.Panicf(op, "state %q is %s, its parameter %s", key, describe(v), describe(p))
			}
			s[i] = v
		}
		np, ns := b.rule.update(c, p, g, s)
		newParams[name] = np
		for i, slot := range slots {
			newState[slot+"."+name] = ns[i]
		}
	}
	return newParams, newState
}

// State returns the optimiser's state.
func (b *Base) State() map[string]*array.Array {
	b.checkMade(b.op + ".State")
	if b.state == nil {
		return b.fresh(array.Float32)
	}
	return maps.Clone(b.state)
}

// SetState replaces the state. It must hold "step" (a 0-d integer array)
// and "learning_rate" (a 0-d float array); every other name must be one
// of the optimiser's slots followed by a dot and a parameter name.
func (b *Base) SetState(state map[string]*array.Array) error {
	b.checkMade(b.op + ".SetState")
	op := b.op + ".SetState"
	step, lr := state[stepKey], state[lrKey]
	if step == nil || lr == nil {
		return array.Errorf(op, "the state has no %q or no %q", stepKey, lrKey)
	}
	if err := array.Try(func() { checkScalars(op, step, lr) }); err != nil {
		return err
	}
	slots := b.rule.slots()
	for _, name := range sortedKeys(state) {
		if name == stepKey || name == lrKey {
			continue
		}
		slot, param, ok := strings.Cut(name, ".")
		if !ok || param == "" || !slices.Contains(slots, slot) {
			return array.Errorf(op, "%q is not a state entry of %s (its slots: %s)", name, b.op, strings.Join(slots, ", "))
		}
		if v := state[name]; v == nil || !v.DType().IsFloat() {
			return array.Errorf(op, "%q is nil or not a float array", name)
		}
	}
	b.state = maps.Clone(state)
	if step.DType() != array.Int32 {
		b.state[stepKey] = ops.AsType(step, array.Int32)
	}
	return nil
}

// LearningRate returns the current learning rate.
func (b *Base) LearningRate() float64 {
	b.checkMade(b.op + ".LearningRate")
	return b.State()[lrKey].Item()
}

// SetLearningRate sets the learning rate of the updates to come.
func (b *Base) SetLearningRate(lr float64) {
	b.checkMade(b.op + ".SetLearningRate")
	b.lr = lr
	if b.state != nil {
		b.state[lrKey] = ops.Full(nil, lr, b.state[lrKey].DType())
	}
}

func checkScalars(op string, step, lr *array.Array) {
	if step.Ndim() != 0 || !step.DType().IsInteger() {
		array.Panicf(op, "%q is %s, want a 0-d integer array", stepKey, describe(step))
	}
	if lr.Ndim() != 0 || !lr.DType().IsFloat() {
		array.Panicf(op, "%q is %s, want a 0-d float array", lrKey, describe(lr))
	}
}

// stepCtx carries what one update shares across parameters: the learning
// rate and the step count (1 on the first update) in the scalar dtype,
// and the scalars made from them, each made once per update.
type stepCtx struct {
	lr, t   *array.Array
	scalars map[scalarKey]*array.Array
	// fresh is set while a parameter whose slots were just created is
	// updated: its first update, whatever the step count.
	fresh bool
}

// scalarKey names a scalar of an update: the formula, its
// hyperparameter and its dtype.
type scalarKey struct {
	formula string
	x       float64
	dt      array.DType
}

// scalar returns the scalar that f makes for formula of x in dtype dt,
// made on its first use in an update and shared by every parameter after
// it, so that an uncompiled update does not compute it per parameter.
func (c *stepCtx) scalar(formula string, x float64, dt array.DType, f func() *array.Array) *array.Array {
	k := scalarKey{formula, x, dt}
	s, ok := c.scalars[k]
	if !ok {
		s = f()
		c.scalars[k] = s
	}
	return s
}

// lrAs returns the learning rate in dtype dt.
func (c *stepCtx) lrAs(dt array.DType) *array.Array {
	return c.scalar("lr", 0, dt, func() *array.Array { return ops.AsType(c.lr, dt) })
}

// pow returns base**t in the scalar dtype: the bias corrections are
// computed there, not in a float16 parameter's dtype.
func (c *stepCtx) pow(base float64) *array.Array {
	return ops.Pow(ops.Full(nil, base, c.t.DType()), c.t)
}

// biasCorrectedLR returns lr/(1-beta**t) in dtype dt: Adam's and
// Adamax's step size.
func (c *stepCtx) biasCorrectedLR(beta float64, dt array.DType) *array.Array {
	return c.scalar("lr/(1-beta**t)", beta, dt, func() *array.Array {
		return ops.AsType(ops.Div(c.lr, oneMinus(c.pow(beta))), dt)
	})
}

// decayFactor returns 1 - lr*wd in dtype dt: the factor of decoupled
// weight decay (AdamW, Lion).
func (c *stepCtx) decayFactor(wd float64, dt array.DType) *array.Array {
	return c.scalar("1-lr*wd", wd, dt, func() *array.Array {
		return ops.AsType(oneMinus(ops.MulScalar(c.lr, wd)), dt)
	})
}

// firstStep returns a 0-d bool array that is true on the first update.
func (c *stepCtx) firstStep() *array.Array {
	return c.scalar("t==1", 0, array.Bool, func() *array.Array { return ops.EqualScalar(c.t, 1) })
}

// oneMinus returns 1 - x.
func oneMinus(x *array.Array) *array.Array { return ops.AddScalar(ops.Neg(x), 1) }

func sortedKeys(m map[string]*array.Array) []string {
	return slices.Sorted(maps.Keys(m))
}

func nameList(m map[string]*array.Array) string {
	keys := sortedKeys(m)
	const most = 8
	q := make([]string, 0, min(len(keys), most))
	for _, k := range keys[:min(len(keys), most)] {
		q = append(q, `"`+k+`"`)
	}
	s := strings.Join(q, ", ")
	if len(keys) > most {
		s += ", ..."
	}
	if s == "" {
		s = "none"
	}
	return s
}

// describe gives a's dtype and shape for a message ("float32 [2 3]"), or
// "nil".
func describe(a *array.Array) string {
	if a == nil {
		return "nil"
	}
	return fmt.Sprintf("%s %v", a.DType(), a.Shape())
}
