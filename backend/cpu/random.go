package cpu

//go:generate go run ./internal/asmgen/threefry -out threefry_amd64.s -stubs threefry_amd64.go -pkg cpu

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/fathom-go/fathom/array"
)

// Counter-based random numbers: Threefry-2x32 with 20 rounds, laid out as
// JAX's threefry_random_bits (the non-partitionable form, which MLX's
// RandomBits follows) lays them out.
//
// One key gives the W 32-bit words of its output from the counters 0 ..
// W-1, hashed in pairs: with h = ceil(W/2), pair p hashes the counters
// (p, h+p) (the second is 0 when h+p = W, the padding of an odd W) and
// gives word p its first result and word h+p its second. Every pair is
// independent, so the work is split over cores by ranges of pairs and the
// result never depends on the number of cores.

// Threefry2x32 is Random123's Threefry-2x32 with 20 rounds: the block
// (x0, x1) encrypted under the key (k0, k1).
func Threefry2x32(k0, k1, x0, x1 uint32) (uint32, uint32) {
	k2 := k0 ^ k1 ^ 0x1BD11BDA
	x0 += k0
	x1 += k1
	x0, x1 = tfRounds0(x0, x1)
	x0 += k1
	x1 += k2 + 1
	x0, x1 = tfRounds1(x0, x1)
	x0 += k2
	x1 += k0 + 2
	x0, x1 = tfRounds0(x0, x1)
	x0 += k0
	x1 += k1 + 3
	x0, x1 = tfRounds1(x0, x1)
	x0 += k1
	x1 += k2 + 4
	x0, x1 = tfRounds0(x0, x1)
	x0 += k2
	x1 += k0 + 5
	return x0, x1
}

// tfRounds0 and tfRounds1 are four rounds each with Threefry-2x32's
// rotations 13 15 26 6 and 17 29 16 24.
func tfRounds0(x0, x1 uint32) (uint32, uint32) {
	x0 += x1
	x1 = bits.RotateLeft32(x1, 13) ^ x0
	x0 += x1
	x1 = bits.RotateLeft32(x1, 15) ^ x0
	x0 += x1
	x1 = bits.RotateLeft32(x1, 26) ^ x0
	x0 += x1
	x1 = bits.RotateLeft32(x1, 6) ^ x0
	return x0, x1
}

func tfRounds1(x0, x1 uint32) (uint32, uint32) {
	x0 += x1
	x1 = bits.RotateLeft32(x1, 17) ^ x0
	x0 += x1
	x1 = bits.RotateLeft32(x1, 29) ^ x0
	x0 += x1
	x1 = bits.RotateLeft32(x1, 16) ^ x0
	x0 += x1
	x1 = bits.RotateLeft32(x1, 24) ^ x0
	return x0, x1
}

// rngTile is the number of pairs hashed into scratch at a time.
const rngTile = 256

// rngGrain is the fewest pairs a parallel chunk takes.
const rngGrain = 1 << 14

// threefryPairs hashes the pairs [lo, lo+len(y0)) of a key's W words
// (h = ceil(W/2)) into y0 and y1: with the vector kernel of
// threefry_amd64.s where there is one, else four pairs at a time in
// independent chains of operations (the processor overlaps them).
func threefryPairs(k0, k1 uint32, lo, h, w int, y0, y1 []uint32) {
	y1 = y1[:len(y0)]
	n := len(y0)
	if h+lo+n > w {
		// the padded pair (an odd W's last) is hashed alone below
		n--
	}
	i := 0
	if threefryVec != nil && n >= threefryLanes {
		m := n - n%threefryLanes
		key := [2]uint32{k0, k1}
		threefryVec(&key, uint32(lo), uint32(h+lo), &y0[0], &y1[0], m)
		i = m
	}
	for ; i+4 <= n; i += 4 {
		p := uint32(lo + i)
		q := uint32(h + lo + i)
		threefry4(k0, k1, p, q, (*[4]uint32)(y0[i:i+4]), (*[4]uint32)(y1[i:i+4]))
	}
	for ; i < len(y0); i++ {
		p := lo + i
		c1 := uint32(h + p)
		if h+p >= w {
			c1 = 0
		}
		y0[i], y1[i] = Threefry2x32(k0, k1, uint32(p), c1)
	}
}

