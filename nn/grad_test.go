package nn_test

import (
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/nn"
	"github.com/fathom-go/fathom/ops"
	"github.com/fathom-go/fathom/random"
)

// TestLayerGradients checks every layer's gradients, with respect to its
// parameters and its input, against finite differences in float64.
func TestLayerGradients(t *testing.T) {
	k := random.Key(5)
	bn := nn.NewBatchNorm(3, 1e-5, 0.1, true, true)
	bnEval := nn.NewBatchNorm(3, 1e-5, 0.1, true, true)
	bnEval.Training = false
	c2 := nn.NewConv2D(k, 4, 6, [2]int{3, 2}, 2, true)
	c2.Stride, c2.Padding, c2.Dilation = [2]int{2, 1}, [2]int{1, 1}, [2]int{1, 2}
	ct2 := nn.NewConvTranspose2D(k, 3, 2, [2]int{2, 3}, 1, true)
	ct2.Stride, ct2.Padding, ct2.OutputPadding = [2]int{2, 2}, [2]int{1, 0}, [2]int{1, 1}
	ct1 := nn.NewConvTranspose1D(k, 3, 2, 3, 1, false)
	ct1.Stride = 2
	cases := []struct {
		name string
		l    nn.Layer
		x    *array.Array
	}{
		{"Linear", nn.NewLinear(k, 4, 3, true), randn(1, 2, 4)},
		{"Linear without bias", nn.NewLinear(k, 4, 3, false), randn(1, 5, 4)},
		{"Conv1D", nn.NewConv1D(k, 3, 4, 3, 1, true), randn(1, 2, 6, 3)},
		{"Conv2D", c2, randn(1, 2, 5, 5, 4)},
		{"Conv3D", nn.NewConv3D(k, 2, 3, [3]int{2, 2, 2}, 1, true), randn(1, 1, 3, 3, 3, 2)},
		{"ConvTranspose1D", ct1, randn(1, 2, 4, 3)},
		{"ConvTranspose2D", ct2, randn(1, 1, 3, 3, 3)},
		{"ConvTranspose3D", nn.NewConvTranspose3D(k, 2, 2, [3]int{2, 2, 2}, 1, true), randn(1, 1, 2, 2, 3, 2)},
		{"MaxPool1D", nn.MaxPool1D{Kernel: 3, Stride: 2, Padding: 1}, randn(1, 2, 7, 2)},
		{"MaxPool2D", nn.MaxPool2D{Kernel: [2]int{2, 2}}, randn(1, 2, 4, 4, 2)},
		{"MaxPool3D", nn.MaxPool3D{Kernel: [3]int{2, 2, 2}}, randn(1, 1, 2, 4, 4, 2)},
		{"AvgPool1D", nn.AvgPool1D{Kernel: 3, Stride: 2, Padding: 1}, randn(1, 2, 7, 2)},
		{"AvgPool2D", nn.AvgPool2D{Kernel: [2]int{3, 2}, Stride: [2]int{1, 2}}, randn(1, 2, 4, 4, 2)},
		{"AvgPool3D", nn.AvgPool3D{Kernel: [3]int{2, 2, 2}}, randn(1, 1, 2, 4, 4, 2)},
		{"LayerNorm", nn.NewLayerNorm(5, 1e-5, true), randn(1, 3, 5)},
		{"RMSNorm", nn.NewRMSNorm(5, 1e-6), randn(1, 3, 5)},
		{"GroupNorm", nn.NewGroupNorm(2, 4, 1e-5, true), randn(1, 2, 3, 4)},
		{"BatchNorm training", bn, randn(1, 4, 2, 3)},
		{"BatchNorm evaluation", bnEval, randn(1, 4, 2, 3)},
		{"Sequential", nn.NewSequential(nn.NewLinear(k, 3, 4, true), nn.Fn(nn.GELU), nn.NewLinear(k, 4, 2, true)), randn(1, 3, 3)},
		{"RoPE", nn.RoPE{Dims: 4, Base: 10000, Scale: 1}, randn(1, 2, 3, 6)},
	}
	for _, c := range cases {
		to64(t, c.l)
		// random running statistics, so evaluation mode is not the
		// identity map
		if b, ok := c.l.(*nn.BatchNorm); ok {
			b.RunningMean, b.RunningVar = randn(8, 3), ops.AddScalar(ops.Abs(randn(9, 3)), 0.5)
		}
		checkLayer(t, c.name, c.l, c.x)
	}
}

func TestActivationGradients(t *testing.T) {
	// away from the kinks of ReLU and friends at 0
	x := ops.Add(randn(3, 4, 5), ops.MulScalar(ops.Sign(randn(4, 4, 5)), 0.1))
	for name, f := range activations {
		checkInputGrad(t, name, f, x)
	}
}

