package optim

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// RMSProp divides the gradient by a running root mean square of past
// gradients (Hinton), with PyTorch's torch.optim.RMSprop semantics:
//
//	g = g + WeightDecay*p
//	v = Alpha*v + (1-Alpha)*g²
//	d = sqrt(v) + Eps, or sqrt(v - ḡ²) + Eps when Centered, where
//	    ḡ = Alpha*ḡ + (1-Alpha)*g
//	b = Momentum*b + g/d and p = p - lr*b with a Momentum,
//	p = p - lr*g/d without
//
// MLX's optimizers.RMSprop is the plain form (no momentum, not centered,
// no weight decay), with the same defaults.
type RMSProp struct {
	Base
	// Alpha is the decay rate of the averages.
	Alpha float64
	// Eps keeps the denominator away from zero.
	Eps float64
	// Momentum, when not 0, keeps a momentum buffer of the scaled steps.
	Momentum float64
	// Centered divides by an estimate of the gradient's variance instead
	// of its second moment.
	Centered bool
	// WeightDecay adds WeightDecay*p to the gradient.
	WeightDecay float64
}

// NewRMSProp returns RMSProp with learning rate lr (PyTorch's default
// is 0.01), alpha 0.99 and eps 1e-8.
func NewRMSProp(lr float64) *RMSProp {
	o := &RMSProp{Alpha: 0.99, Eps: 1e-8}
	o.Base = newBase("optim.RMSProp", o, lr)
	return o
}

func (o *RMSProp) slots() []string {
	s := []string{"v"}
	if o.Centered {
		s = append(s, "g")
	}
	if o.Momentum != 0 {
		s = append(s, "b")
	}
	return s
}

func (o *RMSProp) update(c *stepCtx, p, g *array.Array, s []*array.Array) (*array.Array, []*array.Array) {
	g = weightDecay(g, p, o.WeightDecay)
	a := o.Alpha
	v := ops.Add(ops.MulScalar(s[0], a), ops.MulScalar(ops.Square(g), 1-a))
	out := []*array.Array{v}
	var d *array.Array
	if o.Centered {
		gm := ops.Add(ops.MulScalar(s[1], a), ops.MulScalar(g, 1-a))
		out = append(out, gm)
		d = ops.AddScalar(ops.Sqrt(ops.Sub(v, ops.Square(gm))), o.Eps)
	} else {
		d = ops.AddScalar(ops.Sqrt(v), o.Eps)
	}
	lr := c.lrAs(p.DType())
	if o.Momentum == 0 {
		return ops.Sub(p, ops.Mul(ops.Div(g, d), lr)), out
	}
	b := ops.Add(ops.MulScalar(s[len(s)-1], o.Momentum), ops.Div(g, d))
	return ops.Sub(p, ops.Mul(b, lr)), append(out, b)
}

// Adagrad scales each parameter's step by the root of its summed squared
// gradients (Duchi et al.), with PyTorch's torch.optim.Adagrad semantics:
//
//	g = g + WeightDecay*p
//	v = v + g²                     (v starts at InitialAccumulator)
//	p = p - lr/(1+(t-1)*LRDecay) * g/(sqrt(v)+Eps)
//
// MLX's optimizers.Adagrad is the same rule without LRDecay, weight decay
// or an initial accumulator, and with eps 1e-8 where PyTorch has 1e-10.
type Adagrad struct {
	Base
	// Eps keeps the denominator away from zero.
	Eps float64
	// LRDecay divides the learning rate by 1+(t-1)*LRDecay at update t.
	LRDecay float64
	// InitialAccumulator is the value the sum of squares starts from.
	InitialAccumulator float64
	// WeightDecay adds WeightDecay*p to the gradient.
	WeightDecay float64
}

// NewAdagrad returns Adagrad with learning rate lr (PyTorch's default is
// 0.01) and PyTorch's eps of 1e-10.
func NewAdagrad(lr float64) *Adagrad {
	o := &Adagrad{Eps: 1e-10}
	o.Base = newBase("optim.Adagrad", o, lr)
	return o
}

func (o *Adagrad) slots() []string { return []string{"v"} }

func (o *Adagrad) initial(_ string, p *array.Array) *array.Array {
	return ops.FullLike(p, o.InitialAccumulator)
}

