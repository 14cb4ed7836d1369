package graph

import (
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// VJPFunc computes the cotangents of a function's inputs (one per primal,
// nil for zero) from its primals, its outputs and the cotangents of its
// outputs.
type VJPFunc func(primals, outputs, cotangents []*array.Array) []*array.Array

// JVPFunc computes the tangents of a function's outputs (one per output,
// of its shape) from its primals and their tangents (one per primal; zeros
// for a primal that is not differentiated).
type JVPFunc func(primals, tangents []*array.Array) []*array.Array

// VmapFunc computes a function's outputs over a batch from its batched
// inputs: axes[i] is the batch axis of input i, or NoAxis when input i is
// the same for every example. It returns the outputs and the batch axis
// of each (NoAxis: the output is the same for every example).
type VmapFunc func(inputs []*array.Array, axes []int) (outputs []*array.Array, outAxes []int)

// Custom is a function with rules of its own for some transforms (MLX's
// custom_function with its vjp, jvp and vmap): a nil rule means that
// transform goes through F itself. Make it a function with
// CustomFunction.
type Custom struct {
	F    Fn       // the function
	VJP  VJPFunc  // its reverse-mode derivative
	JVP  JVPFunc  // its forward-mode derivative
	Vmap VmapFunc // its batched form
}

// custom is the primitive of a function with user-supplied rules. Its
// inputs are the primals followed by the function's outputs behind a
// StopGradient, so no transform walks into the function itself; its
// outputs are views of those.
type custom struct {
	Custom
	op string // the user-facing name errors carry
	n  int    // number of primals
}

func (p *custom) Name() string { return p.op[len("graph."):] }

func (p *custom) Eval(_ array.Stream, in, out []*array.Array) error {
	for i, o := range out {
		src := in[p.n+i]
		o.SetData(src.Storage(), src.Strides(), src.Offset())
	}
	return nil
}

func (p *custom) VJP(inputs, outputs, cots []*array.Array, argnums []int) []*array.Array {
	g := p.cotangents(inputs[:p.n], outputs, cots)
	res := make([]*array.Array, len(argnums))
	for k, j := range argnums {
		if j < p.n {
			res[k] = g[j]
		}
	}
	return res
}

// cotangents calls the user's VJP function, or differentiates F without
// one, and checks what comes back against the primals.
func (p *custom) cotangents(primals, outputs, cots []*array.Array) []*array.Array {
	if p.Custom.VJP == nil {
		_, g := VJP(p.F, primals, cots)
		return g
	}
	g := p.Custom.VJP(primals, outputs, cots)
	if len(g) != p.n {
		array.Panicf(p.op, "the VJP function returned %d cotangents for %d primals", len(g), p.n)
	}
	for i, c := range g {
		if c != nil && !slices.Equal(c.Shape(), primals[i].Shape()) {
			array.Panicf(p.op, "the VJP function returned a cotangent of shape %v for primal %d of shape %v", c.Shape(), i, primals[i].Shape())
		}
	}
	return g
}

// JVP calls the user's JVP function, or differentiates F without one.
func (p *custom) JVP(inputs, outputs, tangents []*array.Array, argnums []int) []*array.Array {
	primals := inputs[:p.n]
	full := make([]*array.Array, p.n)
	for k, j := range argnums {
		if j < p.n {
			full[j] = tangents[k]
		}
	}
	for i := range full {
		if full[i] == nil {
			full[i] = ops.ZerosLike(primals[i])
		}
	}
	return p.tangents(primals, full, outputs)
}

func (p *custom) tangents(primals, tangents, outputs []*array.Array) []*array.Array {
	if p.Custom.JVP == nil {
		_, jvps := JVP(p.F, primals, tangents)
		return jvps
	}
	t := p.Custom.JVP(primals, tangents)
	if len(t) != len(outputs) {
		array.Panicf(p.op, "the JVP function returned %d tangents for %d outputs", len(t), len(outputs))
	}
	for i, x := range t {
		if x != nil && !slices.Equal(x.Shape(), outputs[i].Shape()) {
			array.Panicf(p.op, "the JVP function returned a tangent of shape %v for output %d of shape %v", x.Shape(), i, outputs[i].Shape())
		}
	}
	return t
}

// Vmap calls the user's batching function, or else batches F and each
// derivative rule with Vmap, so the batched function keeps the user's
// derivatives. The batched outputs of F that the replay computed (the
// inputs after the primals) are not used: the batched function
// recomputes them.
func (p *custom) Vmap(inputs []*array.Array, axes []int) ([]*array.Array, []int) {
	n, m := p.n, len(inputs)-p.n
	inAxes := make([]int, n)
	some := false
	for i := range inAxes {
		inAxes[i] = axes[i]
		if axes[i] < 0 {
			inAxes[i] = NoAxis
		} else {
			some = true
		}
	}
	if !some {
		// the function closes over a batched array: batching its
		// arguments alone would compute something else
		array.Panicf("graph.Vmap", "%s: a batched array reaches the function other than through its arguments; pass it as an argument", p.Name())
	}
	if p.Custom.Vmap != nil {
		return p.userVmap(inputs[:n], inAxes, inputs[n:], axes[n:])
	}
	vjp := func(primals, outputs, cots []*array.Array) []*array.Array {
		// per example: the primals on their own axes, the outputs and
		// their cotangents on axis 0, where the batched function put them
		one := func(xs ...*array.Array) []*array.Array {
			g := p.cotangents(xs[:n], xs[n:n+m], xs[n+m:])
			for i := range g {
				if g[i] == nil {
					g[i] = ops.ZerosLike(xs[i])
				}
			}
			return g
		}
		ax := append(slices.Clone(inAxes), make([]int, 2*m)...)
		args := append(append(slices.Clone(primals), outputs...), cots...)
		g := Vmap(one, ax, nil)(args...)
		for i := range g {
			if inAxes[i] == NoAxis {
				// an unbatched primal was used by every example
				g[i] = ops.Sum(g[i], 0)
			} else {
				g[i] = ops.MoveAxis(g[i], 0, inAxes[i])
			}
		}
		return g
	}
	batched := Custom{F: Vmap(p.F, inAxes, nil), VJP: vjp}
	if p.Custom.JVP != nil {
		batched.JVP = func(primals, tangents []*array.Array) []*array.Array {
			// a tangent has its primal's shape, so it is batched on the
			// same axis
			one := func(xs ...*array.Array) []*array.Array {
				outs := callFn(p.op, p.F, xs[:n])
				t := p.tangents(xs[:n], xs[n:], outs)
				for i := range t {
					if t[i] == nil {
						t[i] = ops.ZerosLike(outs[i])
					}
				}
				return t
			}
			return Vmap(one, append(slices.Clone(inAxes), inAxes...), nil)(append(slices.Clone(primals), tangents...)...)
		}
	}
	outs := customFn(p.op, batched)(inputs[:n]...)
	return outs, make([]int, len(outs))
}

// userVmap calls the user's batching function and checks its outputs
// against F's: outs and outAxes are F's outputs as the replay batched
// them, so each result must have the same shape once its batch axis is
// taken out.
func (p *custom) userVmap(primals []*array.Array, inAxes []int, outs []*array.Array, outAxes []int) ([]*array.Array, []int) {
	m := len(outs)
	res, oax := p.Custom.Vmap(primals, slices.Clone(inAxes))
	if len(res) != m || len(oax) != m {
		array.Panicf(p.op, "the Vmap function returned %d outputs and %d axes for %d outputs", len(res), len(oax), m)
	}
	rax := make([]int, m)
	for i, o := range res {
		if o == nil {
			array.Panicf(p.op, "output %d of the Vmap function is nil", i)
		}
		got := o.Shape()
		switch ax := oax[i]; {
		case ax == NoAxis:
			rax[i] = -1
		case ax < 0 || ax >= o.Ndim():
			array.Panicf(p.op, "the Vmap function gave axis %d for output %d of shape %v", ax, i, o.Shape())
		default:
			rax[i] = ax
			got = slices.Delete(got, ax, ax+1)
		}
		want := outs[i].Shape()
		if outAxes[i] >= 0 {
			want = slices.Delete(want, outAxes[i], outAxes[i]+1)
		}
		if !slices.Equal(got, want) {
			array.Panicf(p.op, "the Vmap function returned output %d of shape %v with batch axis %d: each example has shape %v, want %v", i, o.Shape(), oax[i], got, want)
		}
	}
	return res, rax
}

// CustomVJP returns f with its reverse-mode derivative given by vjp, as
// MLX's custom_function does: use it for a numerically better gradient, or
// one that f's operations cannot express. Forward-mode derivatives (JVP)
// still differentiate f. CustomFunction also takes JVP and Vmap rules.
func CustomVJP(f Fn, vjp VJPFunc) Fn {
	if f == nil {
		array.Panicf("graph.CustomVJP", "nil function")
	}
	if vjp == nil {
		array.Panicf("graph.CustomVJP", "nil VJP function")
	}
	return customFn("graph.CustomVJP", Custom{F: f, VJP: vjp})
}

// CustomFunction returns c.F with c's rules for the transforms that have
// one (MLX's custom_function with .vjp, .jvp and .vmap): VJP for Grad,
// ValueAndGrad and VJP; JVP for JVP; Vmap for Vmap. The rules see c.F's
// arguments, never the arrays it closes over, so an array that must be
// differentiated or batched has to be an argument. F runs as it is
// outside transforms and under compile.
func CustomFunction(c Custom) Fn {
	if c.F == nil {
		array.Panicf("graph.CustomFunction", "nil function")
	}
	return customFn("graph.CustomFunction", c)
}

func customFn(op string, c Custom) Fn {
	return func(in ...*array.Array) []*array.Array {
		checkNil(op, "argument", in)
		outs := callFn(op, c.F, in)
		inputs := append([]*array.Array(nil), in...)
		shapes := make([][]int, len(outs))
		dts := make([]array.DType, len(outs))
		for i, o := range outs {
			inputs = append(inputs, ops.StopGradient(o))
			shapes[i] = o.Shape()
			dts[i] = o.DType()
		}
		return array.NewMulti(array.CurrentStream(), shapes, dts, &custom{Custom: c, op: op, n: len(in)}, inputs...)
	}
}

// Checkpoint returns f rewritten to recompute its forward pass during the
// reverse pass instead of keeping its intermediates: the reverse graph
// holds only f's inputs and outputs, trading compute for memory.
func Checkpoint(f Fn) Fn {
	if f == nil {
		array.Panicf("graph.Checkpoint", "nil function")
	}
	return CustomVJP(f, func(primals, _, cots []*array.Array) []*array.Array {
		_, vjps := VJP(f, primals, cots)
		return vjps
	})
}
