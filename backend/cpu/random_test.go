package cpu

import (
	"math"
	"testing"

	"github.com/fathom-go/fathom/array"
)

// TestThreefryKernels checks every Threefry kernel this machine runs
// (the vector ones of threefry_amd64.s and the four-way Go one) against
// the scalar Threefry2x32, which package random checks against Random123
// and JAX's values.
func TestThreefryKernels(t *testing.T) {
	const n = 1000
	key := [2]uint32{0x13198a2e, 0x03707344}
	for _, lo := range []int{0, 7, 1 << 31} {
		h, w := lo+n+5, 2*(lo+n+5)-1 // an odd W: the last pair is padded
		want0, want1 := make([]uint32, n), make([]uint32, n)
		for i := range n {
			want0[i], want1[i] = Threefry2x32(key[0], key[1], uint32(lo+i), uint32(h+lo+i))
		}
		check := func(name string, y0, y1 []uint32) {
			for i := range n {
				if y0[i] != want0[i] || y1[i] != want1[i] {
					t.Fatalf("%s lo %d: block %d = %x %x, want %x %x", name, lo, i, y0[i], y1[i], want0[i], want1[i])
				}
			}
		}
		for _, k := range threefryKernelsForTest() {
			y0, y1 := make([]uint32, n), make([]uint32, n)
			m := n - n%k.lanes
			k.fn(&key, uint32(lo), uint32(h+lo), &y0[0], &y1[0], m)
			for i := m; i < n; i++ {
				y0[i], y1[i] = want0[i], want1[i]
			}
			check(k.name, y0, y1)
		}
		vec := threefryVec
		threefryVec = nil
		y0, y1 := make([]uint32, n), make([]uint32, n)
		threefryPairs(key[0], key[1], lo, h, w, y0, y1)
		threefryVec = vec
		check("go", y0, y1)
		y0, y1 = make([]uint32, n), make([]uint32, n)
		threefryPairs(key[0], key[1], lo, h, w, y0, y1)
		check("best", y0, y1)
	}
}

// TestUniformNeverHigh maps the largest words to values below 1 in every
// float dtype, and the smallest to 0.
func TestUniformNeverHigh(t *testing.T) {
	for _, dt := range []array.DType{array.Float16, array.BFloat16, array.Float32, array.Float64} {
		for _, lohi := range [][2]float64{{0, 1}, {-1, 1}, {2, 3}} {
			f := rngMapper(dt, RandUniform, map[array.DType]float32{array.Float16: belowOneF16, array.BFloat16: belowOneBF16}[dt]+
				map[bool]float32{true: belowOneF32}[dt == array.Float32 || dt == array.Float64], lohi[0], lohi[1])
			d := make([]float32, 3)
			f(d, []uint32{math.MaxUint32, math.MaxUint32 - 100, 0})
			for i, v := range d {
				x := float64(v)
				if dt == array.Float64 { // RandomFloats scales float64 draws after the map
					x = min((lohi[1]-lohi[0])*x+lohi[0], math.Nextafter(lohi[1], 0))
				}
				if x >= lohi[1] || x < lohi[0] || (i == 2 && x != lohi[0]) {
					t.Errorf("%v [%v, %v): word %d maps to %v", dt, lohi[0], lohi[1], i, v)
				}
			}
		}
	}
}
