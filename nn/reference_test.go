package nn_test

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/nn"
	"github.com/fathom-go/fathom/ops"
	"github.com/fathom-go/fathom/random"
)

// refArr is an array of nn/testdata/nn.json.
type refArr struct {
	DType string    `json:"dtype"`
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

type refCase struct {
	Name     string            `json:"name"`
	Kind     string            `json:"kind"`
	Params   map[string]any    `json:"params"`
	Inputs   map[string]refArr `json:"inputs"`
	Expected map[string]refArr `json:"expected"`
	// dt is the dtype the case runs in: its float inputs are converted
	dt array.DType
}

func (r refArr) array() *array.Array {
	switch r.DType {
	case "float64":
		return array.FromSlice(slices.Clone(r.Data), r.Shape...)
	case "int32", "int64":
		v := make([]int32, len(r.Data))
		for i, d := range r.Data {
			v[i] = int32(d)
		}
		return array.FromSlice(v, r.Shape...)
	}
	panic("unknown dtype " + r.DType)
}

func loadCases(t *testing.T) []refCase {
	t.Helper()
	b, err := os.ReadFile("testdata/nn.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []refCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.Cases
}

func (c refCase) in(name string) *array.Array {
	r, ok := c.Inputs[name]
	if !ok {
		return nil
	}
	a := r.array()
	if a.DType().IsFloat() && c.dt != a.DType() {
		a = ops.AsType(a, c.dt)
	}
	return a
}

func (c refCase) num(name string) float64 { return c.Params[name].(float64) }
func (c refCase) int(name string) int     { return int(c.Params[name].(float64)) }
func (c refCase) bool(name string) bool   { return c.Params[name].(bool) }
func (c refCase) str(name string) string  { return c.Params[name].(string) }

func (c refCase) reduction() nn.Reduction {
	return map[string]nn.Reduction{"mean": nn.Mean, "sum": nn.Sum, "none": nn.None, "batchmean": nn.BatchMean}[c.str("reduction")]
}

// compare checks got against the reference within float64 rounding of a
// few operations.
func compare(t *testing.T, what string, got *array.Array, want refArr) {
	t.Helper()
	tol := 1e-9
	if got.DType() == array.Float32 {
		tol = 2e-5
	}
	if !slices.Equal(got.Shape(), want.Shape) {
		t.Errorf("%s: shape %v, want %v", what, got.Shape(), want.Shape)
		return
	}
	g := f64(t, got)
	for i, w := range want.Data {
		if math.Abs(g[i]-w) > tol+tol*math.Abs(w) {
			t.Errorf("%s: [%d] = %.12g, want %.12g", what, i, g[i], w)
			return
		}
	}
}

// set replaces the parameters of m with the case's inputs of the same
// names, checking the model has exactly those parameters.
func set(t *testing.T, c refCase, m any, skip ...string) {
	t.Helper()
	ps := map[string]*array.Array{}
	for n := range c.Inputs {
		if !slices.Contains(skip, n) {
			ps[n] = c.in(n)
		}
	}
	if err := nn.AsType(m, c.dt); err != nil {
		t.Fatal(err)
	}
	if err := nn.Update(m, ps); err != nil {
		t.Fatalf("%s: %v", c.Name, err)
	}
	n := 0
	for _, a := range nn.Parameters(m) {
		// Dropout keys are the only integer arrays
		if a.DType().IsFloat() {
			n++
		}
	}
	if n != len(ps) {
		t.Fatalf("%s: the model has parameters %q, the case %d", c.Name, sortedKeys(nn.Parameters(m)), len(ps))
	}
}

func ints2(v int) [2]int { return [2]int{v, v} }
func ints3(v int) [3]int { return [3]int{v, v, v} }

// refLayer builds the layer of a convolution or pooling case; its
// parameters are set by the caller.
func refLayer(c refCase) nn.Layer {
	k := random.Key(0)
	w := c.in("weight")
	var cin, cout int
	if w != nil {
		cout, cin = w.Shape()[0], w.Shape()[w.Ndim()-1]
	}
	p := func(n string) int { return c.int(n) }
	switch c.Kind {
	case "conv1d":
		l := nn.NewConv1D(k, cin*p("groups"), cout, w.Shape()[1], p("groups"), true)
		l.Stride, l.Padding, l.Dilation = p("stride"), p("padding"), p("dilation")
		return l
	case "conv2d":
		l := nn.NewConv2D(k, cin*p("groups"), cout, [2]int{w.Shape()[1], w.Shape()[2]}, p("groups"), true)
		l.Stride, l.Padding, l.Dilation = ints2(p("stride")), ints2(p("padding")), ints2(p("dilation"))
		return l
	case "conv3d":
		l := nn.NewConv3D(k, cin*p("groups"), cout, [3]int{w.Shape()[1], w.Shape()[2], w.Shape()[3]}, p("groups"), true)
		l.Stride, l.Padding, l.Dilation = ints3(p("stride")), ints3(p("padding")), ints3(p("dilation"))
		return l
	case "conv_transpose1d":
		l := nn.NewConvTranspose1D(k, cin, cout, w.Shape()[1], 1, true)
		l.Stride, l.Padding, l.Dilation, l.OutputPadding = p("stride"), p("padding"), p("dilation"), p("output_padding")
		return l
	case "conv_transpose2d":
		l := nn.NewConvTranspose2D(k, cin, cout, [2]int{w.Shape()[1], w.Shape()[2]}, 1, true)
		l.Stride, l.Padding, l.Dilation, l.OutputPadding = ints2(p("stride")), ints2(p("padding")), ints2(p("dilation")), ints2(p("output_padding"))
		return l
	case "conv_transpose3d":
		l := nn.NewConvTranspose3D(k, cin, cout, [3]int{w.Shape()[1], w.Shape()[2], w.Shape()[3]}, 1, true)
		l.Stride, l.Padding, l.Dilation, l.OutputPadding = ints3(p("stride")), ints3(p("padding")), ints3(p("dilation")), ints3(p("output_padding"))
		return l
	case "maxpool1d":
		return nn.MaxPool1D{Kernel: p("kernel"), Stride: p("stride"), Padding: p("padding")}
	case "maxpool2d":
		return nn.MaxPool2D{Kernel: ints2(p("kernel")), Stride: ints2(p("stride")), Padding: ints2(p("padding"))}
	case "maxpool3d":
		return nn.MaxPool3D{Kernel: ints3(p("kernel")), Stride: ints3(p("stride")), Padding: ints3(p("padding"))}
	case "avgpool1d":
		return nn.AvgPool1D{Kernel: p("kernel"), Stride: p("stride"), Padding: p("padding")}
	case "avgpool2d":
		return nn.AvgPool2D{Kernel: ints2(p("kernel")), Stride: ints2(p("stride")), Padding: ints2(p("padding"))}
	case "avgpool3d":
		return nn.AvgPool3D{Kernel: ints3(p("kernel")), Stride: ints3(p("stride")), Padding: ints3(p("padding"))}
	}
	return nil
}

var activations = map[string]func(*array.Array) *array.Array{
	"relu":        nn.ReLU,
	"leaky_relu":  func(x *array.Array) *array.Array { return nn.LeakyReLU(x, 0.2) },
	"elu":         func(x *array.Array) *array.Array { return nn.ELU(x, 0.7) },
	"gelu":        nn.GELU,
	"gelu_tanh":   nn.GELUTanh,
	"silu":        nn.SiLU,
	"mish":        nn.Mish,
	"softplus":    nn.Softplus,
	"sigmoid":     nn.Sigmoid,
	"tanh":        nn.Tanh,
	"softmax":     func(x *array.Array) *array.Array { return nn.Softmax(x, -1) },
	"log_softmax": func(x *array.Array) *array.Array { return nn.LogSoftmax(x, -1) },
	"softmax0":    func(x *array.Array) *array.Array { return nn.Softmax(x, 0) },
}

// refLoss computes the loss of a loss case.
func refLoss(c refCase) *array.Array {
	r := c.reduction()
	switch c.Kind {
	case "cross_entropy":
		return nn.CrossEntropyLoss(c.in("logits"), c.in("targets"), c.in("weights"), c.num("smoothing"), r)
	case "nll":
		return nn.NLLLoss(c.in("logp"), c.in("targets"), c.in("weights"), r)
	case "bce_with_logits":
		return nn.BCEWithLogitsLoss(c.in("logits"), c.in("targets"), c.in("weights"), c.in("pos_weight"), r)
	case "mse":
		return nn.MSELoss(c.in("pred"), c.in("target"), r)
	case "l1":
		return nn.L1Loss(c.in("pred"), c.in("target"), r)
	case "smooth_l1":
		return nn.SmoothL1Loss(c.in("pred"), c.in("target"), c.num("beta"), r)
	case "huber":
		return nn.HuberLoss(c.in("pred"), c.in("target"), c.num("delta"), r)
	case "kl_div":
		return nn.KLDivLoss(c.in("input"), c.in("target"), c.bool("log_target"), r)
	}
	return nil
}

// TestReference runs every layer, activation and loss on the inputs of
// nn/testdata/nn.json (PyTorch 1.13 and numpy) and compares the results,
// in float64 and in float32.
func TestReference(t *testing.T) {
	k := random.Key(0)
	var all []refCase
	for _, dt := range []array.DType{array.Float64, array.Float32} {
		for _, c := range loadCases(t) {
			c.dt = dt
			all = append(all, c)
		}
	}
	for _, c := range all {
		t.Run(c.Name+" "+c.dt.String(), func(t *testing.T) {
			want := c.Expected["y"]
			switch c.Kind {
			case "linear":
				l := nn.NewLinear(k, 4, 5, c.in("bias") != nil)
				set(t, c, l, "x")
				compare(t, c.Name, l.Forward(c.in("x")), want)
			case "bilinear":
				l := nn.NewBilinear(k, 4, 2, 5, true)
				set(t, c, l, "x1", "x2")
				compare(t, c.Name, l.Forward(c.in("x1"), c.in("x2")), want)
			case "embedding":
				l := nn.NewEmbedding(k, 6, 4)
				set(t, c, l, "idx")
				compare(t, c.Name, l.Forward(c.in("idx")), want)
			case "layernorm":
				l := nn.NewLayerNorm(6, c.num("eps"), c.in("weight") != nil)
				set(t, c, l, "x")
				compare(t, c.Name, l.Forward(c.in("x")), want)
			case "rmsnorm":
				l := nn.NewRMSNorm(6, c.num("eps"))
				set(t, c, l, "x")
				compare(t, c.Name, l.Forward(c.in("x")), want)
			case "groupnorm":
				l := nn.NewGroupNorm(c.int("groups"), 6, c.num("eps"), true)
				set(t, c, l, "x")
				compare(t, c.Name, l.Forward(c.in("x")), want)
			case "batchnorm":
				l := nn.NewBatchNorm(4, c.num("eps"), c.num("momentum"), true, true)
				set(t, c, l, "x")
				if err := nn.Train(l, c.bool("training")); err != nil {
					t.Fatal(err)
				}
				compare(t, c.Name, l.Forward(c.in("x")), want)
				compare(t, c.Name+" running mean", l.RunningMean, c.Expected["running_mean"])
				compare(t, c.Name+" running var", l.RunningVar, c.Expected["running_var"])
			case "activation":
				compare(t, c.Name, activations[c.str("fn")](c.in("x")), want)
			case "mha":
				l := nn.NewMultiHeadAttention(k, 8, c.int("heads"), true)
				set(t, c, l, "q", "kv")
				compare(t, c.Name, l.Forward(c.in("q"), c.in("kv"), c.in("kv"), nil, c.bool("causal")), want)
			case "encoder":
				l := nn.NewTransformerEncoderLayer(k, 8, c.int("heads"), c.int("hidden"), 0.1, c.bool("norm_first"))
				set(t, c, l, "x")
				if err := nn.Train(l, false); err != nil {
					t.Fatal(err)
				}
				compare(t, c.Name, l.Forward(c.in("x"), nil, false), want)
			case "decoder":
				l := nn.NewTransformerDecoderLayer(k, 8, c.int("heads"), c.int("hidden"), 0.1, c.bool("norm_first"))
				set(t, c, l, "x", "memory")
				if err := nn.Train(l, false); err != nil {
					t.Fatal(err)
				}
				compare(t, c.Name, l.Forward(c.in("x"), c.in("memory"), nil, nil, true), want)
			case "rope":
				l := nn.RoPE{Dims: c.int("dims"), Traditional: c.bool("traditional"), Base: c.num("base"), Scale: c.num("scale")}
				compare(t, c.Name, l.Forward(c.in("x")), want)
				compare(t, c.Name+" at 3", l.ForwardAt(c.in("x"), 3), c.Expected["y_at3"])
			default:
				if l := refLayer(c); l != nil {
					if len(nn.Parameters(l)) > 0 {
						set(t, c, l, "x")
					}
					compare(t, c.Name, l.Forward(c.in("x")), want)
					return
				}
				if y := refLoss(c); y != nil {
					compare(t, c.Name, y, want)
					return
				}
				t.Fatalf("unknown kind %q", c.Kind)
			}
		})
	}
}
