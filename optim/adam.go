package optim

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// Adam is the Adam optimiser (Kingma and Ba), with PyTorch's
// torch.optim.Adam semantics by default:
//
//	g = g + WeightDecay*p
//	m = Beta1*m + (1-Beta1)*g
//	v = Beta2*v + (1-Beta2)*g²
//	p = p - lr/(1-Beta1^t) * m / (sqrt(v)/sqrt(1-Beta2^t) + Eps)
//
// where t counts updates from 1. The bias corrections are those of the
// paper and of PyTorch, with Eps added after the correction of v (as
// PyTorch does, and MLX with bias_correction=True). MLX's Adam leaves the
// bias correction out by default: set NoBiasCorrection for
// p = p - lr*m/(sqrt(v)+Eps). MLX's Adam has no weight decay.
type Adam struct {
	Base
	// Beta1 and Beta2 are the decay rates of the moment averages.
	Beta1, Beta2 float64
	// Eps keeps the denominator away from zero.
	Eps float64
	// WeightDecay adds WeightDecay*p to the gradient (L2, not AdamW's
	// decoupled decay).
	WeightDecay float64
	// NoBiasCorrection leaves out the bias corrections, as MLX's default.
	NoBiasCorrection bool
}

// NewAdam returns Adam with learning rate lr and PyTorch's defaults:
// betas 0.9 and 0.999, eps 1e-8, no weight decay.
func NewAdam(lr float64) *Adam {
	o := &Adam{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
	o.Base = newBase("optim.Adam", o, lr)
	return o
}

func (o *Adam) slots() []string { return []string{"m", "v"} }

func (o *Adam) update(c *stepCtx, p, g *array.Array, s []*array.Array) (*array.Array, []*array.Array) {
	g = weightDecay(g, p, o.WeightDecay)
	return adamStep(c, p, g, s, o.Beta1, o.Beta2, o.Eps, !o.NoBiasCorrection)
}

// adamStep is the moment update shared by Adam and AdamW.
func adamStep(c *stepCtx, p, g *array.Array, s []*array.Array, b1, b2, eps float64, correct bool) (*array.Array, []*array.Array) {
	dt := p.DType()
	m := ops.Add(ops.MulScalar(s[0], b1), ops.MulScalar(g, 1-b1))
	v := ops.Add(ops.MulScalar(s[1], b2), ops.MulScalar(ops.Square(g), 1-b2))
	var step *array.Array
	if correct {
		c2 := c.scalar("sqrt(1-beta**t)", b2, dt, func() *array.Array {
			return ops.AsType(ops.Sqrt(oneMinus(c.pow(b2))), dt)
		})
		denom := ops.AddScalar(ops.Div(ops.Sqrt(v), c2), eps)
		step = ops.Mul(ops.Div(m, denom), c.biasCorrectedLR(b1, dt))
	} else {
		step = ops.Mul(ops.Div(m, ops.AddScalar(ops.Sqrt(v), eps)), c.lrAs(dt))
	}
	return ops.Sub(p, step), []*array.Array{m, v}
}

// AdamW is Adam with decoupled weight decay (Loshchilov and Hutter), as
// PyTorch's torch.optim.AdamW and MLX's optimizers.AdamW: the parameter
// is first scaled by 1 - lr*WeightDecay, then updated as Adam without
// weight decay. The bias correction follows Adam's (on by default, as
// PyTorch; MLX's default leaves it out).
type AdamW struct {
	Base
	// Beta1 and Beta2 are the decay rates of the moment averages.
	Beta1, Beta2 float64
	// Eps keeps the denominator away from zero.
	Eps float64
	// WeightDecay is the decoupled decay rate.
	WeightDecay float64
	// NoBiasCorrection leaves out the bias corrections, as MLX's default.
	NoBiasCorrection bool
}

// NewAdamW returns AdamW with learning rate lr and the defaults of
// PyTorch and MLX: betas 0.9 and 0.999, eps 1e-8, weight decay 0.01.
func NewAdamW(lr float64) *AdamW {
	o := &AdamW{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01}
	o.Base = newBase("optim.AdamW", o, lr)
	return o
}

func (o *AdamW) slots() []string { return []string{"m", "v"} }

func (o *AdamW) update(c *stepCtx, p, g *array.Array, s []*array.Array) (*array.Array, []*array.Array) {
	if o.WeightDecay != 0 {
		p = ops.Mul(p, c.decayFactor(o.WeightDecay, p.DType()))
	}
	return adamStep(c, p, g, s, o.Beta1, o.Beta2, o.Eps, !o.NoBiasCorrection)
}

// Adamax is Adam with the infinity norm, with PyTorch's
// torch.optim.Adamax semantics:
//
//	g = g + WeightDecay*p
//	m = Beta1*m + (1-Beta1)*g
//	u = max(Beta2*u, |g| + Eps)
//	p = p - lr/(1-Beta1^t) * m/u
//
// MLX's Adamax has no bias correction and adds Eps outside the maximum:
// p = p - lr*m/(max(Beta2*u, |g|) + Eps).
type Adamax struct {
	Base
	// Beta1 and Beta2 are the decay rates of the averages.
	Beta1, Beta2 float64
	// Eps keeps the denominator away from zero.
	Eps float64
	// WeightDecay adds WeightDecay*p to the gradient.
	WeightDecay float64
}

// NewAdamax returns Adamax with learning rate lr (PyTorch's default is
// 0.002) and betas 0.9 and 0.999, eps 1e-8.
func NewAdamax(lr float64) *Adamax {
	o := &Adamax{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
	o.Base = newBase("optim.Adamax", o, lr)
	return o
}

func (o *Adamax) slots() []string { return []string{"m", "v"} }

func (o *Adamax) update(c *stepCtx, p, g *array.Array, s []*array.Array) (*array.Array, []*array.Array) {
	dt := p.DType()
	g = weightDecay(g, p, o.WeightDecay)
	m := ops.Add(ops.MulScalar(s[0], o.Beta1), ops.MulScalar(g, 1-o.Beta1))
	u := ops.Maximum(ops.MulScalar(s[1], o.Beta2), ops.AddScalar(ops.Abs(g), o.Eps))
	return ops.Sub(p, ops.Mul(ops.Div(m, u), c.biasCorrectedLR(o.Beta1, dt))), []*array.Array{m, u}
}
