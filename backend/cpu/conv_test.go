package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
)

// naiveConv is Conv's definition as a loop in float64 over output and
// kernel positions, on row-major x [N, ...in, C_in] and w [C_out, ...k,
// C_in/groups].
func naiveConv(x []float64, xs []int, w []float64, ws []int, p ConvParams) ([]float64, []int) {
	d := len(xs) - 2
	cin, cout := xs[d+1], ws[0]
	cig, cog := cin/p.Groups, cout/p.Groups
	out := []int{xs[0]}
	for i := range d {
		span := (xs[i+1]-1)*p.InputDilation[i] + 1 + p.PadLo[i] + p.PadHi[i] - (ws[i+1]-1)*p.KernelDilation[i]
		out = append(out, (span-1)/p.Stride[i]+1)
	}
	out = append(out, cout)
	size := func(s []int) int {
		n := 1
		for _, v := range s {
			n *= v
		}
		return n
	}
	y := make([]float64, size(out))
	kn := size(ws[1 : d+1])
	o, k := make([]int, d), make([]int, d)
	for r := range size(out[:d+1]) {
		n, rr := r, r
		for i := d - 1; i >= 0; i-- {
			o[i] = rr % out[i+1]
			rr /= out[i+1]
		}
		n = rr
		for kp := range kn {
			kr := kp
			xoff, wk, ok := n, 0, true
			for i := d - 1; i >= 0; i-- {
				k[i] = kr % ws[i+1]
				kr /= ws[i+1]
			}
			for i := range d {
				q := o[i]*p.Stride[i] + k[i]*p.KernelDilation[i] - p.PadLo[i]
				if q < 0 || q%p.InputDilation[i] != 0 || q/p.InputDilation[i] >= xs[i+1] {
					ok = false
					break
				}
				xoff = xoff*xs[i+1] + q/p.InputDilation[i]
				kk := k[i]
				if p.Flip {
					kk = ws[i+1] - 1 - kk
				}
				wk = wk*ws[i+1] + kk
			}
			if !ok {
				continue
			}
			for co := range cout {
				g := co / cog
				for ci := range cig {
					y[r*cout+co] += x[xoff*cin+g*cig+ci] * w[(co*kn+wk)*cig+ci]
				}
			}
		}
	}
	return y, out
}

func convCase(d int, vals ...int) ConvParams {
	p := ConvParams{Groups: 1}
	for i, s := range []*[]int{&p.Stride, &p.PadLo, &p.PadHi, &p.KernelDilation, &p.InputDilation} {
		*s = make([]int, d)
		for a := range d {
			(*s)[a] = vals[i*d+a]
		}
	}
	return p
}

