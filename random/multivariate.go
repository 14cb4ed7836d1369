package random

import (
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// MultivariateNormal returns draws from the normal distribution with mean
// mean ([..., n]) and covariance cov ([..., n, n]), of dtype dt (a float
// dtype): shape + [n], as JAX's random.multivariate_normal with its
// default method="cholesky" and numpy's Generator.multivariate_normal
// (with size = shape). shape must be a broadcast of mean's batch shape
// (mean.shape[:-1]) and cov's (cov.shape[:-2]); nil means their broadcast.
//
// A draw is mean + L·z for L the lower Cholesky factor of cov,
// symmetrized first as JAX does, and z = Normal(key, shape + [n], dt, 0,
// 1) (float32 for float16 and bfloat16, which compute in float32 and
// round once), so it is differentiable in mean and cov (cov's gradient is
// symmetric). cov must be positive definite: a covariance that is not
// (a singular one included, which numpy's SVD method accepts) is an error
// from Eval wrapping linalg.ErrNotPositiveDefinite, where JAX returns
// NaN. The Cholesky factorisation runs on the host (see package linalg).
func MultivariateNormal(key, mean, cov *array.Array, shape []int, dt array.DType) *array.Array {
	const op = "random.MultivariateNormal"
	key = keyOr(op, key)
	checkFloat(op, dt)
	if mean == nil || cov == nil {
		array.Panicf(op, "nil mean or covariance")
	}
	ms, cs := mean.Shape(), cov.Shape()
	if len(ms) < 1 {
		array.Panicf(op, "mean of shape %v: want at least 1 dimension", ms)
	}
	n := ms[len(ms)-1]
	if len(cs) < 2 || cs[len(cs)-1] != n || cs[len(cs)-2] != n {
		array.Panicf(op, "covariance of shape %v does not match mean of shape %v: want [..., %d, %d]", cs, ms, n, n)
	}
	var batch []int
	if err := array.Try(func() { batch = ops.BroadcastShapes(op, ms[:len(ms)-1], cs[:len(cs)-2]) }); err != nil {
		array.Panicf(op, "mean of shape %v and covariance of shape %v: batch shapes %v and %v do not broadcast", ms, cs, ms[:len(ms)-1], cs[:len(cs)-2])
	}
	if shape == nil {
		shape = batch
	}
	checkShape(op, shape)
	var full []int
	if err := array.Try(func() { full = ops.BroadcastShapes(op, shape, batch) }); err != nil || !slices.Equal(full, shape) {
		array.Panicf(op, "shape %v is not a broadcast of the batch shape %v of mean %v and covariance %v", shape, batch, ms, cs)
	}
	work := dt
	if dt == array.Float16 || dt == array.BFloat16 {
		work = array.Float32
	}
	c := ops.AsType(cov, work)
	c = ops.MulScalar(ops.Add(c, ops.SwapAxes(c, -1, -2)), 0.5)
	l := ops.LinalgCholesky(c, false)
	z := ops.RandomNormal(key, append(slices.Clone(shape), n), work, 0, 1)
	lz := ops.Squeeze(ops.MatMul(l, ops.ExpandDims(z, -1)), -1)
	return ops.AsType(ops.Add(ops.AsType(mean, work), lz), dt)
}
