package metal

import (
	"math"
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/metal/internal/plan"
)

// AttentionMaxHead is the longest head (D and Dv) the attention kernels
// take: a simdgroup holds a query's row and its output's accumulator in
// registers, eight elements a lane.
const AttentionMaxHead = 256

// AttentionViews are the operands of Attention and AttentionVJP, all
// float32 (ops converts the 16-bit floats first): Q [B, Hq, L, D],
// K [B, Hk, S, D] and V [B, Hk, S, Dv] with Hq a multiple of Hk, and Mask
// either without Mem (no mask), Bool (true keeps a score) or float32
// (added to the scores), viewed with the shape [B, Hq, L, S]. Causal
// masks key j for query i unless j <= i + S - L. Scale multiplies the
// scores.
type AttentionViews struct {
	Q, K, V, Mask View
	Scale         float64
	Causal        bool
}

// Attention plans softmax(Scale·Q·Kᵀ + mask)·V into out ([B, Hq, L, Dv],
// row-major) and each query's log-sum-exp into lse ([B, Hq, L],
// row-major), as cpu.Attention: a simdgroup a query, over the keys one at
// a time with a running maximum and sum.
func Attention(out, lse View, a AttentionViews) ([]Launch, error) {
	const op = "metal.Attention"
	p, bufs, err := a.params(op, []View{out, lse}, nil)
	if err != nil || p == nil {
		return nil, err
	}
	oArg, _ := bindAt(out, true)
	lArg, _ := bindAt(lse, true)
	rows := a.Q.Shape[0] * a.Q.Shape[1] * a.Q.Shape[2]
	return []Launch{attnLaunch("attention_float32", append(bufs, oArg, lArg), p, rows)}, nil
}

// AttentionVJP plans the cotangents dq, dk and dv (Q's, K's and V's
// shapes, row-major) of Attention's output given its cotangent g, from
// the forward pass's out and lse: a simdgroup a query for dq, and a
// simdgroup a key, over the queries of every head that reads it, for dk
// and dv.
func AttentionVJP(dq, dk, dv View, a AttentionViews, out, lse, g View) ([]Launch, error) {
	const op = "metal.AttentionVJP"
	p, bufs, err := a.params(op, []View{dq, dk, dv}, []View{out, lse, g})
	if err != nil || p == nil {
		return nil, err
	}
	for _, v := range []View{out, lse, g} {
		arg, _ := bindAt(v, false)
		bufs = append(bufs, arg)
	}
	dqArg, _ := bindAt(dq, true)
	dkArg, _ := bindAt(dk, true)
	dvArg, _ := bindAt(dv, true)
	qs, ks := a.Q.Shape, a.K.Shape
	var ls []Launch
	if n := qs[0] * qs[1] * qs[2]; n > 0 {
		ls = append(ls, attnLaunch("attention_dq_float32", append(append([]bufArg{}, bufs...), dqArg), p, n))
	}
	switch n := ks[0] * ks[1] * ks[2]; {
	case n > 0 && qs[2] == 0:
		// no queries: nothing reads the keys, whose cotangents are zero
		for _, d := range []View{dk, dv} {
			f, err := Fill(d, 0)
			if err != nil {
				return nil, err
			}
			ls = append(ls, f...)
		}
	case n > 0:
		ls = append(ls, attnLaunch("attention_dkv_float32", append(append([]bufArg{}, bufs...), dkArg, dvArg), p, n))
	}
	return ls, nil
}

// attnLaunch runs kernel with a simdgroup for each of rows rows.
func attnLaunch(kernel string, bufs []bufArg, p params, rows int) Launch {
	const tg = 256
	return Launch{Library: "attention.metal", Kernel: kernel, Buffers: bufs, Params: p.bytes(),
		Grid: [3]int{rows * 32, 1, 1}, Group: [3]int{min(tg, rows*32), 1, 1}, Fit: plan.FitSimd}
}

