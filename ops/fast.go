package ops

import (
	"math"
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
)

// The fast family (MLX's mx.fast): layer and RMS normalisation, rotary
// position embeddings and scaled dot-product attention.

// fastFloat rejects an x that is not a real float array.
func fastFloat(op string, x *array.Array) {
	if !x.DType().IsFloat() {
		array.Panicf(op, "shape %v: dtype %v is not a float dtype", x.Shape(), x.DType())
	}
}

// normAffine checks a norm's weight or bias (nil, or a float vector as
// long as x's last axis) and casts it to x's dtype.
func normAffine(op, what string, x, w *array.Array) *array.Array {
	if w == nil {
		return nil
	}
	n := x.Shape()[x.Ndim()-1]
	if w.Ndim() != 1 || w.Shape()[0] != n {
		array.Panicf(op, "x shape %v: %s shape %v, want [%d]", x.Shape(), what, w.Shape(), n)
	}
	if !w.DType().IsFloat() {
		array.Panicf(op, "%s shape %v: dtype %v is not a float dtype", what, w.Shape(), w.DType())
	}
	return AsType(w, x.DType())
}

func normCheck(op string, x *array.Array, eps float64) {
	requireNonNil(op, x)
	fastFloat(op, x)
	if x.Ndim() == 0 {
		array.Panicf(op, "x shape %v: want at least one dimension", x.Shape())
	}
	if !(eps >= 0) || math.IsInf(eps, 1) {
		array.Panicf(op, "x shape %v: eps %v is not a finite non-negative number", x.Shape(), eps)
	}
}

// LayerNorm normalises x over its last axis to zero mean and unit
// variance, (x - mean) / sqrt(var + eps), then scales by weight and adds
// bias (each nil for none, else a vector as long as the last axis, cast
// to x's dtype), as MLX's mx.fast.layer_norm. It is one primitive with
// its own kernels: one pass over each row in the cache. float16 and
// bfloat16 compute in float32; the result has x's dtype.
func LayerNorm(x, weight, bias *array.Array, eps float64) *array.Array {
	const op = "ops.LayerNorm"
	normCheck(op, x, eps)
	w, b := normAffine(op, "weight", x, weight), normAffine(op, "bias", x, bias)
	return normNode(&normPrim{Eps: eps, HasW: w != nil, HasB: b != nil}, x, w, b)
}

// RMSNorm divides x by the root mean square of its last axis,
// x / sqrt(mean(x²) + eps), then scales by weight (nil for none, else a
// vector as long as the last axis, cast to x's dtype), as MLX's
// mx.fast.rms_norm. float16 and bfloat16 compute in float32.
func RMSNorm(x, weight *array.Array, eps float64) *array.Array {
	const op = "ops.RMSNorm"
	normCheck(op, x, eps)
	w := normAffine(op, "weight", x, weight)
	return normNode(&normPrim{RMS: true, Eps: eps, HasW: w != nil}, x, w, nil)
}

func normNode(p *normPrim, x, w, b *array.Array) *array.Array {
	in := []*array.Array{x}
	for _, a := range []*array.Array{w, b} {
		if a != nil {
			in = append(in, a)
		}
	}
	return node(x.Shape(), x.DType(), p, in...)
}

// normPrim is LayerNorm (RMS false) or RMSNorm over the last axis of its
// first input; the weight and the bias follow when it has them.
type normPrim struct {
	RMS        bool
	Eps        float64
	HasW, HasB bool
}

func (p *normPrim) Name() string {
	if p.RMS {
		return "RMSNorm"
	}
	return "LayerNorm"
}
func (p *normPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *normPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	w, b := p.affine(in)
	var wv, bv metal.View
	if w != nil {
		wv = viewOf(w)
	}
	if b != nil {
		bv = viewOf(b)
	}
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		if p.RMS {
			return metal.RMSNorm(o, viewOf(in[0]), wv, p.Eps)
		}
		return metal.LayerNorm(o, viewOf(in[0]), wv, bv, p.Eps)
	})
}
func (p *normPrim) evalCPU(in, out []*array.Array) error {
	o := alloc(out[0])
	w, b := p.affine(in)
	var wb, bb cpu.Buf
	if w != nil {
		wb = bufOf(w)
	}
	if b != nil {
		bb = bufOf(b)
	}
	if p.RMS {
		return cpu.RMSNorm(o, bufOf(in[0]), wb, p.Eps)
	}
	return cpu.LayerNorm(o, bufOf(in[0]), wb, bb, p.Eps)
}
func (p *normPrim) Equivalent(o array.Primitive) bool               { return sameParams(p, o) }
func (p *normPrim) OutputShapes(in []*array.Array) ([][]int, error) { return sameShape(in) }

