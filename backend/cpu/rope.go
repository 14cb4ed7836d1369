package cpu

import (
	"math"

	"github.com/fathom-go/fathom/array"
)

// RoPE writes x with rotary position embeddings applied to out (x's shape
// and dtype, at least two axes): in each row of the last axis, at
// position p along the axis before it, pair i of the first dims features
// turns by the angle (offset + p)·scale·base^(-2i/dims). traditional
// pairs features 2i and 2i+1, otherwise i and i + dims/2; features past
// dims are copied. float16 and bfloat16 compute in float32.
func RoPE(out, x Buf, dims int, traditional bool, base, scale float64, offset int) error {
	const name = "cpu.RoPE"
	if !x.DType.IsFloat() || out.DType != x.DType {
		return array.Errorf(name, "dtypes %v and %v: want one float dtype", x.DType, out.DType)
	}
	nd := len(x.Shape)
	if nd < 2 || dims <= 0 || dims%2 != 0 || dims > x.Shape[nd-1] {
		return array.Errorf(name, "shape %v with dims %d", x.Shape, dims)
	}
	if x.Size() == 0 {
		return nil
	}
	rp := ropeParams{dims: dims, traditional: traditional, base: base, scale: scale, offset: offset}
	switch x.DType {
	case array.Float32:
		ropeRun(rp, out, x, redIO[float32]{x: elems[float32](x), o: elems[float32](out)})
	case array.Float64:
		ropeRun(rp, out, x, redIO[float64]{x: elems[float64](x), o: elems[float64](out)})
	default:
		ropeRun(rp, out, x, redIO[float32]{load: redLoadHalf(x), store: redStoreHalf(out)})
	}
	return nil
}

type ropeParams struct {
	dims        int
	traditional bool
	base, scale float64
	offset      int
}

// ropeTable returns cos and sin of every position's angles, row p holding
// pair i at p·half + i. The angles are formed in float64 and rounded once.
func ropeTable[C smFloat](rp ropeParams, positions int) (cs, sn []C) {
	half := rp.dims / 2
	cs, sn = make([]C, positions*half), make([]C, positions*half)
	inv := make([]float64, half)
	for i := range inv {
		inv[i] = math.Pow(rp.base, -2*float64(i)/float64(rp.dims))
	}
	ParallelFor(positions, max(1, grain/(8*half)), func(lo, hi int) {
		for p := lo; p < hi; p++ {
			pos := float64(rp.offset+p) * rp.scale
			for i, f := range inv {
				s, c := math.Sincos(pos * f)
				cs[p*half+i], sn[p*half+i] = C(c), C(s)
			}
		}
	})
	return cs, sn
}

func ropeRun[C smFloat](rp ropeParams, out, x Buf, io redIO[C]) {
	nd := len(x.Shape)
	l, n := x.Shape[nd-2], x.Shape[nd-1]
	cs, sn := ropeTable[C](rp, l)
	half := rp.dims / 2
	rows := x.Size() / n
	sIn, sOut := x.Strides[nd-1], out.Strides[nd-1]
	ParallelFor(rows, max(1, grain/n), func(lo, hi int) {
		xb, ob := make([]C, n), make([]C, n)
		for r := lo; r < hi; r++ {
			inOff, outOff := flatOffset(x, r*n), flatOffset(out, r*n)
			xr := io.read(inOff, n, sIn, xb)
			o := io.target(outOff, n, sOut, ob)
			p := r % l
			c, s := cs[p*half:(p+1)*half], sn[p*half:(p+1)*half]
			if rp.traditional {
				ropePairs(o[:rp.dims], xr[:rp.dims], c, s)
			} else {
				ropeHalves(o[:half], o[half:rp.dims], xr[:half], xr[half:rp.dims], c, s)
			}
			copy(o[rp.dims:], xr[rp.dims:])
			io.write(outOff, sOut, o)
		}
	})
}

// ropeHalves rotates the pairs (a[i], b[i]) into (oa[i], ob[i]); the
// slices may be the same.
func ropeHalves[C smFloat](oa, ob, a, b, c, s []C) {
	a, b, oa, ob, s = a[:len(c)], b[:len(c)], oa[:len(c)], ob[:len(c)], s[:len(c)]
	for i, ci := range c {
		x1, x2 := a[i], b[i]
		oa[i] = C(x1*ci) - C(x2*s[i])
		ob[i] = C(x1*s[i]) + C(x2*ci)
	}
}

// ropePairs rotates the neighbouring pairs of x into o.
func ropePairs[C smFloat](o, x, c, s []C) {
	s = s[:len(c)]
	for i, ci := range c {
		x1, x2 := x[2*i], x[2*i+1]
		o[2*i] = C(x1*ci) - C(x2*s[i])
		o[2*i+1] = C(x1*s[i]) + C(x2*ci)
	}
}
