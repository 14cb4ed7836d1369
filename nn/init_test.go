package nn_test

import (
	"math"
	"slices"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/nn"
	"github.com/fathom-go/fathom/random"
)

func TestFans(t *testing.T) {
	for _, c := range []struct {
		shape   []int
		in, out int
	}{
		{[]int{5, 3}, 3, 5},              // Linear [out, in]
		{[]int{8, 3, 3, 4}, 36, 72},      // Conv2D [out, kH, kW, in]
		{[]int{8, 5, 2}, 10, 40},         // Conv1D [out, k, in]
		{[]int{6, 2, 3, 4, 5}, 120, 144}, // Conv3D
	} {
		in, out := nn.Fans(c.shape)
		if in != c.in || out != c.out {
			t.Errorf("Fans(%v) = %d, %d, want %d, %d", c.shape, in, out, c.in, c.out)
		}
	}
	if err := array.Try(func() { nn.Fans([]int{4}) }); !hasErr(err, "nn.Fans", "[4]") {
		t.Errorf("Fans of a vector: %v", err)
	}
}

func stats(t *testing.T, a *array.Array) (mean, std, lo, hi float64) {
	v := f64(t, a)
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range v {
		mean += x
		lo, hi = min(lo, x), max(hi, x)
	}
	mean /= float64(len(v))
	for _, x := range v {
		std += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(std / float64(len(v))), lo, hi
}

// TestInitialisers checks each initialiser's bound or standard deviation
// on 40000 draws (standard errors below 1%), and that a key fixes the
// draw.
func TestInitialisers(t *testing.T) {
	shape := []int{200, 50, 4} // channels-last [out, k, in]: fan-in 4·50, fan-out 200·50
	k := random.Key(4)
	uniformStd := func(b float64) float64 { return b / math.Sqrt(3) }
	cases := []struct {
		name   string
		a      *array.Array
		std    float64
		lo, hi float64 // bounds, 0 for none
	}{
		{"GlorotUniform", nn.GlorotUniform(k, shape, array.Float32, 2), uniformStd(2 * math.Sqrt(6.0/10200)), -2 * math.Sqrt(6.0/10200), 2 * math.Sqrt(6.0/10200)},
		{"GlorotNormal", nn.GlorotNormal(k, shape, array.Float32, 1), math.Sqrt(2.0 / 10200), 0, 0},
		{"HeUniform fan in", nn.HeUniform(k, shape, array.Float64, nn.FanIn, nn.Gain("relu", 0)), uniformStd(math.Sqrt2 * math.Sqrt(3.0/200)), -math.Sqrt2 * math.Sqrt(3.0/200), math.Sqrt2 * math.Sqrt(3.0/200)},
		{"HeNormal fan out", nn.HeNormal(k, shape, array.Float32, nn.FanOut, 1), 1 / math.Sqrt(10000), 0, 0},
		// a standard normal truncated to ±2 has standard deviation 0.8796
		{"TruncatedNormal", nn.TruncatedNormal(k, shape, array.Float32, 1, 0.5, 0, 2), 0.5 * 0.8796, 0, 2},
	}
	for _, c := range cases {
		if !slices.Equal(c.a.Shape(), shape) {
			t.Errorf("%s: shape %v", c.name, c.a.Shape())
		}
		mean, std, lo, hi := stats(t, c.a)
		wantMean := (c.lo + c.hi) / 2
		if math.Abs(mean-wantMean) > 0.03*c.std || math.Abs(std-c.std) > 0.02*c.std {
			t.Errorf("%s: mean %.5g std %.5g, want %.5g and %.5g", c.name, mean, std, wantMean, c.std)
		}
		if c.lo != c.hi && (lo < c.lo || hi > c.hi) {
			t.Errorf("%s: draws in [%v, %v], outside [%v, %v]", c.name, lo, hi, c.lo, c.hi)
		}
	}
	a, b := f64(t, nn.HeNormal(random.Key(1), []int{3, 4}, array.Float32, nn.FanIn, 1)), f64(t, nn.HeNormal(random.Key(1), []int{3, 4}, array.Float32, nn.FanIn, 1))
	if !slices.Equal(a, b) {
		t.Error("the same key drew different weights")
	}
	for name, g := range map[string]float64{"linear": 1, "tanh": 5.0 / 3, "relu": math.Sqrt2, "selu": 0.75} {
		if got := nn.Gain(name, 0); got != g {
			t.Errorf("Gain(%q) = %v, want %v", name, got, g)
		}
	}
	if got, want := nn.Gain("leaky_relu", 0.01), math.Sqrt(2/(1+1e-4)); got != want {
		t.Errorf("Gain(leaky_relu, 0.01) = %v, want %v", got, want)
	}
}

// TestLayerInitialisation checks the layers draw as PyTorch does:
// uniform in ±1/sqrt(fan-in).
func TestLayerInitialisation(t *testing.T) {
	k := random.Key(8)
	for _, c := range []struct {
		name string
		w, b *array.Array
		fan  int
	}{
		{"Linear", nn.NewLinear(k, 300, 40, true).Weight, nil, 300},
		{"Conv2D", nn.NewConv2D(k, 8, 40, [2]int{3, 3}, 2, true).Weight, nil, 36},
		{"ConvTranspose1D", nn.NewConvTranspose1D(k, 8, 40, 5, 1, true).Weight, nil, 200},
	} {
		b := 1 / math.Sqrt(float64(c.fan))
		_, std, lo, hi := stats(t, c.w)
		if lo < -b || hi > b || math.Abs(std-b/math.Sqrt(3)) > 0.05*b {
			t.Errorf("%s: draws in [%v, %v] with std %v, want ±%v and %v", c.name, lo, hi, std, b, b/math.Sqrt(3))
		}
	}
}