// affineAt returns the input positions of the weight and the bias, -1
// where there is none. The derivative rules go by position: the same
// array may be passed as both.
func (p *normPrim) affineAt() (wi, bi int) {
	wi, bi = -1, -1
	i := 1
	if p.HasW {
		wi, i = i, i+1
	}
	if p.HasB {
		bi = i
	}
	return wi, bi
}

// affine returns the weight and bias inputs, nil where there are none.
func (p *normPrim) affine(in []*array.Array) (w, b *array.Array) {
	wi, bi := p.affineAt()
	if wi > 0 {
		w = in[wi]
	}
	if bi > 0 {
		b = in[bi]
	}
	return w, b
}

// normParts returns x in its compute dtype normalised (xhat) and the
// reciprocal r of its root mean square or standard deviation, kept as
// an axis of size 1.
func (p *normPrim) normParts(x *array.Array) (xhat, r *array.Array) {
	xf := AsType(x, workDType(x.DType()))
	if !p.RMS {
		xf = Sub(xf, KeepDims(Mean, xf, -1))
	}
	r = Rsqrt(AddScalar(KeepDims(Mean, Square(xf), -1), p.Eps))
	return Mul(xf, r), r
}

// normalJac is the product of the normalisation's Jacobian (symmetric)
// with v: r·(v - mean(v) - xhat·mean(v·xhat)), without the mean of v for
// RMSNorm.
func (p *normPrim) normalJac(xhat, r, v *array.Array) *array.Array {
	d := Sub(v, Mul(xhat, KeepDims(Mean, Mul(v, xhat), -1)))
	if !p.RMS {
		d = Sub(d, KeepDims(Mean, v, -1))
	}
	return Mul(r, d)
}

// VJP is the normalisation's Jacobian applied to g·w for x, and the
// sums over the rows of g·xhat and g for the weight and the bias.
func (p *normPrim) VJP(in, _, cots []*array.Array, argnums []int) []*array.Array {
	x := in[0]
	w, _ := p.affine(in)
	wi, bi := p.affineAt()
	cd := workDType(x.DType())
	g := AsType(cots[0], cd)
	xhat, r := p.normParts(x)
	n := x.Shape()[x.Ndim()-1]
	res := make([]*array.Array, len(argnums))
	for i, a := range argnums {
		switch {
		case a == 0:
			gw := g
			if w != nil {
				gw = Mul(g, AsType(w, cd))
			}
			res[i] = AsType(p.normalJac(xhat, r, gw), x.DType())
		case a == wi:
			res[i] = AsType(sumToShape(Mul(g, xhat), []int{n}), in[a].DType())
		case a == bi:
			res[i] = AsType(sumToShape(g, []int{n}), in[a].DType())
		}
	}
	return res
}

// JVP is the Jacobian applied to tx, times w, plus xhat·tw and tb.
func (p *normPrim) JVP(in, _, tans []*array.Array, argnums []int) []*array.Array {
	x := in[0]
	w, _ := p.affine(in)
	wi, bi := p.affineAt()
	cd := workDType(x.DType())
	xhat, r := p.normParts(x)
	var t *array.Array
	for i, a := range argnums {
		ti := AsType(tans[i], cd)
		switch {
		case a == 0:
			d := p.normalJac(xhat, r, ti)
			if w != nil {
				d = Mul(d, AsType(w, cd))
			}
			t = addTangents(t, d)
		case a == wi:
			t = addTangents(t, Mul(xhat, ti))
		case a == bi:
			t = addTangents(t, BroadcastTo(ti, x.Shape()...))
		}
	}
	return []*array.Array{AsType(t, x.DType())}
}