// threefry4 is Threefry2x32 of the four blocks (p+j, q+j), j < 4, in
// four independent chains of operations, which the processor overlaps.
func threefry4(k0, k1, p, q uint32, y0, y1 *[4]uint32) {
	ks := [3]uint32{k0, k1, k0 ^ k1 ^ 0x1BD11BDA}
	a0, a1, a2, a3 := p+k0, p+1+k0, p+2+k0, p+3+k0
	b0, b1, b2, b3 := q+k1, q+1+k1, q+2+k1, q+3+k1
	for i := range 5 {
		for _, r := range tfRotations[i%2] {
			a0, a1, a2, a3 = a0+b0, a1+b1, a2+b2, a3+b3
			b0 = bits.RotateLeft32(b0, r) ^ a0
			b1 = bits.RotateLeft32(b1, r) ^ a1
			b2 = bits.RotateLeft32(b2, r) ^ a2
			b3 = bits.RotateLeft32(b3, r) ^ a3
		}
		x, y := ks[(i+1)%3], ks[(i+2)%3]+uint32(i+1)
		a0, a1, a2, a3 = a0+x, a1+x, a2+x, a3+x
		b0, b1, b2, b3 = b0+y, b1+y, b2+y, b3+y
	}
	*y0 = [4]uint32{a0, a1, a2, a3}
	*y1 = [4]uint32{b0, b1, b2, b3}
}

// tfRotations are Threefry-2x32's rotation amounts, four rounds each,
// alternating between key injections.
var tfRotations = [2][4]int{{13, 15, 26, 6}, {17, 29, 16, 24}}

// forPairs calls f for tiles of the pairs of every key: key index, the
// first pair, the tile's first results y0 and second results y1. A key
// has w words.
func forPairs(keys []uint32, w int, f func(key, lo int, y0, y1 []uint32)) {
	h := (w + 1) / 2
	nk := len(keys) / 2
	if h == 0 || nk == 0 {
		return
	}
	ParallelFor(nk*h, rngGrain, func(a, b int) {
		var t0, t1 [rngTile]uint32
		for a < b {
			k, p := a/h, a%h
			m := min(rngTile, b-a, h-p)
			threefryPairs(keys[2*k], keys[2*k+1], p, h, w, t0[:m], t1[:m])
			f(k, p, t0[:m], t1[:m])
			a += m
		}
	})
}

// checkRandomOut checks out is contiguous and holds a whole number of
// equal parts, one for each of the keys (pairs of uint32), and returns
// the part's size.
func checkRandomOut(op string, out Buf, keys []uint32) (int, error) {
	if len(keys)%2 != 0 || len(keys) == 0 {
		return 0, array.Errorf(op, "%d key words: want a positive even number", len(keys))
	}
	if !out.RowMajor() {
		return 0, array.Errorf(op, "output is not row-major")
	}
	n, nk := out.Size(), len(keys)/2
	if n%nk != 0 {
		return 0, array.Errorf(op, "%d elements do not split over %d keys", n, nk)
	}
	return n / nk, nil
}

// RandomBits fills out (contiguous; uint32, uint16 or uint8) with the
// random bits of each key in turn: keys holds the keys' two words each,
// and every key fills an equal part of out. Narrow widths take the bytes
// of the words in little-endian order (JAX's random_bits and MLX's bits).
func RandomBits(out Buf, keys []uint32) error {
	const op = "cpu.RandomBits"
	per, err := checkRandomOut(op, out, keys)
	if err != nil {
		return err
	}
	width := out.DType.Size()
	switch out.DType {
	case array.Uint32:
		o := elems[uint32](out)[out.Offset:]
		forPairs(keys, per, func(k, lo int, y0, y1 []uint32) {
			h := (per + 1) / 2
			base := k * per
			copy(o[base+lo:], y0)
			n := min(len(y1), per-h-lo)
			copy(o[base+h+lo:base+h+lo+max(n, 0)], y1)
		})
		return nil
	case array.Uint16, array.Uint8:
	default:
		return array.Errorf(op, "output dtype %v, want uint32, uint16 or uint8", out.DType)
	}
	bytesPer := per * width
	w := (bytesPer + 3) / 4
	o := out.Data[out.Offset*width:]
	put := func(dst []byte, y uint32) {
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], y)
		copy(dst, b[:])
	}
	forPairs(keys, w, func(k, lo int, y0, y1 []uint32) {
		h := (w + 1) / 2
		part := o[k*bytesPer : (k+1)*bytesPer]
		for i, y := range y0 {
			if j := 4 * (lo + i); j < bytesPer {
				put(part[j:], y)
			}
			if j := 4 * (h + lo + i); j < bytesPer && h+lo+i < w {
				put(part[j:], y1[i])
			}
		}
	})
	return nil
}

// RandDist is a distribution RandomFloats draws from.
type RandDist uint8

