package nn

import (
	"reflect"
	"slices"
	"strings"
	"sync"
	"weak"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
	"github.com/fathom-go/fathom/tree"
)

// Layer is what Sequential chains: a function of one array.
type Layer interface {
	Forward(x *array.Array) *array.Array
}

// Moder is a layer that behaves differently in training and in evaluation
// (Dropout, BatchNorm). Train calls SetTraining on every Moder of a model.
type Moder interface {
	SetTraining(on bool)
}

// Parameters returns every array of model m by dotted name (see package
// tree for the names and struct tags): trainable parameters, frozen ones
// and state (BatchNorm's running statistics, Dropout's key) alike, as
// MLX's Module.parameters and PyTorch's state_dict. It is what Save
// writes and Update accepts. A bad tree panics with *array.Error.
func Parameters(m any) map[string]*array.Array {
	return byName(leaves("nn.Parameters", m))
}

// TrainableParameters returns the arrays of m that ValueAndGrad
// differentiates: Parameters without the frozen ones and the state
// (MLX's trainable_parameters). Only floating-point arrays are trainable.
func TrainableParameters(m any) map[string]*array.Array {
	return byName(trainable("nn.TrainableParameters", m))
}

func byName(ls []tree.Leaf) map[string]*array.Array {
	out := make(map[string]*array.Array, len(ls))
	for _, l := range ls {
		out[l.Path] = l.Array
	}
	return out
}

func leaves(op string, m any) []tree.Leaf {
	var ls []tree.Leaf
	if err := array.Try(func() { ls = tree.Leaves(m) }); err != nil {
		e := err.(*array.Error)
		array.Panicf(op, "%s", e.Msg)
	}
	return ls
}

func trainable(op string, m any) []tree.Leaf {
	ls := leaves(op, m)
	out := ls[:0:0]
	frozen.Lock()
	defer frozen.Unlock()
	for _, l := range ls {
		if l.State || !l.Array.DType().IsInexact() || (l.Ptr != nil && frozen.set[weak.Make(l.Ptr)]) {
			continue
		}
		out = append(out, l)
	}
	return out
}

// Update stores the arrays of params in model m by name (a subset of
// Parameters(m) is fine: an optimiser's new trainable parameters, say).
// m must be a pointer (or a map or slice). A name that m does not have,
// a nil array, an array whose shape or dtype differs from the one it
// replaces, and a bad tree are errors, and then m is unchanged.
func Update(m any, params map[string]*array.Array) error {
	return rename(tree.UpdateChecked(m, params, sameKind), "nn.Update")
}

// sameKind refuses an array whose shape or dtype differs from the leaf's.
func sameKind(l tree.Leaf, n *array.Array) error {
	if !slices.Equal(l.Array.Shape(), n.Shape()) || l.Array.DType() != n.DType() {
		return array.Errorf("nn.Update", "%q is %v %v, the new array %v %v",
			l.Path, l.Array.DType(), l.Array.Shape(), n.DType(), n.Shape())
	}
	return nil
}

// ValueAndGrad returns a function that evaluates loss(m, in...) and its
// gradient with respect to the trainable parameters of m
// (TrainableParameters), as MLX's nn.value_and_grad: the loss, a 0-d
// array, and the gradients keyed by the parameters' names. The model's
// parameters are read at each call, so an Update between calls is seen.
//
// While loss runs, m's trainable leaves are tracers of the
// differentiation; they are put back when the call returns. Leaves the
// loss itself replaces that are not trainable (a BatchNorm's running
// statistics in training mode, a Dropout's key) keep their new values:
// a compiled training step returns Parameters(m) read after the call
// among its outputs. m is changed during the call, so one model must not
// be used by two calls at once. A model passed by value (a struct, not a
// pointer) is copied for each call and nothing written to it survives.
//
// Like graph's transforms, called outside any transform or compiled
// function it leaves none of its results (nor the moved state) marked as
// tracers, so a compiled step given them replays its trace.
func ValueAndGrad[M any](m M, loss func(m M, in ...*array.Array) *array.Array) func(in ...*array.Array) (*array.Array, map[string]*array.Array) {
	const op = "nn.ValueAndGrad"
	if loss == nil {
		array.Panicf(op, "nil loss function")
	}
	return func(in ...*array.Array) (*array.Array, map[string]*array.Array) {
		mm := m
		target := any(&mm)
		if k := reflect.ValueOf(m).Kind(); k == reflect.Pointer || k == reflect.Map || k == reflect.Slice {
			target = m
		}
		ls := trainable(op, target)
		names := make([]string, len(ls))
		prims := make([]*array.Array, 0, len(ls)+len(in))
		orig := make(map[string]*array.Array, len(ls))
		for i, l := range ls {
			names[i] = l.Path
			prims = append(prims, l.Array)
			orig[l.Path] = l.Array
		}
		prims = append(prims, in...)
		argnums := make([]int, len(ls))
		for i := range argnums {
			argnums[i] = i
		}
		defer func() {
			// the loss may have replaced a trainable leaf too: put back
			// only what is still a name of the tree
			if err := tree.Update(target, orig); err != nil {
				panic(err)
			}
		}()
		if len(names) == 0 {
			v := loss(mm, in...)
			if v == nil || v.Ndim() != 0 {
				array.Panicf(op, "the loss must return a scalar (0-d array)")
			}
			return v, map[string]*array.Array{}
		}
		// the state leaves the loss replaced are returned as auxiliary
		// outputs, so that a top-level call leaves none of them a tracer
		v, _, gs := graph.ValueAndGradAux(func(xs ...*array.Array) (*array.Array, []*array.Array) {
			set := make(map[string]*array.Array, len(names))
			for i, n := range names {
				set[n] = xs[i]
			}
			if err := tree.Update(target, set); err != nil {
				panic(err)
			}
			v := loss(mm, xs[len(names):]...)
			var state []*array.Array
			for _, l := range leaves(op, target) {
				if l.Array.Tracer() {
					state = append(state, l.Array)
				}
			}
			return v, state
		}, argnums...)(prims...)
		grads := make(map[string]*array.Array, len(names))
		for i, n := range names {
			grads[n] = gs[i]
		}
		return v, grads
	}
}