func (o *Adagrad) update(c *stepCtx, p, g *array.Array, s []*array.Array) (*array.Array, []*array.Array) {
	g = weightDecay(g, p, o.WeightDecay)
	v := ops.Add(s[0], ops.Square(g))
	lr := c.lrAs(p.DType())
	if o.LRDecay != 0 {
		lr = c.scalar("lr/(1+(t-1)*decay)", o.LRDecay, p.DType(), func() *array.Array {
			return ops.AsType(ops.Div(c.lr, ops.AddScalar(ops.MulScalar(ops.SubScalar(c.t, 1), o.LRDecay), 1)), p.DType())
		})
	}
	step := ops.Mul(ops.Div(g, ops.AddScalar(ops.Sqrt(v), o.Eps)), lr)
	return ops.Sub(p, step), []*array.Array{v}
}

// AdaDelta adapts the step from running averages of squared gradients
// and squared steps (Zeiler), with the semantics of PyTorch's
// torch.optim.Adadelta and MLX's optimizers.AdaDelta:
//
//	g = g + WeightDecay*p
//	v = Rho*v + (1-Rho)*g²
//	d = sqrt(u+Eps)/sqrt(v+Eps) * g
//	u = Rho*u + (1-Rho)*d²
//	p = p - lr*d
type AdaDelta struct {
	Base
	// Rho is the decay rate of the averages.
	Rho float64
	// Eps keeps the ratio finite.
	Eps float64
	// WeightDecay adds WeightDecay*p to the gradient (PyTorch only).
	WeightDecay float64
}

// NewAdaDelta returns AdaDelta with learning rate lr (PyTorch's default
// is 1.0), rho 0.9 and eps 1e-6.
func NewAdaDelta(lr float64) *AdaDelta {
	o := &AdaDelta{Rho: 0.9, Eps: 1e-6}
	o.Base = newBase("optim.AdaDelta", o, lr)
	return o
}

func (o *AdaDelta) slots() []string { return []string{"v", "u"} }

func (o *AdaDelta) update(c *stepCtx, p, g *array.Array, s []*array.Array) (*array.Array, []*array.Array) {
	g = weightDecay(g, p, o.WeightDecay)
	r := o.Rho
	v := ops.Add(ops.MulScalar(s[0], r), ops.MulScalar(ops.Square(g), 1-r))
	std := ops.Sqrt(ops.AddScalar(v, o.Eps))
	d := ops.Mul(ops.Div(ops.Sqrt(ops.AddScalar(s[1], o.Eps)), std), g)
	u := ops.Add(ops.MulScalar(s[1], r), ops.MulScalar(ops.Square(d), 1-r))
	return ops.Sub(p, ops.Mul(d, c.lrAs(p.DType()))), []*array.Array{v, u}
}

// Lion is the evolved sign-momentum optimiser (Chen et al., 2023), as
// MLX's optimizers.Lion (PyTorch 1.13 has none):
//
//	c = Beta1*m + (1-Beta1)*g
//	m = Beta2*m + (1-Beta2)*g
//	p = p*(1 - lr*WeightDecay) - lr*sign(c)
//
// Its steps have size lr in every coordinate, so it wants a learning rate
// 3-10 times smaller than AdamW's.
type Lion struct {
	Base
	// Beta1 interpolates the step's direction, Beta2 the momentum.
	Beta1, Beta2 float64
	// WeightDecay is the decoupled decay rate.
	WeightDecay float64
}

// NewLion returns Lion with learning rate lr and the paper's betas 0.9
// and 0.99, no weight decay.
func NewLion(lr float64) *Lion {
	o := &Lion{Beta1: 0.9, Beta2: 0.99}
	o.Base = newBase("optim.Lion", o, lr)
	return o
}

func (o *Lion) slots() []string { return []string{"m"} }

func (o *Lion) update(c *stepCtx, p, g *array.Array, s []*array.Array) (*array.Array, []*array.Array) {
	dir := ops.Add(ops.MulScalar(s[0], o.Beta1), ops.MulScalar(g, 1-o.Beta1))
	m := ops.Add(ops.MulScalar(s[0], o.Beta2), ops.MulScalar(g, 1-o.Beta2))
	if o.WeightDecay != 0 {
		p = ops.Mul(p, c.decayFactor(o.WeightDecay, p.DType()))
	}
	return ops.Sub(p, ops.Mul(ops.Sign(dir), c.lrAs(p.DType()))), []*array.Array{m}
}