// Vmap normalises the batch, moved to axis 0 (x broadcast to it when
// only the weight or bias is batched); a batched weight or bias is
// applied after the normalisation, along the batch, and so is the bias
// when the weight is, since the weight scales before the bias adds.
func (p *normPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	x := batchFront(in[0], axes[0])
	nb := indexBatchSize(in, axes)
	if axes[0] < 0 {
		x = BroadcastTo(ExpandDims(x, 0), append([]int{nb}, x.Shape()...)...)
	}
	wi, bi := p.affineAt()
	wAfter := wi > 0 && axes[wi] >= 0
	q := &normPrim{RMS: p.RMS, Eps: p.Eps}
	inner := []*array.Array{x}
	var after [2]*array.Array // the weight and the bias applied after q
	for i, at := range []int{wi, bi} {
		switch {
		case at < 0:
		case axes[at] < 0 && i == 1 && wAfter:
			after[i] = in[at] // broadcasts along the last axis
		case axes[at] < 0:
			inner = append(inner, in[at])
			q.HasW, q.HasB = q.HasW || i == 0, q.HasB || i == 1
		default:
			// [nb, n] broadcast against x's [nb, ..., n]
			v := batchFront(in[at], axes[at])
			shape := make([]int, x.Ndim())
			for j := range shape {
				shape[j] = 1
			}
			shape[0], shape[len(shape)-1] = nb, v.Shape()[1]
			after[i] = Reshape(v, shape...)
		}
	}
	y := node(x.Shape(), x.DType(), q, inner...)
	if after[0] != nil {
		y = Mul(y, after[0])
	}
	if after[1] != nil {
		y = Add(y, after[1])
	}
	return []*array.Array{y}, []int{0}
}

// RoPE applies rotary position embeddings to x, as MLX's mx.fast.rope:
// the first dims features of the last axis are rotated in pairs, pair i
// by the angle (offset + p)·scale·base^(-2i/dims) at position p along
// axis -2; features past dims are passed through. traditional pairs
// neighbours (x[2i], x[2i+1]); otherwise a feature pairs with the one
// dims/2 after it (x[i], x[i+dims/2]). dims must be even and at most the
// last axis. float16 and bfloat16 compute in float32.
func RoPE(x *array.Array, dims int, traditional bool, base, scale float64, offset int) *array.Array {
	const op = "ops.RoPE"
	requireNonNil(op, x)
	fastFloat(op, x)
	if x.Ndim() < 2 {
		array.Panicf(op, "x shape %v: want at least two dimensions (positions, features)", x.Shape())
	}
	sh := x.Shape()
	n := sh[len(sh)-1]
	if dims <= 0 || dims%2 != 0 || dims > n {
		array.Panicf(op, "x shape %v: dims %d must be even, positive and at most %d", sh, dims, n)
	}
	if !(base > 0) || math.IsInf(base, 1) || math.IsNaN(scale) || math.IsInf(scale, 0) {
		array.Panicf(op, "x shape %v: base %v must be positive and finite, scale %v finite", sh, base, scale)
	}
	if offset < 0 {
		array.Panicf(op, "x shape %v: offset %d is negative", sh, offset)
	}
	return node(sh, x.DType(), &ropePrim{Dims: dims, Traditional: traditional, Base: base, Scale: scale, Offset: offset}, x)
}

// ropePrim is RoPE. Rotations are linear in x, and the transpose of a
// rotation turns by the opposite angle: its derivatives are RoPE with the
// scale, so every angle, negated (VJP) or as it is (JVP).
type ropePrim struct {
	Dims        int
	Traditional bool
	Base, Scale float64
	Offset      int
}

func (p *ropePrim) Name() string { return "RoPE" }
func (p *ropePrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *ropePrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		return metal.RoPE(o, viewOf(in[0]), p.Dims, p.Traditional, p.Base, p.Scale, p.Offset)
	})
}
func (p *ropePrim) evalCPU(in, out []*array.Array) error {
	return cpu.RoPE(alloc(out[0]), bufOf(in[0]), p.Dims, p.Traditional, p.Base, p.Scale, p.Offset)
}
func (p *ropePrim) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

