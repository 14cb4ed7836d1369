package nn

import (
	"math"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// MultiHeadAttention is multi-head attention (MLX's MultiHeadAttention,
// PyTorch's MultiheadAttention with batch_first): queries, keys and
// values are projected, split into Heads heads, attended with one fused
// primitive (ops.ScaledDotProductAttention, scale 1/sqrt(head size)),
// joined and projected again. Inputs are [B, L, dims] (queries) and
// [B, S, dims] (keys and values).
type MultiHeadAttention struct {
	QueryProj *Linear
	KeyProj   *Linear
	ValueProj *Linear
	OutProj   *Linear
	Heads     int
}

// NewMultiHeadAttention returns a float32 attention layer of dims
// features and heads heads (dims a multiple of heads), its projections
// drawn as NewLinear's, with biases when bias is true (PyTorch's default;
// MLX's is none).
func NewMultiHeadAttention(key *array.Array, dims, heads int, bias bool) *MultiHeadAttention {
	const op = "nn.NewMultiHeadAttention"
	checkDims(op, dims, heads)
	if dims%heads != 0 {
		array.Panicf(op, "%d features do not split into %d heads", dims, heads)
	}
	ks := keys(key, 4)
	return &MultiHeadAttention{
		QueryProj: NewLinear(ks[0], dims, dims, bias),
		KeyProj:   NewLinear(ks[1], dims, dims, bias),
		ValueProj: NewLinear(ks[2], dims, dims, bias),
		OutProj:   NewLinear(ks[3], dims, dims, bias),
		Heads:     heads,
	}
}

// Forward attends queries [B, L, dims] to keys and values [B, S, dims].
// mask is nil, a boolean array (true keeps a score) or an additive float
// array broadcastable to [B, heads, L, S]; causal masks later keys
// (key j for query i unless j <= i + S - L).
func (m *MultiHeadAttention) Forward(queries, keys, values, mask *array.Array, causal bool) *array.Array {
	const op = "nn.MultiHeadAttention"
	checkSelf(op, m == nil)
	checkIn(op, queries)
	checkIn(op, keys)
	checkIn(op, values)
	if queries.Ndim() != 3 || keys.Ndim() != 3 || values.Ndim() != 3 || m.Heads <= 0 ||
		keys.Shape()[1] != values.Shape()[1] || keys.Shape()[0] != queries.Shape()[0] || values.Shape()[0] != queries.Shape()[0] {
		array.Panicf(op, "queries %v, keys %v, values %v, %d heads: want [B, L, dims], [B, S, dims], [B, S, dims]",
			queries.Shape(), keys.Shape(), values.Shape(), m.Heads)
	}
	q := m.split(op, m.QueryProj.Forward(queries))
	k := m.split(op, m.KeyProj.Forward(keys))
	v := m.split(op, m.ValueProj.Forward(values))
	scale := 1 / math.Sqrt(float64(q.Shape()[3]))
	o := ops.ScaledDotProductAttention(q, k, v, scale, mask, causal)
	sh := o.Shape()
	o = ops.Reshape(ops.Transpose(o, 0, 2, 1, 3), sh[0], sh[2], sh[1]*sh[3])
	return m.OutProj.Forward(o)
}

// split turns [B, L, dims] into [B, heads, L, dims/heads].
func (m *MultiHeadAttention) split(op string, x *array.Array) *array.Array {
	sh := x.Shape()
	if sh[2]%m.Heads != 0 {
		array.Panicf(op, "projection of shape %v does not split into %d heads", sh, m.Heads)
	}
	return ops.Transpose(ops.Reshape(x, sh[0], sh[1], m.Heads, sh[2]/m.Heads), 0, 2, 1, 3)
}

// TransformerEncoderLayer is PyTorch's TransformerEncoderLayer with
// batch_first: self-attention and a feed-forward block
// Linear2(Dropout(Activation(Linear1(x)))), each added to its input
// through a dropout, with LayerNorms after each sum (post-norm) or,
// with NormFirst, on each block's input (pre-norm, PyTorch's
// norm_first). Parameter names follow MLX's ("attention", "ln1", ...).
type TransformerEncoderLayer struct {
	Attention          *MultiHeadAttention
	LN1, LN2           *LayerNorm
	Linear1, Linear2   *Linear
	Dropout            *Dropout
	Dropout1, Dropout2 *Dropout
	Activation         Fn
	NormFirst          bool
}

// NewTransformerEncoderLayer returns a float32 encoder layer of dims
// features, heads heads and a feed-forward block of hidden features,
// dropout p, ReLU activation, LayerNorm eps 1e-5 and biases everywhere,
// as PyTorch's defaults.
func NewTransformerEncoderLayer(key *array.Array, dims, heads, hidden int, p float64, normFirst bool) *TransformerEncoderLayer {
	checkDims("nn.NewTransformerEncoderLayer", dims, heads, hidden)
	ks := keys(key, 6)
	return &TransformerEncoderLayer{
		Attention:  NewMultiHeadAttention(ks[0], dims, heads, true),
		LN1:        NewLayerNorm(dims, 1e-5, true),
		LN2:        NewLayerNorm(dims, 1e-5, true),
		Linear1:    NewLinear(ks[1], dims, hidden, true),
		Linear2:    NewLinear(ks[2], hidden, dims, true),
		Dropout:    NewDropout(ks[3], p),
		Dropout1:   NewDropout(ks[4], p),
		Dropout2:   NewDropout(ks[5], p),
		Activation: ReLU,
		NormFirst:  normFirst,
	}
}

// residual adds block f to x with LayerNorm ln: x + f(ln(x)) pre-norm,
// ln(x + f(x)) post-norm.
func residual(normFirst bool, ln *LayerNorm, x *array.Array, f func(*array.Array) *array.Array) *array.Array {
	if normFirst {
		return ops.Add(x, f(ln.Forward(x)))
	}
	return ln.Forward(ops.Add(x, f(x)))
}

// feedForward is a transformer layer's feed-forward block before its
// residual dropout: l2(drop(act(l1(x)))), a nil act meaning ReLU.
func feedForward(l1, l2 *Linear, drop *Dropout, act Fn, x *array.Array) *array.Array {
	if act == nil {
		act = ReLU
	}
	return l2.Forward(drop.Forward(act(l1.Forward(x))))
}

// Forward applies the layer to x [B, L, dims]; mask and causal are the
// self-attention's, as in MultiHeadAttention.Forward.
func (t *TransformerEncoderLayer) Forward(x, mask *array.Array, causal bool) *array.Array {
	const op = "nn.TransformerEncoderLayer"
	checkSelf(op, t == nil)
	checkIn(op, x)
	x = residual(t.NormFirst, t.LN1, x, func(y *array.Array) *array.Array {
		return t.Dropout1.Forward(t.Attention.Forward(y, y, y, mask, causal))
	})
	return residual(t.NormFirst, t.LN2, x, func(y *array.Array) *array.Array {
		return t.Dropout2.Forward(feedForward(t.Linear1, t.Linear2, t.Dropout, t.Activation, y))
	})
}

// TransformerDecoderLayer is PyTorch's TransformerDecoderLayer with
// batch_first: self-attention, attention to the encoder's output
// (memory) and a feed-forward block, post- or pre-norm as
// TransformerEncoderLayer.
type TransformerDecoderLayer struct {
	SelfAttention                *MultiHeadAttention
	CrossAttention               *MultiHeadAttention
	LN1, LN2, LN3                *LayerNorm
	Linear1, Linear2             *Linear
	Dropout                      *Dropout
	Dropout1, Dropout2, Dropout3 *Dropout
	Activation                   Fn
	NormFirst                    bool
}

// NewTransformerDecoderLayer returns a float32 decoder layer with
// PyTorch's defaults; see NewTransformerEncoderLayer.
func NewTransformerDecoderLayer(key *array.Array, dims, heads, hidden int, p float64, normFirst bool) *TransformerDecoderLayer {
	checkDims("nn.NewTransformerDecoderLayer", dims, heads, hidden)
	ks := keys(key, 8)
	return &TransformerDecoderLayer{
		SelfAttention:  NewMultiHeadAttention(ks[0], dims, heads, true),
		CrossAttention: NewMultiHeadAttention(ks[1], dims, heads, true),
		LN1:            NewLayerNorm(dims, 1e-5, true),
		LN2:            NewLayerNorm(dims, 1e-5, true),
		LN3:            NewLayerNorm(dims, 1e-5, true),
		Linear1:        NewLinear(ks[2], dims, hidden, true),
		Linear2:        NewLinear(ks[3], hidden, dims, true),
		Dropout:        NewDropout(ks[4], p),
		Dropout1:       NewDropout(ks[5], p),
		Dropout2:       NewDropout(ks[6], p),
		Dropout3:       NewDropout(ks[7], p),
		Activation:     ReLU,
		NormFirst:      normFirst,
	}
}

// Forward applies the layer to x [B, L, dims] with the encoder's output
// memory [B, S, dims]. xMask and causal mask the self-attention,
// memoryMask the attention to memory.
func (t *TransformerDecoderLayer) Forward(x, memory, xMask, memoryMask *array.Array, causal bool) *array.Array {
	const op = "nn.TransformerDecoderLayer"
	checkSelf(op, t == nil)
	checkIn(op, x)
	checkIn(op, memory)
	x = residual(t.NormFirst, t.LN1, x, func(y *array.Array) *array.Array {
		return t.Dropout1.Forward(t.SelfAttention.Forward(y, y, y, xMask, causal))
	})
	x = residual(t.NormFirst, t.LN2, x, func(y *array.Array) *array.Array {
		return t.Dropout2.Forward(t.CrossAttention.Forward(y, memory, memory, memoryMask, false))
	})
	return residual(t.NormFirst, t.LN3, x, func(y *array.Array) *array.Array {
		return t.Dropout3.Forward(feedForward(t.Linear1, t.Linear2, t.Dropout, t.Activation, y))
	})
}