// The distributions of RandomFloats.
const (
	// RandUniform is MLX's uniform: u = float32(bits) / 2^32, at most the
	// dtype's largest value below 1, converted to the dtype, then
	// (b-a)*u + a in the dtype: values in [a, b). Where that rounds up
	// to b (MLX's does, for some a != 0) it gives the largest value
	// below b instead.
	RandUniform RandDist = iota
	// RandNormal is MLX's normal: v = 2u - (1 - 2^-24) in float32 from
	// the uniform u above, then sqrt(2)*erfinv(v) (MLX's float32
	// erfinv) converted to the dtype, times b, plus a.
	RandNormal
)

// Float16's and bfloat16's largest values below 1, and float32's.
const (
	belowOneF32  = float32(0.99999994) // nextafter(1, 0)
	belowOneF16  = float32(0.99951171875)
	belowOneBF16 = float32(0.99609375)
)

// RandomFloats fills out (contiguous; float16, bfloat16, float32 or
// float64) with draws of dist from each key in turn, one 32-bit word per
// element (see RandDist; float64 draws are the float32 ones, widened,
// then scaled in float64).
func RandomFloats(out Buf, keys []uint32, dist RandDist, a, b float64) error {
	const op = "cpu.RandomFloats"
	per, err := checkRandomOut(op, out, keys)
	if err != nil {
		return err
	}
	upper := belowOneF32
	switch out.DType {
	case array.Float32, array.Float64:
	case array.Float16:
		upper = belowOneF16
	case array.BFloat16:
		upper = belowOneBF16
	default:
		return array.Errorf(op, "output dtype %v is not a float dtype", out.DType)
	}
	if dist == RandNormal {
		upper = belowOneF32 // the uniform of MLX's normal is float32's
	}
	h := (per + 1) / 2
	// m maps a tile of words to values in place (as float32 bits) and
	// store writes them to out at element index at.
	var store func(at int, v []float32)
	switch out.DType {
	case array.Float32:
		o := elems[float32](out)[out.Offset:]
		store = func(at int, v []float32) { copy(o[at:at+len(v)], v) }
	case array.Float64:
		o := elems[float64](out)[out.Offset:]
		store = func(at int, v []float32) {
			d := o[at : at+len(v)]
			for i, x := range v {
				d[i] = float64(x)
			}
		}
	case array.Float16:
		o := elems[array.F16](out)[out.Offset:]
		store = func(at int, v []float32) { halfStore(o[at:at+len(v)], v) }
	default:
		o := elems[array.BF16](out)[out.Offset:]
		store = func(at int, v []float32) { halfStore(o[at:at+len(v)], v) }
	}
	mapTile := rngMapper(out.DType, dist, upper, a, b)
	forPairs(keys, per, func(k, lo int, y0, y1 []uint32) {
		var v [rngTile]float32
		base := k * per
		t := v[:len(y0)]
		mapTile(t, y0)
		store(base+lo, t)
		n := min(len(y1), per-h-lo)
		if n > 0 {
			t = v[:n]
			mapTile(t, y1[:n])
			store(base+h+lo, t)
		}
	})
	if out.DType == array.Float64 && (a != 0 || b != 1) {
		// the scaling of float64 draws is float64's
		o := elems[float64](out)[out.Offset : out.Offset+out.Size()]
		ParallelFor(len(o), grain, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				if dist == RandUniform {
					o[i] = min((b-a)*o[i]+a, math.Nextafter(b, math.Inf(-1)))
				} else {
					o[i] = o[i]*b + a
				}
			}
		})
	}
	return nil
}

// halfBelow returns the largest 16-bit float (of the format to and from
// convert) below hi, which the format holds.
func halfBelow(hi float32, to func(float32) uint16, from func(uint16) float32) float32 {
	h := to(hi)
	switch {
	case hi > 0:
		h--
	case hi == 0:
		h = 0x8001 // the smallest negative subnormal
	default:
		h++
	}
	return from(h)
}