// OutputShapes is the input's shape, which must still have room for the
// rotated features.
func (p *ropePrim) OutputShapes(in []*array.Array) ([][]int, error) {
	sh := in[0].Shape()
	if len(sh) < 2 || sh[len(sh)-1] < p.Dims {
		return nil, array.Errorf("ops.RoPE", "x shape %v: want at least two dimensions and %d features", sh, p.Dims)
	}
	return sameShape(in)
}

func (p *ropePrim) VJP(_, _, cots []*array.Array, _ []int) []*array.Array {
	q := *p
	q.Scale = -p.Scale
	return []*array.Array{node(cots[0].Shape(), cots[0].DType(), &q, cots[0])}
}

func (p *ropePrim) JVP(_, _, tans []*array.Array, _ []int) []*array.Array {
	return []*array.Array{node(tans[0].Shape(), tans[0].DType(), p, tans[0])}
}

// Vmap rotates the batch, moved to axis 0, which keeps positions and
// features the last two axes.
func (p *ropePrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	x := batchFront(in[0], axes[0])
	return []*array.Array{node(x.Shape(), x.DType(), p, x)}, []int{0}
}

// ScaledDotProductAttention returns softmax(scale·q·kᵀ + mask)·v over
// heads, as MLX's mx.fast.scaled_dot_product_attention. q is
// [B, Hq, L, D], k [B, Hkv, S, D] and v [B, Hkv, S, Dv], all of one float
// dtype; Hq must be a multiple of Hkv, and query head h reads key and
// value head h/(Hq/Hkv) (grouped-query attention). mask is nil, a boolean
// array (true keeps a score) or an additive float array, broadcastable
// to [B, Hq, L, S]. causal also masks key j for query i unless
// j <= i + S - L (MLX's lower-right alignment). A query that keeps no key
// gets NaN, as Softmax of an all -Inf row. The result is [B, Hq, L, Dv].
//
// It is one primitive: the scores are formed a block at a time and never
// stored whole (FlashAttention), forward and backward. float16 and
// bfloat16 compute in float32. An additive mask has a gradient; the
// gradient of the gradient is not defined.
func ScaledDotProductAttention(q, k, v *array.Array, scale float64, mask *array.Array, causal bool) *array.Array {
	const op = "ops.ScaledDotProductAttention"
	requireNonNil(op, q, k, v)
	sdpaCheck(op, q, k, v, scale, mask)
	dt := q.DType()
	cd := workDType(dt)
	qs, vs := q.Shape(), v.Shape()
	shape := []int{qs[0], qs[1], qs[2], vs[3]}
	if _, p := sizeProblem(shape, cd); p != "" {
		array.Panicf(op, "q, v shapes %v, %v give shape %v, which %s", qs, vs, shape, p)
	}
	q, k, v = AsType(q, cd), AsType(k, cd), AsType(v, cd)
	if mask != nil && mask.DType() != array.Bool {
		mask = AsType(mask, cd)
	}
	return AsType(sdpaNode(&sdpaPrim{Scale: scale, Causal: causal, HasMask: mask != nil}, q, k, v, mask)[0], dt)
}

// sdpaNode records p over q, k, v and the mask if any: its outputs are
// the attention and each query's log-sum-exp.
func sdpaNode(p *sdpaPrim, q, k, v, mask *array.Array) []*array.Array {
	in := []*array.Array{q, k, v}
	if mask != nil {
		in = append(in, mask)
	}
	qs := q.Shape()
	shapes := [][]int{{qs[0], qs[1], qs[2], v.Shape()[3]}, {qs[0], qs[1], qs[2]}}
	return array.NewMulti(stream(), shapes, []array.DType{q.DType(), q.DType()}, p, in...)
}

// sdpaPrim is attention over q, k, v (float32 or float64) and, with
// HasMask, a mask. Its outputs are the result and each query's
// log-sum-exp, which the backward pass reads.
type sdpaPrim struct {
	Scale   float64
	Causal  bool
	HasMask bool
}

func (p *sdpaPrim) Name() string { return "ScaledDotProductAttention" }
func (p *sdpaPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *sdpaPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	o, err := allocGPU(out[0])
	if err != nil {
		return err
	}
	lse, err := allocGPU(out[1])
	if err != nil {
		return err
	}
	ls, err := metal.Attention(o, lse, p.views(in))
	return run(s, ls, err)
}

