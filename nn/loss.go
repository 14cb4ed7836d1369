package nn

import (
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// Reduction says how a loss combines its elements, as PyTorch's
// reduction argument.
type Reduction int

const (
	// Mean averages the elements (a weighted loss divides by the sum of
	// the weights used, as PyTorch does).
	Mean Reduction = iota
	// Sum adds the elements.
	Sum
	// None returns the loss of every element.
	None
	// BatchMean sums and divides by the size of the first axis: the
	// reduction KLDivLoss needs to be the KL divergence (PyTorch's
	// "batchmean"); other losses treat it as Mean.
	BatchMean
)

func reduce(op string, l *array.Array, r Reduction) *array.Array {
	switch r {
	case Mean:
		return ops.Mean(l)
	case Sum:
		return ops.Sum(l)
	case None:
		return l
	case BatchMean:
		if l.Ndim() == 0 {
			return l
		}
		return ops.DivScalar(ops.Sum(l), float64(l.Shape()[0]))
	}
	array.Panicf(op, "unknown reduction %d", int(r))
	return nil
}

func checkFloat(op, what string, x *array.Array) {
	if x == nil {
		array.Panicf(op, "nil %s", what)
	}
	if !x.DType().IsFloat() {
		array.Panicf(op, "%s of shape %v has dtype %v: want a float dtype", what, x.Shape(), x.DType())
	}
}

func checkSame(op string, pred, target *array.Array) {
	checkFloat(op, "predictions", pred)
	checkFloat(op, "targets", target)
	if !slices.Equal(pred.Shape(), target.Shape()) {
		array.Panicf(op, "predictions of shape %v and targets of shape %v differ", pred.Shape(), target.Shape())
	}
}

// MSELoss is the squared error (pred-target)².
func MSELoss(pred, target *array.Array, r Reduction) *array.Array {
	const op = "nn.MSELoss"
	checkSame(op, pred, target)
	return reduce(op, ops.Square(ops.Sub(pred, target)), r)
}

// L1Loss is the absolute error |pred-target|.
func L1Loss(pred, target *array.Array, r Reduction) *array.Array {
	const op = "nn.L1Loss"
	checkSame(op, pred, target)
	return reduce(op, ops.Abs(ops.Sub(pred, target)), r)
}

// SmoothL1Loss is PyTorch's smooth_l1_loss: 0.5·d²/beta where |d| < beta
// and |d| - 0.5·beta elsewhere, d = pred-target. beta 0 is L1Loss.
func SmoothL1Loss(pred, target *array.Array, beta float64, r Reduction) *array.Array {
	const op = "nn.SmoothL1Loss"
	checkSame(op, pred, target)
	if beta < 0 {
		array.Panicf(op, "beta %v is negative", beta)
	}
	d := ops.Abs(ops.Sub(pred, target))
	if beta == 0 {
		return reduce(op, d, r)
	}
	quad := ops.MulScalar(ops.Square(d), 0.5/beta)
	return reduce(op, ops.Where(ops.LessScalar(d, beta), quad, ops.SubScalar(d, 0.5*beta)), r)
}

// HuberLoss is PyTorch's huber_loss: 0.5·d² where |d| <= delta and
// delta·(|d| - 0.5·delta) elsewhere (SmoothL1Loss times delta).
func HuberLoss(pred, target *array.Array, delta float64, r Reduction) *array.Array {
	const op = "nn.HuberLoss"
	checkSame(op, pred, target)
	if !(delta > 0) {
		array.Panicf(op, "delta %v must be positive", delta)
	}
	d := ops.Abs(ops.Sub(pred, target))
	quad := ops.MulScalar(ops.Square(d), 0.5)
	lin := ops.MulScalar(ops.SubScalar(d, 0.5*delta), delta)
	return reduce(op, ops.Where(ops.LessEqualScalar(d, delta), quad, lin), r)
}

// KLDivLoss is PyTorch's kl_div: input holds log-probabilities and the
// loss is target·(log(target) - input), 0 where target is 0; with
// logTarget, target holds log-probabilities too and the loss is
// exp(target)·(target - input). BatchMean gives the KL divergence per
// example.
func KLDivLoss(input, target *array.Array, logTarget bool, r Reduction) *array.Array {
	const op = "nn.KLDivLoss"
	checkSame(op, input, target)
	var l *array.Array
	if logTarget {
		l = ops.Mul(ops.Exp(target), ops.Sub(target, input))
	} else {
		pos := ops.GreaterScalar(target, 0)
		// log of 1 where target is 0: the dropped branch stays finite
		logT := ops.Log(ops.Where(pos, target, ops.OnesLike(target)))
		l = ops.Where(pos, ops.Mul(target, ops.Sub(logT, input)), ops.ZerosLike(target))
	}
	return reduce(op, l, r)
}

// BCEWithLogitsLoss is PyTorch's binary_cross_entropy_with_logits:
// -w·(p·t·log σ(x) + (1-t)·log(1-σ(x))) for logits x and targets t in
// [0, 1], computed without overflow. weights (broadcast to x) and
// posWeight (the weight p of positive examples, broadcast along the last
// axis) may be nil.
func BCEWithLogitsLoss(logits, targets, weights, posWeight *array.Array, r Reduction) *array.Array {
	const op = "nn.BCEWithLogitsLoss"
	checkSame(op, logits, targets)
	// log σ(x) = -softplus(-x), log(1-σ(x)) = -softplus(x)
	pos := ops.Mul(targets, ops.LogAddExpScalar(ops.Neg(logits), 0))
	if posWeight != nil {
		checkFloat(op, "posWeight", posWeight)
		pos = ops.Mul(pos, posWeight)
	}
	neg := ops.Mul(ops.SubScalar(ops.Neg(targets), -1), ops.LogAddExpScalar(logits, 0))
	l := ops.Add(pos, neg)
	if weights != nil {
		checkFloat(op, "weights", weights)
		l = ops.Mul(l, weights)
	}
	if !slices.Equal(l.Shape(), logits.Shape()) {
		array.Panicf(op, "weights %v and posWeight %v do not broadcast to the logits' shape %v", shapeOf(weights), shapeOf(posWeight), logits.Shape())
	}
	return reduce(op, l, r)
}

// NLLLoss is the negative log-likelihood of integer class targets under
// log-probabilities logp, classes on the last axis (as MLX; PyTorch's are
// on axis 1): -w[t]·logp[..., t], targets of logp's shape without its last
// axis. weights ([classes]) may be nil; with weights, Mean divides by the
// sum of the targets' weights, as PyTorch does.
func NLLLoss(logp, targets, weights *array.Array, r Reduction) *array.Array {
	const op = "nn.NLLLoss"
	checkClasses(op, logp, targets, weights)
	l := ops.Neg(ops.Squeeze(ops.TakeAlongAxis(logp, ops.ExpandDims(targets, -1), -1), -1))
	return weightedMean(op, l, targets, weights, r)
}

func weightedMean(op string, l, targets, weights *array.Array, r Reduction) *array.Array {
	if weights == nil {
		return reduce(op, l, r)
	}
	w := ops.AsType(ops.Take(weights, targets, 0), l.DType())
	l = ops.Mul(l, w)
	if r == Mean {
		return ops.Div(ops.Sum(l), ops.Sum(w))
	}
	return reduce(op, l, r)
}

func checkClasses(op string, logits, targets, weights *array.Array) {
	checkFloat(op, "logits", logits)
	if targets == nil {
		array.Panicf(op, "nil targets")
	}
	if logits.Ndim() == 0 {
		array.Panicf(op, "logits of shape %v have no class axis", logits.Shape())
	}
	c := logits.Shape()[logits.Ndim()-1]
	if weights != nil {
		checkFloat(op, "weights", weights)
		if !slices.Equal(weights.Shape(), []int{c}) {
			array.Panicf(op, "weights of shape %v for %d classes (logits %v)", weights.Shape(), c, logits.Shape())
		}
	}
	if targets.DType().IsFloat() {
		if !slices.Equal(targets.Shape(), logits.Shape()) {
			array.Panicf(op, "probability targets of shape %v and logits of shape %v differ", targets.Shape(), logits.Shape())
		}
		return
	}
	if targets.DType() == array.Bool || targets.DType().IsComplex() {
		array.Panicf(op, "targets of dtype %v: want integer classes or float probabilities", targets.DType())
	}
	if !slices.Equal(targets.Shape(), logits.Shape()[:logits.Ndim()-1]) {
		array.Panicf(op, "class targets of shape %v for logits of shape %v: want %v", targets.Shape(), logits.Shape(), logits.Shape()[:logits.Ndim()-1])
	}
}

// CrossEntropyLoss is PyTorch's cross_entropy from logits, classes on the
// last axis (as MLX). targets are integer classes (logits' shape without
// its last axis) or float probabilities (logits' shape). weights
// ([classes]) may be nil. labelSmoothing ε in [0, 1] mixes the target
// with the uniform distribution: (1-ε)·target + ε/classes. With integer
// targets and weights, Mean divides by the sum of the targets' weights;
// with probability targets it divides by the number of examples, as
// PyTorch does.
func CrossEntropyLoss(logits, targets, weights *array.Array, labelSmoothing float64, r Reduction) *array.Array {
	const op = "nn.CrossEntropyLoss"
	checkClasses(op, logits, targets, weights)
	if !(labelSmoothing >= 0 && labelSmoothing <= 1) {
		array.Panicf(op, "label smoothing %v is outside [0, 1]", labelSmoothing)
	}
	c := float64(logits.Shape()[logits.Ndim()-1])
	logp := ops.LogSoftmax(logits, -1)
	wlogp := logp
	if weights != nil {
		wlogp = ops.Mul(logp, ops.AsType(weights, logp.DType()))
	}
	if targets.DType().IsFloat() {
		t := ops.AsType(targets, logp.DType())
		if labelSmoothing > 0 {
			t = ops.AddScalar(ops.MulScalar(t, 1-labelSmoothing), labelSmoothing/c)
		}
		return reduce(op, ops.Neg(ops.Sum(ops.Mul(t, wlogp), -1)), r)
	}
	nll := NLLLoss(logp, targets, weights, r)
	if labelSmoothing == 0 {
		return nll
	}
	smooth := ops.Neg(ops.Sum(wlogp, -1))
	if weights != nil && r == Mean {
		w := ops.AsType(ops.Take(weights, targets, 0), logp.DType())
		smooth = ops.Div(ops.Sum(smooth), ops.Sum(w))
	} else {
		smooth = reduce(op, smooth, r)
	}
	return ops.Add(ops.MulScalar(nll, 1-labelSmoothing), ops.MulScalar(smooth, labelSmoothing/c))
}
