package optim

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// SGD is stochastic gradient descent with optional momentum, dampening,
// Nesterov momentum and weight decay, with PyTorch's torch.optim.SGD
// semantics:
//
//	g = g + WeightDecay*p
//	v = g                                on a parameter's first update
//	v = Momentum*v + (1-Dampening)*g     afterwards
//	u = g + Momentum*v if Nesterov, else v (g when Momentum is 0)
//	p = p - lr*u
//
// MLX's optimizers.SGD starts v at zero and applies the dampening on the
// first update too; the two agree when Dampening is 0.
type SGD struct {
	Base
	// Momentum is the momentum factor (0: plain SGD, no state).
	Momentum float64
	// Dampening scales the gradient's share in the momentum buffer by
	// 1-Dampening.
	Dampening float64
	// Nesterov uses Nesterov momentum; it needs a Momentum and no
	// Dampening.
	Nesterov bool
	// WeightDecay adds WeightDecay*p to the gradient (L2 regularisation).
	WeightDecay float64
}

// NewSGD returns plain SGD with learning rate lr; set the fields for
// momentum and weight decay.
func NewSGD(lr float64) *SGD {
	o := &SGD{}
	o.Base = newBase("optim.SGD", o, lr)
	return o
}

func (o *SGD) slots() []string {
	if o.Momentum == 0 {
		return nil
	}
	return []string{"v"}
}

func (o *SGD) update(c *stepCtx, p, g *array.Array, s []*array.Array) (*array.Array, []*array.Array) {
	if o.Nesterov && (o.Momentum <= 0 || o.Dampening != 0) {
		array.Panicf(o.op, "Nesterov momentum needs a Momentum > 0 and a Dampening of 0 (have %v and %v)", o.Momentum, o.Dampening)
	}
	g = weightDecay(g, p, o.WeightDecay)
	if o.Momentum == 0 {
		return ops.Sub(p, ops.Mul(g, c.lrAs(p.DType()))), nil
	}
	v := s[0]
	switch {
	case c.fresh:
		v = g
	case o.Dampening == 0:
		// a zero buffer makes this g exactly on the first update
		v = ops.Add(ops.MulScalar(v, o.Momentum), g)
	default:
		later := ops.Add(ops.MulScalar(v, o.Momentum), ops.MulScalar(g, 1-o.Dampening))
		v = ops.Where(c.firstStep(), g, later)
	}
	u := v
	if o.Nesterov {
		u = ops.Add(g, ops.MulScalar(v, o.Momentum))
	}
	return ops.Sub(p, ops.Mul(u, c.lrAs(p.DType()))), []*array.Array{v}
}

// weightDecay returns g + wd*p (PyTorch's coupled weight decay).
func weightDecay(g, p *array.Array, wd float64) *array.Array {
	if wd == 0 {
		return g
	}
	return ops.Add(g, ops.MulScalar(p, wd))
}