func (p *sdpaPrim) views(in []*array.Array) metal.AttentionViews {
	a := metal.AttentionViews{Q: viewOf(in[0]), K: viewOf(in[1]), V: viewOf(in[2]), Scale: p.Scale, Causal: p.Causal}
	if p.HasMask {
		qs, ks := in[0].Shape(), in[1].Shape()
		a.Mask = bcastViewOf(in[3], []int{qs[0], qs[1], qs[2], ks[2]})
	}
	return a
}
func (p *sdpaPrim) bufs(in []*array.Array) cpu.AttentionBufs {
	a := cpu.AttentionBufs{Q: bufOf(in[0]), K: bufOf(in[1]), V: bufOf(in[2]), Scale: p.Scale, Causal: p.Causal}
	if p.HasMask {
		qs, ks := in[0].Shape(), in[1].Shape()
		a.Mask = bcastBufOf(in[3], []int{qs[0], qs[1], qs[2], ks[2]})
	}
	return a
}
func (p *sdpaPrim) evalCPU(in, out []*array.Array) error {
	return cpu.Attention(alloc(out[0]), alloc(out[1]), p.bufs(in))
}
func (p *sdpaPrim) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

func (p *sdpaPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	var mask *array.Array
	if p.HasMask {
		mask = in[3]
	}
	if err := array.Try(func() { sdpaCheck("ops.ScaledDotProductAttention", in[0], in[1], in[2], p.Scale, mask) }); err != nil {
		return nil, err
	}
	qs := in[0].Shape()
	return [][]int{{qs[0], qs[1], qs[2], in[2].Shape()[3]}, {qs[0], qs[1], qs[2]}}, nil
}

// VJP runs the fused backward pass for q, k and v. An additive mask's
// cotangent is the scores' cotangent summed to its shape, which that
// pass never forms: it is computed from the probabilities, whole.
func (p *sdpaPrim) VJP(in, out, cots []*array.Array, argnums []int) []*array.Array {
	g := cots[0]
	res := make([]*array.Array, len(argnums))
	var grads []*array.Array
	for i, a := range argnums {
		if a < 3 {
			if grads == nil {
				vin := append(append([]*array.Array{}, in...), out[0], out[1], g)
				shapes := [][]int{in[0].Shape(), in[1].Shape(), in[2].Shape()}
				dt := in[0].DType()
				grads = array.NewMulti(stream(), shapes, []array.DType{dt, dt, dt}, &sdpaVJPPrim{*p}, vin...)
			}
			res[i] = grads[a]
			continue
		}
		if in[3].DType() == array.Bool {
			continue
		}
		pr, _, vr := p.probs(in, out[1])
		dp := MatMul(g, SwapAxes(vr, -1, -2))
		delta := Sum(Mul(g, out[0]), -1)
		ds := Mul(pr, Sub(dp, ExpandDims(delta, -1)))
		res[i] = sumToShape(ds, in[3].Shape())
	}
	return res
}

// sdpaHeads repeats the heads (axis 1) of a key-side x of attention's
// inputs in to q's number.
func sdpaHeads(in []*array.Array, x *array.Array) *array.Array {
	if group := in[0].Shape()[1] / in[1].Shape()[1]; group > 1 {
		return Repeat(x, group, 1)
	}
	return x
}

// probs returns the softmax probabilities exp(scores - lse) of the
// masked, scaled scores, whole ([B, Hq, L, S]), and k and v with their
// heads repeated to q's.
func (p *sdpaPrim) probs(in []*array.Array, lse *array.Array) (pr, kr, vr *array.Array) {
	q := in[0]
	kr, vr = sdpaHeads(in, in[1]), sdpaHeads(in, in[2])
	s := MulScalar(MatMul(q, SwapAxes(kr, -1, -2)), p.Scale)
	l, sl := q.Shape()[2], in[1].Shape()[2]
	neg := Full(nil, math.Inf(-1), s.DType())
	if p.HasMask {
		if m := in[3]; m.DType() == array.Bool {
			s = Where(m, s, neg)
		} else {
			s = Add(s, m)
		}
	}
	if p.Causal {
		s = Where(Tri(l, sl, sl-l, array.Bool), s, neg)
	}
	return Exp(Sub(s, ExpandDims(lse, -1))), kr, vr
}

