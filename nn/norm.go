package nn

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

func checkFeatures(op string, x *array.Array, n int, ch string) {
	checkIn(op, x)
	if x.Ndim() == 0 || x.Shape()[x.Ndim()-1] != n {
		array.Panicf(op, "input shape %v: want %d %s on the last axis", x.Shape(), n, ch)
	}
}

// LayerNorm normalises the last axis of x to zero mean and unit variance
// and applies an affine map: (x-mean)/sqrt(var+Eps)·Weight + Bias, one
// fused primitive (ops.LayerNorm). Weight and Bias are [dims], or nil
// for none.
type LayerNorm struct {
	Weight *array.Array `nn:",optional"`
	Bias   *array.Array `nn:",optional"`
	Dims   int
	Eps    float64
}

// NewLayerNorm returns a float32 LayerNorm over dims features with
// weight 1 and bias 0, or none when affine is false (PyTorch's
// elementwise_affine). PyTorch's eps is 1e-5.
func NewLayerNorm(dims int, eps float64, affine bool) *LayerNorm {
	checkDims("nn.NewLayerNorm", dims)
	l := &LayerNorm{Dims: dims, Eps: eps}
	if affine {
		l.Weight = ops.Ones([]int{dims}, array.Float32)
		l.Bias = ops.Zeros([]int{dims}, array.Float32)
	}
	return l
}

// Forward normalises x [..., dims].
func (l *LayerNorm) Forward(x *array.Array) *array.Array {
	const op = "nn.LayerNorm"
	checkSelf(op, l == nil)
	checkFeatures(op, x, l.Dims, "features")
	return ops.LayerNorm(x, l.Weight, l.Bias, l.Eps)
}

// RMSNorm divides the last axis of x by its root mean square and scales
// it: x/sqrt(mean(x²)+Eps)·Weight, one fused primitive (ops.RMSNorm).
type RMSNorm struct {
	Weight *array.Array `nn:",optional"`
	Dims   int
	Eps    float64
}

// NewRMSNorm returns a float32 RMSNorm over dims features with weight 1.
func NewRMSNorm(dims int, eps float64) *RMSNorm {
	checkDims("nn.NewRMSNorm", dims)
	return &RMSNorm{Weight: ops.Ones([]int{dims}, array.Float32), Dims: dims, Eps: eps}
}

// Forward normalises x [..., dims].
func (l *RMSNorm) Forward(x *array.Array) *array.Array {
	const op = "nn.RMSNorm"
	checkSelf(op, l == nil)
	checkFeatures(op, x, l.Dims, "features")
	return ops.RMSNorm(x, l.Weight, l.Eps)
}

// GroupNorm splits the channels of x [N, ..., C] into Groups groups of
// neighbouring channels (as PyTorch does) and normalises each group over
// its channels and every spatial position, then applies a per-channel
// affine map.
type GroupNorm struct {
	Weight   *array.Array `nn:",optional"`
	Bias     *array.Array `nn:",optional"`
	Groups   int
	Channels int
	Eps      float64
}

// NewGroupNorm returns a float32 GroupNorm of channels split into groups,
// with weight 1 and bias 0 unless affine is false.
func NewGroupNorm(groups, channels int, eps float64, affine bool) *GroupNorm {
	const op = "nn.NewGroupNorm"
	checkDims(op, groups, channels)
	if channels%groups != 0 {
		array.Panicf(op, "%d channels do not split into %d groups", channels, groups)
	}
	g := &GroupNorm{Groups: groups, Channels: channels, Eps: eps}
	if affine {
		g.Weight = ops.Ones([]int{channels}, array.Float32)
		g.Bias = ops.Zeros([]int{channels}, array.Float32)
	}
	return g
}

// Forward normalises x [N, ..., C].
func (g *GroupNorm) Forward(x *array.Array) *array.Array {
	const op = "nn.GroupNorm"
	checkSelf(op, g == nil)
	checkFeatures(op, x, g.Channels, "channels")
	if x.Ndim() < 2 || g.Groups <= 0 || g.Channels%g.Groups != 0 {
		array.Panicf(op, "input shape %v, %d groups: want [N, ..., %d] with channels a multiple of the groups", x.Shape(), g.Groups, g.Channels)
	}
	sh := x.Shape()
	n := sh[0]
	xs := ops.Reshape(x, n, -1, g.Groups, g.Channels/g.Groups)
	mean := ops.KeepDims(ops.Mean, xs, 1, 3)
	c := ops.Sub(xs, mean)
	v := ops.KeepDims(ops.Mean, ops.Square(c), 1, 3)
	return affine(ops.Reshape(ops.Mul(c, ops.Rsqrt(ops.AddScalar(v, g.Eps))), sh...), g.Weight, g.Bias)
}