func TestAttentionGradients(t *testing.T) {
	k := random.Key(6)
	mha := nn.NewMultiHeadAttention(k, 4, 2, true)
	to64(t, mha)
	q, kv := randn(1, 2, 3, 4), randn(2, 2, 5, 4)
	loss := weighted2(mha, q, kv)
	checkModelGrads(t, "MultiHeadAttention", mha, loss, q, kv)
	causal := func(m *nn.MultiHeadAttention, in ...*array.Array) *array.Array {
		return ops.Sum(ops.Mul(m.Forward(in[0], in[0], in[0], nil, true), in[1]))
	}
	checkModelGrads(t, "MultiHeadAttention causal", mha, causal, q, randn(3, 2, 3, 4))
	for _, normFirst := range []bool{false, true} {
		enc := nn.NewTransformerEncoderLayer(k, 4, 2, 6, 0.1, normFirst)
		to64(t, enc)
		if err := nn.Train(enc, false); err != nil {
			t.Fatal(err)
		}
		x := randn(4, 1, 3, 4)
		r := randn(5, 1, 3, 4)
		checkModelGrads(t, "TransformerEncoderLayer", enc, func(m *nn.TransformerEncoderLayer, in ...*array.Array) *array.Array {
			return ops.Sum(ops.Mul(m.Forward(in[0], nil, false), r))
		}, x)
		checkInputGrad(t, "TransformerEncoderLayer", func(x *array.Array) *array.Array { return enc.Forward(x, nil, true) }, x)
		dec := nn.NewTransformerDecoderLayer(k, 4, 2, 6, 0.1, normFirst)
		to64(t, dec)
		if err := nn.Train(dec, false); err != nil {
			t.Fatal(err)
		}
		mem := randn(6, 1, 2, 4)
		checkModelGrads(t, "TransformerDecoderLayer", dec, func(m *nn.TransformerDecoderLayer, in ...*array.Array) *array.Array {
			return ops.Sum(ops.Mul(m.Forward(in[0], in[1], nil, nil, true), r))
		}, x, mem)
	}
}

func weighted2(m *nn.MultiHeadAttention, q, kv *array.Array) func(m *nn.MultiHeadAttention, in ...*array.Array) *array.Array {
	r := randn(11, m.Forward(q, kv, kv, nil, false).Shape()...)
	return func(m *nn.MultiHeadAttention, in ...*array.Array) *array.Array {
		return ops.Sum(ops.Mul(m.Forward(in[0], in[1], in[1], nil, false), r))
	}
}

func TestBilinearAndEmbeddingGradients(t *testing.T) {
	k := random.Key(7)
	b := nn.NewBilinear(k, 3, 2, 4, true)
	to64(t, b)
	x1, x2 := randn(1, 2, 5, 3), randn(2, 2, 5, 2)
	r := randn(3, 2, 5, 4)
	checkModelGrads(t, "Bilinear", b, func(b *nn.Bilinear, in ...*array.Array) *array.Array {
		return ops.Sum(ops.Mul(b.Forward(in[0], in[1]), r))
	}, x1, x2)
	g := graph.Grad(func(in ...*array.Array) *array.Array { return ops.Sum(ops.Mul(b.Forward(in[0], in[1]), r)) }, 0, 1)
	gs := g(x1, x2)
	fdCheck(t, "Bilinear inputs", func(xs []*array.Array) *array.Array {
		return ops.Sum(ops.Mul(b.Forward(xs[0], xs[1]), r))
	}, []*array.Array{x1, x2}, gs)
	e := nn.NewEmbedding(k, 5, 3)
	to64(t, e)
	idx := array.FromSlice([]int32{4, 0, 4, 2}, 2, 2)
	checkModelGrads(t, "Embedding", e, weighted[*nn.Embedding]([]int{2, 2, 3}), idx)
}

func TestLossGradients(t *testing.T) {
	logits, probs := randn(1, 4, 5), nn.Softmax(randn(2, 4, 5), -1)
	cls := array.FromSlice([]int32{1, 0, 4, 1})
	w := ops.AddScalar(ops.Abs(randn(3, 5)), 0.1)
	p, q := randn(4, 3, 4), randn(5, 3, 4)
	tg := random.Uniform(random.Key(6), 0, 1, []int{3, 4}, array.Float64)
	cases := map[string]func(x *array.Array) *array.Array{
		"CrossEntropyLoss classes": func(x *array.Array) *array.Array { return nn.CrossEntropyLoss(x, cls, w, 0.1, nn.Mean) },
		"CrossEntropyLoss probabilities": func(x *array.Array) *array.Array {
			return nn.CrossEntropyLoss(x, probs, w, 0.2, nn.Sum)
		},
		"NLLLoss":      func(x *array.Array) *array.Array { return nn.NLLLoss(nn.LogSoftmax(x, -1), cls, w, nn.Mean) },
		"MSELoss":      func(x *array.Array) *array.Array { return nn.MSELoss(x, q, nn.Mean) },
		"L1Loss":       func(x *array.Array) *array.Array { return nn.L1Loss(x, q, nn.Sum) },
		"SmoothL1Loss": func(x *array.Array) *array.Array { return nn.SmoothL1Loss(x, q, 0.5, nn.Mean) },
		"HuberLoss":    func(x *array.Array) *array.Array { return nn.HuberLoss(x, q, 0.5, nn.Mean) },
		"BCEWithLogitsLoss": func(x *array.Array) *array.Array {
			return nn.BCEWithLogitsLoss(x, tg, nil, array.FromSlice([]float64{1, 2, 0.5, 3}), nn.Mean)
		},
		"KLDivLoss": func(x *array.Array) *array.Array {
			return nn.KLDivLoss(x, nn.Softmax(q, -1), false, nn.BatchMean)
		},
	}
	for name, f := range cases {
		x := p
		if name == "CrossEntropyLoss classes" || name == "CrossEntropyLoss probabilities" || name == "NLLLoss" {
			x = logits
		}
		g := graph.Grad(func(in ...*array.Array) *array.Array { return f(in[0]) })(x)
		fdCheck(t, name, func(xs []*array.Array) *array.Array { return f(xs[0]) }, []*array.Array{x}, g)
	}
}