// JVP is formed from the probabilities P, whole: the scores' tangent dS
// gives P·(dS - sum(P·dS)) for the probabilities', so the output's is
// that times v plus P times v's tangent, and the log-sum-exp's is
// sum(P·dS).
func (p *sdpaPrim) JVP(in, out, tans []*array.Array, argnums []int) []*array.Array {
	var tq, tk, tv, tm *array.Array
	for i, a := range argnums {
		switch a {
		case 0:
			tq = tans[i]
		case 1:
			tk = tans[i]
		case 2:
			tv = tans[i]
		case 3:
			if in[3].DType() != array.Bool {
				tm = tans[i]
			}
		}
	}
	pr, kr, vr := p.probs(in, out[1])
	// the scores' tangent: scale·(tq·krᵀ + q·tkᵀ) plus the mask's
	var ds *array.Array
	if tq != nil {
		ds = MatMul(tq, SwapAxes(kr, -1, -2))
	}
	if tk != nil {
		ds = addTangents(ds, MatMul(in[0], SwapAxes(sdpaHeads(in, tk), -1, -2)))
	}
	if ds != nil {
		ds = MulScalar(ds, p.Scale)
	}
	if tm != nil {
		ds = addTangents(ds, BroadcastTo(tm, pr.Shape()...))
	}
	var to, tl *array.Array
	if ds != nil {
		pds := Mul(pr, ds)
		tl = Sum(pds, -1)
		to = MatMul(Sub(pds, Mul(pr, ExpandDims(tl, -1))), vr)
	}
	if tv != nil {
		to = addTangents(to, MatMul(pr, sdpaHeads(in, tv)))
	}
	if to == nil {
		to = ZerosLike(out[0])
	}
	if tl == nil {
		tl = ZerosLike(out[1])
	}
	return []*array.Array{to, tl}
}

// Vmap folds the batch, moved to axis 0, into the batch axis B: unbatched
// operands are broadcast along it first, and the mask is broadcast to the
// scores' whole shape.
func (p *sdpaPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	f, nb := sdpaFold(in, axes, p.HasMask)
	return sdpaUnfold(sdpaNode(p, f[0], f[1], f[2], maskOf(f, p.HasMask)), nb), []int{0, 0}
}

// maskOf is the mask among attention's inputs, nil without one.
func maskOf(in []*array.Array, has bool) *array.Array {
	if has {
		return in[3]
	}
	return nil
}

// sdpaFold moves the batch of Vmap to the front of every input of an
// attention primitive (broadcasting it where an input has none) and
// merges it into the inputs' batch axis B; the mask (input 3 when there
// is one) is broadcast to the scores' shape first. It returns the inputs
// and the batch size.
func sdpaFold(in []*array.Array, axes []int, hasMask bool) ([]*array.Array, int) {
	nb := indexBatchSize(in, axes)
	unbatched := func(i int) []int {
		sh := in[i].Shape()
		if axes[i] >= 0 {
			sh = slices.Delete(slices.Clone(sh), axes[i], axes[i]+1)
		}
		return sh
	}
	qs, ks := unbatched(0), unbatched(1)
	out := make([]*array.Array, len(in))
	for i, x := range in {
		x = batchFront(x, axes[i])
		if axes[i] < 0 {
			x = ExpandDims(x, 0)
		}
		full := x.Shape()[1:]
		if hasMask && i == 3 {
			for x.Ndim() < 5 {
				x = ExpandDims(x, 1)
			}
			full = []int{qs[0], qs[1], qs[2], ks[2]}
		}
		x = BroadcastTo(x, append([]int{nb}, full...)...)
		out[i] = Reshape(x, append([]int{nb * full[0]}, full[1:]...)...)
	}
	return out, nb
}

// sdpaUnfold splits the batch of Vmap out of axis 0 of each output.
func sdpaUnfold(outs []*array.Array, nb int) []*array.Array {
	res := make([]*array.Array, len(outs))
	for i, o := range outs {
		sh := o.Shape()
		res[i] = Reshape(o, append([]int{nb, sh[0] / nb}, sh[1:]...)...)
	}
	return res
}

// sdpaVJPPrim is attention's backward pass: from q, k, v, the mask if
// any, the forward pass's result and log-sum-exp and the result's
// cotangent, the cotangents of q, k and v.
type sdpaVJPPrim struct{ F sdpaPrim }