// affine scales y by weight and adds bias (either nil for none), both
// converted to y's dtype.
func affine(y, weight, bias *array.Array) *array.Array {
	if weight != nil {
		y = ops.Mul(y, ops.AsType(weight, y.DType()))
	}
	if bias != nil {
		y = ops.Add(y, ops.AsType(bias, y.DType()))
	}
	return y
}

// BatchNorm normalises every channel (the last axis) of x over all other
// axes, as PyTorch's BatchNorm1d/2d/3d on channels-last data. In training
// mode it uses the batch's mean and biased variance and moves the
// running statistics towards the batch's (mean, and unbiased variance)
// by Momentum; in evaluation mode it uses the running statistics.
// RunningMean and RunningVar are state: saved with the model, never
// differentiated. Without TrackRunningStats there are none and both modes
// use the batch statistics.
type BatchNorm struct {
	Weight      *array.Array `nn:",optional"`
	Bias        *array.Array `nn:",optional"`
	RunningMean *array.Array `nn:",state,optional"`
	RunningVar  *array.Array `nn:",state,optional"`
	Channels    int
	Eps         float64
	Momentum    float64
	Training    bool
}

// NewBatchNorm returns a float32 BatchNorm over channels in training
// mode: weight 1 and bias 0 unless affine is false, running mean 0 and
// variance 1 when trackRunningStats. PyTorch's eps is 1e-5 and momentum
// 0.1.
func NewBatchNorm(channels int, eps, momentum float64, affine, trackRunningStats bool) *BatchNorm {
	checkDims("nn.NewBatchNorm", channels)
	b := &BatchNorm{Channels: channels, Eps: eps, Momentum: momentum, Training: true}
	if affine {
		b.Weight = ops.Ones([]int{channels}, array.Float32)
		b.Bias = ops.Zeros([]int{channels}, array.Float32)
	}
	if trackRunningStats {
		b.RunningMean = ops.Zeros([]int{channels}, array.Float32)
		b.RunningVar = ops.Ones([]int{channels}, array.Float32)
	}
	return b
}

// SetTraining switches between training and evaluation.
func (b *BatchNorm) SetTraining(on bool) { b.Training = on }

// Forward normalises x [N, ..., C], updating the running statistics in
// training mode.
func (b *BatchNorm) Forward(x *array.Array) *array.Array {
	const op = "nn.BatchNorm"
	checkSelf(op, b == nil)
	checkFeatures(op, x, b.Channels, "channels")
	if x.Ndim() < 2 {
		array.Panicf(op, "input shape %v: want [N, ..., %d]", x.Shape(), b.Channels)
	}
	axes := make([]int, x.Ndim()-1)
	for i := range axes {
		axes[i] = i
	}
	track := b.RunningMean != nil && b.RunningVar != nil
	var mean, v *array.Array
	if b.Training || !track {
		mean = ops.Mean(x, axes...)
		v = ops.Mean(ops.Square(ops.Sub(x, mean)), axes...)
		if b.Training && track {
			n := float64(x.Size() / b.Channels)
			if n < 2 {
				array.Panicf(op, "input shape %v: training needs more than one value per channel", x.Shape())
			}
			m := b.Momentum
			bm, bv := ops.StopGradient(mean), ops.StopGradient(ops.MulScalar(v, n/(n-1)))
			b.RunningMean = ops.Add(ops.MulScalar(b.RunningMean, 1-m), ops.AsType(ops.MulScalar(bm, m), b.RunningMean.DType()))
			b.RunningVar = ops.Add(ops.MulScalar(b.RunningVar, 1-m), ops.AsType(ops.MulScalar(bv, m), b.RunningVar.DType()))
		}
	} else {
		mean, v = ops.AsType(b.RunningMean, x.DType()), ops.AsType(b.RunningVar, x.DType())
	}
	return affine(ops.Mul(ops.Sub(x, mean), ops.Rsqrt(ops.AddScalar(v, b.Eps))), b.Weight, b.Bias)
}