// TestConvMatchesNaive checks Conv on every float dtype against the
// definition, for the paths it takes: im2col tiles with groups, whole
// kernel rows copied at once, depth blocks (and depth blocks shared out
// over cores), negative (cropping) padding, input dilation and flip
// (scattered from the input), the implicit GEMM on kernel rows, and
// the depthwise loops; x is read contiguous, then through a channel
// stride of 2 and an offset.
func TestConvMatchesNaive(t *testing.T) {
	// "depth blocks shared out" splits over cores only while the blocks
	// number at least twice the workers: pin two, so that more cores
	// cannot skip that path.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	type tc struct {
		name   string
		xs, ws []int
		p      ConvParams
		groups int
		flip   bool
	}
	cases := []tc{
		{"2d groups", []int{2, 9, 7, 6}, []int{4, 3, 2, 3}, convCase(2, 2, 1, 1, 0, 0, 2, 1, 1, 1, 1), 2, false},
		{"1d depth blocks", []int{2, 11, 300}, []int{5, 3, 300}, convCase(1, 1, 1, 1, 1, 1), 1, false},
		{"1d depth blocks shared out", []int{1, 6, 2000}, []int{64, 3, 2000}, convCase(1, 1, 0, 0, 1, 1), 1, false},
		{"1d negative padding, input dilation, flip", []int{1, 8, 3}, []int{2, 3, 3}, convCase(1, 2, -1, 2, 2, 3), 1, true},
		{"3d", []int{1, 4, 3, 5, 2}, []int{3, 2, 2, 3, 2}, convCase(3, 1, 1, 2, 0, 1, 0, 1, 0, 1, 1, 2, 1, 1, 1, 1), 1, false},
		{"2d kernel rows", []int{2, 6, 7, 3}, []int{4, 3, 3, 3}, convCase(2, 1, 2, 1, 1, 2, 0, 1, 1, 1, 1), 1, false},
		{"2d depthwise lines", []int{2, 6, 5, 4}, []int{4, 3, 3, 1}, convCase(2, 1, 1, 1, 0, 0, 2, 2, 2, 1, 1), 4, true},
		{"1d depthwise lines", []int{2, 9, 3}, []int{3, 4, 1}, convCase(1, 1, 2, 1, 1, 1), 3, false},
		{"2d depthwise", []int{2, 6, 5, 4}, []int{4, 3, 3, 1}, convCase(2, 1, 2, 1, 1, 1, 0, 1, 1, 1, 1), 4, true},
		{"2d implicit", []int{2, 5, 30, 32}, []int{8, 3, 3, 32}, convCase(2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), 1, false},
		{"1d implicit, lines in pieces", []int{1, 450, 64}, []int{4, 3, 64}, convCase(1, 1, 1, 1, 1, 1), 1, false},
		{"2d one channel, short kernel rows joined", []int{3, 9, 10, 1}, []int{5, 3, 3, 1}, convCase(2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), 1, false},
		{"2d short kernel rows joined in two blocks", []int{2, 6, 13, 5}, []int{4, 5, 3, 5}, convCase(2, 1, 1, 2, 1, 2, 1, 1, 1, 1, 1), 1, true},
		{"2d implicit, image narrower than a panel", []int{3, 5, 7, 64}, []int{6, 3, 3, 64}, convCase(2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), 1, false},
		{"2d implicit strided, uneven padding, dilated rows", []int{2, 9, 11, 32}, []int{5, 3, 3, 32}, convCase(2, 2, 2, 2, 1, 0, 3, 2, 1, 1, 1), 1, true},
		{"2d implicit strided, cropped, long kernel rows", []int{1, 6, 40, 160}, []int{5, 2, 3, 160}, convCase(2, 1, 2, 0, 1, 1, -1, 1, 1, 1, 1), 1, true},
		{"2d input dilation scattered, groups", []int{5, 4, 5, 4}, []int{6, 3, 2, 2}, convCase(2, 1, 2, 2, 1, 1, 0, 1, 2, 2, 3), 2, true},
		{"1d input dilation scattered, strided, many rows", []int{2, 300, 3}, []int{4, 5, 3}, convCase(1, 3, 4, 2, 1, 2), 1, false},
	}
	r := rand.New(rand.NewPCG(20, 1))
	// With no flop bound, small cases take the paths that split work
	// over cores too (images, for the scattered input dilation).
	oldPar := parallelFlops
	defer func() { parallelFlops = oldPar }()
	for _, par := range []int{oldPar, 0} {
		parallelFlops = par
		for _, c := range cases {
			c.p.Groups, c.p.Flip = c.groups, c.flip
			for _, dt := range []array.DType{array.Float32, array.Float64, array.Float16, array.BFloat16} {
				t.Run(fmt.Sprintf("%s/%v/parallelFlops=%d", c.name, dt, par), func(t *testing.T) {
					nx, nw := 1, 1
					for _, v := range c.xs {
						nx *= v
					}
					for _, v := range c.ws {
						nw *= v
					}
					// multiples of 1/8: exact in every float dtype
					x, w := make([]float64, nx), make([]float64, nw)
					for i := range x {
						x[i] = float64(r.IntN(17)-8) / 8
					}
					for i := range w {
						w[i] = float64(r.IntN(17)-8) / 8
					}
					want, oshape := naiveConv(x, c.xs, w, c.ws, c.p)
					// x stored contiguous (the path that copies kernel rows
					// whole), then with every other channel and a leading
					// element, so the kernel reads a channel stride of 2 and an
					// offset.
					for _, step := range []int{1, 2} {
						xstr := make([]int, len(c.xs))
						s := step
						for i := len(c.xs) - 1; i >= 0; i-- {
							xstr[i] = s
							s *= c.xs[i]
						}
						wide := make([]float64, 1+step*nx)
						for i, v := range x {
							wide[1+step*i] = v
						}
						xb, wb, ob, got := convBufs(dt, wide, xstr, c.xs, w, c.ws, oshape)
						if err := Conv(ob, xb, wb, c.p); err != nil {
							t.Fatal(err)
						}
						// Float32 sums of these values are exact; 16-bit results
						// round once.
						tol := 0.0
						if dt == array.Float16 || dt == array.BFloat16 {
							tol = 1e-2
						}
						for i := range want {
							if g := got(i); math.Abs(g-want[i]) > tol*max(1, math.Abs(want[i])) {
								t.Fatalf("channel stride %d: out[%d] = %v, want %v", step, i, g, want[i])
							}
						}
					}
				})
			}
		}
	}
}

