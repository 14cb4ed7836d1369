package nn

import (
	"math"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
	"github.com/fathom-go/fathom/random"
)

// Fans returns the fan-in and fan-out of a weight of the given shape, as
// PyTorch's initialisers compute them for the same layer: a linear weight
// [out, in] has fan-in in and fan-out out; a channels-last convolution
// weight [out, k1, ..., in] has fan-in in·k1·... and fan-out out·k1·...
// (PyTorch's [out, in, k1, ...] layout gives the same numbers). A shape
// of fewer than two dimensions panics with *array.Error, as in PyTorch.
func Fans(shape []int) (fanIn, fanOut int) {
	if len(shape) < 2 {
		array.Panicf("nn.Fans", "shape %v: fans need at least two dimensions", shape)
	}
	receptive := 1
	for _, d := range shape[1 : len(shape)-1] {
		receptive *= d
	}
	return shape[len(shape)-1] * receptive, shape[0] * receptive
}

// FanMode picks which fan He initialisation scales by.
type FanMode int

const (
	// FanIn keeps the variance of the forward pass (PyTorch's default).
	FanIn FanMode = iota
	// FanOut keeps the variance of the backward pass.
	FanOut
)

func (m FanMode) fan(op string, shape []int) float64 {
	in, out := Fans(shape)
	switch m {
	case FanIn:
		return float64(in)
	case FanOut:
		return float64(out)
	}
	array.Panicf(op, "unknown fan mode %d", int(m))
	return 0
}

// Gain returns the recommended gain for a nonlinearity, as PyTorch's
// calculate_gain: 1 for "linear", "conv" and "sigmoid", 5/3 for "tanh",
// sqrt(2) for "relu", sqrt(2/(1+slope²)) for "leaky_relu" (slope is the
// negative slope; PyTorch's default is 0.01), 3/4 for "selu". Another name
// panics with *array.Error.
func Gain(nonlinearity string, slope float64) float64 {
	switch nonlinearity {
	case "linear", "conv", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "sigmoid":
		return 1
	case "tanh":
		return 5.0 / 3
	case "relu":
		return math.Sqrt2
	case "leaky_relu":
		return math.Sqrt(2 / (1 + slope*slope))
	case "selu":
		return 0.75
	}
	array.Panicf("nn.Gain", "unknown nonlinearity %q", nonlinearity)
	return 0
}

// GlorotUniform draws a weight uniformly from [-b, b] with
// b = gain·sqrt(6/(fanIn+fanOut)) (Xavier uniform; PyTorch's
// xavier_uniform_, MLX's glorot_uniform). A nil key draws from the
// random package's global key.
func GlorotUniform(key *array.Array, shape []int, dt array.DType, gain float64) *array.Array {
	in, out := Fans(shape)
	b := gain * math.Sqrt(6/float64(in+out))
	return random.Uniform(key, -b, b, shape, dt)
}

// GlorotNormal draws a weight from a normal distribution of mean 0 and
// standard deviation gain·sqrt(2/(fanIn+fanOut)) (xavier_normal_).
func GlorotNormal(key *array.Array, shape []int, dt array.DType, gain float64) *array.Array {
	in, out := Fans(shape)
	return random.Normal(key, shape, dt, 0, gain*math.Sqrt(2/float64(in+out)))
}

// HeUniform draws a weight uniformly from [-b, b] with
// b = gain·sqrt(3/fan), fan picked by mode (Kaiming uniform; PyTorch's
// kaiming_uniform_ with gain = Gain(nonlinearity, a)).
func HeUniform(key *array.Array, shape []int, dt array.DType, mode FanMode, gain float64) *array.Array {
	b := gain * math.Sqrt(3/mode.fan("nn.HeUniform", shape))
	return random.Uniform(key, -b, b, shape, dt)
}

// HeNormal draws a weight from a normal distribution of mean 0 and
// standard deviation gain/sqrt(fan) (kaiming_normal_).
func HeNormal(key *array.Array, shape []int, dt array.DType, mode FanMode, gain float64) *array.Array {
	return random.Normal(key, shape, dt, 0, gain/math.Sqrt(mode.fan("nn.HeNormal", shape)))
}

// TruncatedNormal draws from a normal distribution of the given mean and
// standard deviation, truncated to [lo, hi] (PyTorch's trunc_normal_,
// whose bounds are absolute values, not standard deviations).
func TruncatedNormal(key *array.Array, shape []int, dt array.DType, mean, std, lo, hi float64) *array.Array {
	if !(std > 0) || !(hi > lo) {
		array.Panicf("nn.TruncatedNormal", "std %v and bounds [%v, %v]: std must be positive and the bounds ordered", std, lo, hi)
	}
	z := random.TruncatedNormal(key, (lo-mean)/std, (hi-mean)/std, shape, dt)
	return ops.AddScalar(ops.MulScalar(z, std), mean)
}
