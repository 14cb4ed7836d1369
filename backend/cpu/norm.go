package cpu

import (
	"math"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/opset"
)

// The fast family's row kernels (norm.go, rope.go, attention.go) are
// written over slices of a compute type C, float32 or float64, through
// fastOps: the machine's vector kernels for float32 where it has them, Go
// loops otherwise. A row is read once into the cache, worked on there, and
// written once; rows are shared over the cores by ParallelFor.

// fastOps are the row loops of the fast family for one compute type: the
// softmax family's (max, expScale, affine, add, mul) and two more.
type fastOps[C smFloat] struct {
	*smOps[C]
	// sum is the pairwise sum of x.
	sum func(x []C) float64
	// mulAdd sets o = a*b + c.
	mulAdd func(o, a, b, c []C)
}

var (
	fast32 = fastOps32(vecBest)
	fast64 = &fastOps[float64]{smOps: smFloat64, sum: pairwiseSum[float64], mulAdd: mulAdd[float64]}
)

// fastOps32 returns the float32 loops with impl's kernels, or Go's
// without (impl nil).
func fastOps32(impl *vecImpl) *fastOps[float32] {
	ops := &fastOps[float32]{
		smOps: smOps32(impl), sum: func(x []float32) float64 { return float64(pairwiseSum(x)) }, mulAdd: mulAdd[float32],
	}
	if impl != nil {
		sum := vecSumFunc(impl)
		ops.sum = func(x []float32) float64 { return float64(sum(x)) }
		ops.mulAdd, _ = tripleLoops(impl, opset.Add, false)
	}
	return ops
}

// LayerNorm writes (x - mean)/sqrt(var + eps)·w + b over the last axis of
// x to out (x's shape and dtype). w and b are vectors as long as that
// axis in x's dtype, or Bufs with no Data for none. float16 and bfloat16
// compute in float32.
func LayerNorm(out, x, w, b Buf, eps float64) error {
	return normRows("cpu.LayerNorm", out, x, w, b, eps, false)
}

// RMSNorm writes x/sqrt(mean(x²) + eps)·w over the last axis of x to out
// (as LayerNorm).
func RMSNorm(out, x, w Buf, eps float64) error {
	return normRows("cpu.RMSNorm", out, x, w, Buf{}, eps, true)
}

func normRows(name string, out, x, w, b Buf, eps float64, rms bool) error {
	if !x.DType.IsFloat() {
		return array.Errorf(name, "dtype %v is not a float dtype", x.DType)
	}
	for _, o := range []Buf{out, w, b} {
		if o.Data != nil && o.DType != x.DType {
			return array.Errorf(name, "operand dtype %v, want %v", o.DType, x.DType)
		}
	}
	if len(x.Shape) == 0 || x.Size() == 0 {
		return nil
	}
	axis := len(x.Shape) - 1
	l := newRedLines(x, out, axis, true)
	switch x.DType {
	case array.Float32:
		normRun(l, redIO[float32]{x: elems[float32](x), o: elems[float32](out)}, vecOf[float32](w), vecOf[float32](b), eps, rms, fast32)
	case array.Float64:
		normRun(l, redIO[float64]{x: elems[float64](x), o: elems[float64](out)}, vecOf[float64](w), vecOf[float64](b), eps, rms, fast64)
	default:
		normRun(l, redIO[float32]{load: redLoadHalf(x), store: redStoreHalf(out)}, halfVec(w), halfVec(b), eps, rms, fast32)
	}
	return nil
}

// vecOf returns the 1-D b as a contiguous slice of C, nil for a Buf
// without Data.
func vecOf[C smFloat](b Buf) []C {
	if b.Data == nil {
		return nil
	}
	src := elems[C](b)
	v := make([]C, b.Shape[0])
	for i := range v {
		v[i] = src[b.Offset+i*b.Strides[0]]
	}
	return v
}

// halfVec returns the 1-D float16 or bfloat16 b widened to float32, nil
// for a Buf without Data.
func halfVec(b Buf) []float32 {
	if b.Data == nil {
		return nil
	}
	v := make([]float32, b.Shape[0])
	redLoadHalf(b)(v, b.Offset, b.Strides[0])
	return v
}

func normRun[C smFloat](l *redLines, io redIO[C], w, b []C, eps float64, rms bool, ops *fastOps[C]) {
	n := l.n
	l.each(func() func(inOff, outOff int) {
		xb, ob := make([]C, n), make([]C, n)
		return func(inOff, outOff int) {
			x := io.read(inOff, n, l.sIn, xb)
			o := io.target(outOff, n, l.sOut, ob)
			if rms {
				ops.mul(o, x, x)
				r := 1 / math.Sqrt(ops.sum(o)/float64(n)+eps)
				ops.affine(o, x, 0, C(r), 0)
			} else {
				m := ops.sum(x) / float64(n)
				ops.affine(o, x, C(m), 1, 0)
				// the squares go through xb, which the row no longer
				// needs once it is centred in o (x may be the input)
				sq := xb[:n]
				ops.mul(sq, o, o)
				r := 1 / math.Sqrt(ops.sum(sq)/float64(n)+eps)
				ops.affine(o, o, 0, C(r), 0)
			}
			switch {
			case w != nil && b != nil:
				ops.mulAdd(o, o, w, b)
			case w != nil:
				ops.mul(o, o, w)
			case b != nil:
				ops.add(o, o, b)
			}
			io.write(outOff, l.sOut, o)
		}
	})
}