func (p *sdpaVJPPrim) Name() string { return "ScaledDotProductAttentionVJP" }
func (p *sdpaVJPPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *sdpaVJPPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	var vs [3]metal.View
	for i := range vs {
		v, err := allocGPU(out[i])
		if err != nil {
			return err
		}
		vs[i] = v
	}
	n := len(in)
	ls, err := metal.AttentionVJP(vs[0], vs[1], vs[2], p.F.views(in), viewOf(in[n-3]), viewOf(in[n-2]), viewOf(in[n-1]))
	return run(s, ls, err)
}
func (p *sdpaVJPPrim) evalCPU(in, out []*array.Array) error {
	n := len(in)
	return cpu.AttentionVJP(alloc(out[0]), alloc(out[1]), alloc(out[2]), p.F.bufs(in), bufOf(in[n-3]), bufOf(in[n-2]), bufOf(in[n-1]))
}
func (p *sdpaVJPPrim) Equivalent(o array.Primitive) bool { return sameParams(p, o) }
func (p *sdpaVJPPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	return [][]int{in[0].Shape(), in[1].Shape(), in[2].Shape()}, nil
}

// Vmap folds the batch into the batch axis B, as sdpaPrim's.
func (p *sdpaVJPPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	f, nb := sdpaFold(in, axes, p.F.HasMask)
	dt := f[0].DType()
	outs := array.NewMulti(stream(), [][]int{f[0].Shape(), f[1].Shape(), f[2].Shape()}, []array.DType{dt, dt, dt}, p, f...)
	return sdpaUnfold(outs, nb), []int{0, 0, 0}
}

// sdpaCheck checks ScaledDotProductAttention's operands.
func sdpaCheck(op string, q, k, v *array.Array, scale float64, mask *array.Array) {
	qs, ks, vs := q.Shape(), k.Shape(), v.Shape()
	if len(qs) != 4 || len(ks) != 4 || len(vs) != 4 {
		array.Panicf(op, "q, k, v shapes %v, %v, %v: want [B, H, L, D] each", qs, ks, vs)
	}
	if !q.DType().IsFloat() || k.DType() != q.DType() || v.DType() != q.DType() {
		array.Panicf(op, "q, k, v shapes %v, %v, %v: dtypes %v, %v, %v, want one float dtype", qs, ks, vs, q.DType(), k.DType(), v.DType())
	}
	switch {
	case ks[0] != qs[0] || vs[0] != qs[0]:
		array.Panicf(op, "q, k, v shapes %v, %v, %v: batch sizes differ", qs, ks, vs)
	case ks[1] != vs[1] || ks[2] != vs[2]:
		array.Panicf(op, "k, v shapes %v, %v: heads and lengths must match", ks, vs)
	case ks[3] != qs[3]:
		array.Panicf(op, "q, k shapes %v, %v: head sizes %d and %d differ", qs, ks, qs[3], ks[3])
	case ks[1] == 0 || qs[1]%ks[1] != 0:
		array.Panicf(op, "q, k shapes %v, %v: %d query heads are not a multiple of %d key heads", qs, ks, qs[1], ks[1])
	}
	if math.IsNaN(scale) || math.IsInf(scale, 0) {
		array.Panicf(op, "q shape %v: scale %v is not finite", qs, scale)
	}
	if mask != nil {
		if mask.DType() != array.Bool && !mask.DType().IsFloat() {
			array.Panicf(op, "mask shape %v: dtype %v is neither bool nor float", mask.Shape(), mask.DType())
		}
		full := []int{qs[0], qs[1], qs[2], ks[2]}
		if mask.Ndim() > 4 || !broadcastsTo(mask.Shape(), full) {
			array.Panicf(op, "mask shape %v does not broadcast to the scores' shape %v", mask.Shape(), full)
		}
	}
}

// broadcastsTo reports whether shape s broadcasts to t (numpy's rule)
// without changing t.
func broadcastsTo(s, t []int) bool {
	if len(s) > len(t) {
		return false
	}
	off := len(t) - len(s)
	for i, d := range s {
		if d != 1 && d != t[off+i] {
			return false
		}
	}
	return true
}
