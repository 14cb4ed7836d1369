package optim

import (
	"math"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// ClipGradNorm scales the gradients down so that their global norm (the
// 2-norm of all of them as one vector) is at most maxNorm, and returns
// the clipped gradients with the norm before clipping, as MLX's
// optimizers.clip_grad_norm and PyTorch's clip_grad_norm_: every
// gradient is multiplied by min(maxNorm/(norm+1e-6), 1). The norm is
// computed in float32 (float64 when some gradient is float64) and is
// lazy, like the gradients; nothing is evaluated.
func ClipGradNorm(grads map[string]*array.Array, maxNorm float64) (map[string]*array.Array, *array.Array) {
	const op = "optim.ClipGradNorm"
	if math.IsNaN(maxNorm) || maxNorm < 0 {
		array.Panicf(op, "maxNorm %v, want a number >= 0", maxNorm)
	}
	names := sortedKeys(grads)
	dt := array.Float32
	for _, name := range names {
		g := grads[name]
		if g == nil {
			array.Panicf(op, "gradient %q is nil", name)
		}
		if !g.DType().IsFloat() {
			array.Panicf(op, "gradient %q is %s, want a float dtype", name, g.DType())
		}
		if g.DType() == array.Float64 {
			dt = array.Float64
		}
	}
	sq := ops.Full(nil, 0, dt)
	for _, name := range names {
		sq = ops.Add(sq, ops.Sum(ops.Square(ops.AsType(grads[name], dt))))
	}
	norm := ops.Sqrt(sq)
	scale := ops.MinimumScalar(ops.Div(ops.FullLike(norm, maxNorm), ops.AddScalar(norm, 1e-6)), 1)
	out := make(map[string]*array.Array, len(grads))
	for _, name := range names {
		g := grads[name]
		out[name] = ops.Mul(g, ops.AsType(scale, g.DType()))
	}
	return out, norm
}