// convBufs builds x (from data with strides xstr, offset 1), w and a
// row-major out of dtype dt, and a reader of out's i-th element.
func convBufs(dt array.DType, xd []float64, xstr, xs []int, wd []float64, ws, os []int) (x, w, out Buf, get func(int) float64) {
	n := 1
	for _, v := range os {
		n *= v
	}
	switch dt {
	case array.Float32:
		c := func(v []float64) []float32 { return mapF(v, func(f float64) float32 { return float32(f) }) }
		o := make([]float32, n)
		return viewOf(c(xd), dt, xs, xstr, 1), viewOf(c(wd), dt, ws, nil, 0), viewOf(o, dt, os, nil, 0), func(i int) float64 { return float64(o[i]) }
	case array.Float64:
		o := make([]float64, n)
		return viewOf(xd, dt, xs, xstr, 1), viewOf(wd, dt, ws, nil, 0), viewOf(o, dt, os, nil, 0), func(i int) float64 { return o[i] }
	case array.Float16:
		c := func(v []float64) []array.F16 {
			return mapF(v, func(f float64) array.F16 { return array.NewF16(float32(f)) })
		}
		o := make([]array.F16, n)
		return viewOf(c(xd), dt, xs, xstr, 1), viewOf(c(wd), dt, ws, nil, 0), viewOf(o, dt, os, nil, 0), func(i int) float64 { return float64(o[i].Float32()) }
	default:
		c := func(v []float64) []array.BF16 {
			return mapF(v, func(f float64) array.BF16 { return array.NewBF16(float32(f)) })
		}
		o := make([]array.BF16, n)
		return viewOf(c(xd), dt, xs, xstr, 1), viewOf(c(wd), dt, ws, nil, 0), viewOf(o, dt, os, nil, 0), func(i int) float64 { return float64(o[i].Float32()) }
	}
}

func mapF[S, D any](s []S, f func(S) D) []D {
	out := make([]D, len(s))
	for i, v := range s {
		out[i] = f(v)
	}
	return out
}

func TestConvErrors(t *testing.T) {
	p := convCase(1, 1, 0, 0, 1, 1)
	x := viewOf(make([]float32, 10), array.Float32, []int{1, 5, 2}, nil, 0)
	w := viewOf(make([]float32, 6), array.Float32, []int{3, 1, 2}, nil, 0)
	for _, c := range []struct {
		name, want string
		out        Buf
		x          Buf
		p          ConvParams
	}{
		{"dtype", "differ", viewOf(make([]float64, 15), array.Float64, []int{1, 5, 3}, nil, 0), x, p},
		{"out size", "output size 4 on spatial axis 0", viewOf(make([]float32, 12), array.Float32, []int{1, 4, 3}, nil, 0), x, p},
		{"not row-major", "not row-major", viewOf(make([]float32, 30), array.Float32, []int{1, 5, 3}, []int{30, 6, 2}, 0), x, p},
		{"int", "not supported", viewOf(make([]int32, 15), array.Int32, []int{1, 5, 3}, nil, 0),
			viewOf(make([]int32, 10), array.Int32, []int{1, 5, 2}, nil, 0), p},
		{"stride", "must be positive", viewOf(make([]float32, 15), array.Float32, []int{1, 5, 3}, nil, 0), x, convCase(1, 0, 0, 0, 1, 1)},
	} {
		ww := w
		if c.x.DType == array.Int32 {
			ww = viewOf(make([]int32, 6), array.Int32, []int{3, 1, 2}, nil, 0)
		}
		err := Conv(c.out, c.x, ww, c.p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}