// params checks the operands, the outputs (row-major float32) and, for
// the backward, the forward's out, lse and g (any strides), and returns
// the kernels' parameters and the buffers of q, k, v and the two masks;
// nil parameters where there is nothing to compute.
func (a AttentionViews) params(op string, outs, extra []View) (params, []bufArg, error) {
	views := append([]View{a.Q, a.K, a.V}, outs...)
	views = append(views, extra...)
	for _, v := range views {
		if err := checkViews(op, []string{"operand"}, v); err != nil {
			return nil, nil, err
		}
		if v.DType != array.Float32 {
			return nil, nil, array.Errorf(op, "operand of shape %v has dtype %v: the attention kernels take float32 only", v.Shape, v.DType)
		}
	}
	qs, ks, vs := a.Q.Shape, a.K.Shape, a.V.Shape
	if len(qs) != 4 || len(ks) != 4 || len(vs) != 4 || ks[0] != qs[0] || vs[0] != qs[0] || ks[1] != vs[1] || ks[2] != vs[2] ||
		ks[3] != qs[3] || ks[1] == 0 || qs[1]%ks[1] != 0 {
		return nil, nil, array.Errorf(op, "q, k, v shapes %v, %v, %v do not fit [B, Hq, L, D], [B, Hk, S, D], [B, Hk, S, Dv]", qs, ks, vs)
	}
	if qs[3] > AttentionMaxHead || vs[3] > AttentionMaxHead {
		return nil, nil, array.Errorf(op, "q, v shapes %v, %v: heads longer than %d are not supported on the GPU", qs, vs, AttentionMaxHead)
	}
	want := [][]int{{qs[0], qs[1], qs[2], vs[3]}, {qs[0], qs[1], qs[2]}}
	if extra != nil {
		want = [][]int{qs, ks, vs, want[0], want[1], want[0]}
	}
	for i, v := range append(outs, extra...) {
		if !slices.Equal(v.Shape, want[i]) || (i < len(outs) && !rowMajor(v)) {
			return nil, nil, array.Errorf(op, "operand %d of shape %v (strides %v): want shape %v, outputs row-major", i, v.Shape, v.Strides, want[i])
		}
	}
	kind, m := 0, a.Mask
	if m.Mem != nil {
		kind = 2
		if m.DType == array.Bool {
			kind = 1
		} else if m.DType != array.Float32 {
			return nil, nil, array.Errorf(op, "mask dtype %v: want bool or float32", m.DType)
		}
		if !slices.Equal(m.Shape, []int{qs[0], qs[1], qs[2], ks[2]}) {
			return nil, nil, array.Errorf(op, "mask shape %v: want the scores' %v", m.Shape, []int{qs[0], qs[1], qs[2], ks[2]})
		}
	}
	empty := true
	for _, v := range outs {
		empty = empty && v.Size() == 0
	}
	if empty {
		return nil, nil, nil
	}
	if rows := max(qs[0]*qs[1]*qs[2], ks[0]*ks[1]*ks[2]) * 32; rows > int(maxGridDim.Load()) {
		return nil, nil, array.Errorf(op, "%d rows exceed the GPU's grid limit", rows/32)
	}
	qArg, qOff := bindAt(a.Q, false)
	kArg, kOff := bindAt(a.K, false)
	vArg, vOff := bindAt(a.V, false)
	mb, mf, mOff := qArg, qArg, 0
	mst := []int{0, 0, 0, 0}
	if kind != 0 {
		arg, off := bindAt(m, false)
		mOff, mst = off, m.Strides
		if kind == 1 {
			mb = arg
		} else {
			mf = arg
		}
	}
	causal := 0
	if a.Causal {
		causal = 1
	}
	p := params{}.add(qs[0], qs[1], ks[1], qs[2], ks[2], qs[3], vs[3]).
		add(qOff).add(a.Q.Strides...).add(kOff).add(a.K.Strides...).add(vOff).add(a.V.Strides...).
		add(mOff).add(mst...).add(kind, causal, int(math.Float32bits(float32(a.Scale))))
	if extra == nil {
		p = p.add(make([]int, 5+4+1+3+1+4)...)
	} else {
		for _, v := range extra {
			_, off := bindAt(v, false)
			p = p.add(off).add(v.Strides...)
		}
	}
	return p, []bufArg{qArg, kArg, vArg, mb, mf}, nil
}