// rngMapper returns the map of a tile of words to float32 values (for
// float16 and bfloat16, values that round to the dtype exactly as MLX's
// sequence of operations in that dtype gives).
func rngMapper(dt array.DType, dist RandDist, upper float32, a, b float64) func(d []float32, y []uint32) {
	round := func(x float32) float32 { return x }
	switch dt {
	case array.Float16:
		round = func(x float32) float32 { return array.NewF16(x).Float32() }
	case array.BFloat16:
		round = func(x float32) float32 { return array.NewBF16(x).Float32() }
	}
	const scale = 1.0 / (1 << 32)
	if dist == RandUniform {
		if dt == array.Float32 || dt == array.Float64 {
			lo, hi := float32(a), float32(b)
			r := hi - lo
			if dt == array.Float64 {
				lo, hi, r = 0, 1, 1 // float64 scales after, in float64
			}
			below := math.Nextafter32(hi, float32(math.Inf(-1)))
			return func(d []float32, y []uint32) {
				y = y[:len(d)]
				for i, w := range y {
					u := min(float32(w)*scale, upper)
					// (high-low)*u + low may round up to high (MLX's
					// does, for low != 0): the largest value below it
					d[i] = min(float32(r*u)+lo, below)
				}
			}
		}
		lo, hi := round(float32(a)), round(float32(b))
		r := round(hi - lo)
		var below float32
		if dt == array.Float16 {
			below = halfBelow(hi, func(x float32) uint16 { return uint16(array.NewF16(x)) },
				func(h uint16) float32 { return array.F16(h).Float32() })
		} else {
			below = halfBelow(hi, func(x float32) uint16 { return uint16(array.NewBF16(x)) },
				func(h uint16) float32 { return array.BF16(h).Float32() })
		}
		return func(d []float32, y []uint32) {
			y = y[:len(d)]
			for i, w := range y {
				u := round(min(float32(w)*scale, upper))
				d[i] = min(round(round(r*u)+lo), below)
			}
		}
	}
	// normal
	const lo = float32(-0.99999994) // nextafter(-1, 0)
	s := round(float32(math.Sqrt2))
	if dt != array.Float64 && b != 1 {
		s = round(s * round(float32(b)))
	}
	loc := round(float32(a))
	if dt == array.Float64 {
		s, loc = float32(math.Sqrt2), 0 // float64 scales after, in float64
	}
	addLoc := loc != 0
	half := dt == array.Float16 || dt == array.BFloat16
	return func(d []float32, y []uint32) {
		y = y[:len(d)]
		var t [rngTile]float32
		tt := t[:len(d)]
		for i, w := range y {
			u := min(float32(w)*scale, upper)
			v := float32(2*u) + lo
			d[i] = v
			tt[i] = fma32(v, -v, 1)
		}
		vecApply(vecBest, vecLog, tt, tt) // the logarithms of a tile at once
		for i, v := range d {
			var e float32
			if t := tt[i]; abs32(t) > 6.125 {
				e = erfinvPoly(v, t) // the tails, one draw in a thousand
			} else {
				// the central polynomial in float64, rounded once
				x := float64(t)
				p := 5.43877832e-9*x + 1.43285448e-7
				p = p*x + 1.22774793e-6
				p = p*x + 1.12963626e-7
				p = p*x - 5.61530760e-5
				p = p*x - 1.47697632e-4
				p = p*x + 2.31468678e-3
				p = p*x + 1.15392581e-2
				p = p*x - 2.32015476e-1
				p = p*x + 8.86226892e-1
				e = float32(float64(v) * p)
			}
			d[i] = e
		}
		if half {
			for i, e := range d {
				x := round(s * round(e))
				if addLoc {
					x = round(x + loc)
				}
				d[i] = x
			}
			return
		}
		for i, e := range d {
			d[i] = float32(s*e) + loc
		}
	}
}

// erfinv32 is MLX's float32 inverse error function (its kernels'
// erf.h, after Giles's and Juffa's approximations), with multiply-adds
// computed exactly in float64 and rounded once, and the logarithm
// float64's rounded to float32.
func erfinv32(a float32) float32 {
	return erfinvPoly(a, float32(math.Log(float64(fma32(a, -a, 1)))))
}

// erfinvPoly is erfinv32 of a given t = log(1 - a*a).
func erfinvPoly(a, t float32) float32 {
	var p float32
	if abs32(t) > 6.125 {
		p = 3.03697567e-10
		p = fma32(p, t, 2.93243101e-8)
		p = fma32(p, t, 1.22150334e-6)
		p = fma32(p, t, 2.84108955e-5)
		p = fma32(p, t, 3.93552968e-4)
		p = fma32(p, t, 3.02698812e-3)
		p = fma32(p, t, 4.83185798e-3)
		p = fma32(p, t, -2.64646143e-1)
		p = fma32(p, t, 8.40016484e-1)
	} else {
		p = 5.43877832e-9
		p = fma32(p, t, 1.43285448e-7)
		p = fma32(p, t, 1.22774793e-6)
		p = fma32(p, t, 1.12963626e-7)
		p = fma32(p, t, -5.61530760e-5)
		p = fma32(p, t, -1.47697632e-4)
		p = fma32(p, t, 2.31468678e-3)
		p = fma32(p, t, 1.15392581e-2)
		p = fma32(p, t, -2.32015476e-1)
		p = fma32(p, t, 8.86226892e-1)
	}
	return a * p
}

// fma32 is a*b + c rounded once to float32 (through float64, where the
// product of two float32s is exact; the sum rounds there first, which
// differs from a true float32 fma only in rare double-rounding ties).
func fma32(a, b, c float32) float32 {
	return float32(float64(a)*float64(b) + float64(c))
}