// frozen holds the slots of frozen parameters. A slot's weak pointer
// identifies it for as long as the struct or slice holding it lives, and
// never names another slot after it dies.
var frozen = struct {
	sync.Mutex
	set map[weak.Pointer[*array.Array]]bool
}{set: map[weak.Pointer[*array.Array]]bool{}}

// Freeze leaves the parameters of m whose names have one of prefixes out
// of TrainableParameters and so of ValueAndGrad's gradients (MLX's
// freeze); no prefix freezes them all. A prefix matches a name equal to
// it or continuing it after a dot ("layers.1" matches "layers.1.weight",
// not "layers.10.weight"). Freezing belongs to the parameters' places in
// m (fields, slice elements), not to the arrays in them, so it lasts
// through Update; it is remembered by address, so m must be a pointer (a
// value is frozen in a copy). Arrays held directly as map values cannot
// be frozen. A prefix that matches nothing is an error.
func Freeze(m any, prefixes ...string) error {
	return setFrozen("nn.Freeze", m, prefixes, true)
}

// Unfreeze undoes Freeze for the parameters of m whose names have one of
// prefixes (none: all of them).
func Unfreeze(m any, prefixes ...string) error {
	return setFrozen("nn.Unfreeze", m, prefixes, false)
}

func setFrozen(op string, m any, prefixes []string, on bool) error {
	var ls []tree.Leaf
	if err := array.Try(func() { ls = leaves(op, m) }); err != nil {
		return err
	}
	used := make([]bool, len(prefixes))
	var sel []tree.Leaf
	for _, l := range ls {
		match := len(prefixes) == 0
		for i, p := range prefixes {
			if l.Path == p || strings.HasPrefix(l.Path, p+".") || p == "" {
				used[i], match = true, true
			}
		}
		if match {
			sel = append(sel, l)
		}
	}
	for i, u := range used {
		if !u {
			return array.Errorf(op, "no parameter of the %T is named %q or starts with %q", m, prefixes[i], prefixes[i]+".")
		}
	}
	for _, l := range sel {
		if l.Ptr == nil && on {
			return array.Errorf(op, "%q is a map value, which has no place to freeze", l.Path)
		}
	}
	frozen.Lock()
	defer frozen.Unlock()
	for k := range frozen.set {
		if k.Value() == nil {
			delete(frozen.set, k)
		}
	}
	for _, l := range sel {
		if l.Ptr == nil {
			continue
		}
		if on {
			frozen.set[weak.Make(l.Ptr)] = true
		} else {
			delete(frozen.set, weak.Make(l.Ptr))
		}
	}
	return nil
}

// Train sets every layer of m that has a training mode (every Moder:
// Dropout, BatchNorm) to training (on) or evaluation (!on), as PyTorch's
// train and eval and MLX's Module.train. Layers are made in training
// mode. m must be a pointer for layers held by value to be reached.
func Train(m any, on bool) error {
	err := tree.Walk(m, func(_ string, v reflect.Value) {
		if v.Kind() == reflect.Struct && v.CanAddr() {
			v = v.Addr()
		}
		if v.Kind() != reflect.Pointer || v.IsNil() || !v.CanInterface() {
			return
		}
		if t, ok := v.Interface().(Moder); ok {
			t.SetTraining(on)
		}
	})
	return rename(err, "nn.Train")
}

// checkIn panics with *array.Error when x is nil.
func checkIn(op string, x *array.Array) {
	if x == nil {
		array.Panicf(op, "nil input")
	}
}

// checkSelf panics with *array.Error for a nil layer.
func checkSelf(op string, isNil bool) {
	if isNil {
		array.Panicf(op, "nil layer")
	}
}

// AsType converts every floating-point array of m to dtype dt, a float
// dtype, in place (float64 for finite differences, float16 for a smaller
// model); integer arrays such as Dropout's key are kept.
func AsType(m any, dt array.DType) error {
	const op = "nn.AsType"
	if !dt.IsFloat() {
		return array.Errorf(op, "dtype %v is not a float dtype", dt)
	}
	err := tree.Map(m, func(_ string, a *array.Array) *array.Array {
		if !a.DType().IsFloat() {
			return a
		}
		return ops.AsType(a, dt)
	})
	return rename(err, op)
}
