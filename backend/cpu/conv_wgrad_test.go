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

// naiveWGrad is ConvWeightGrad's definition as a loop in float64 on
// row-major x [N, ...in, C_in] and g [N, ...out, C_out], for a weight of
// shape ws.
func naiveWGrad(x []float64, xs []int, g []float64, gs, ws []int, p ConvParams) []float64 {
	d := len(xs) - 2
	cin, cout := xs[d+1], ws[0]
	cig, cog := cin/p.Groups, cout/p.Groups
	size := func(s []int) int {
		n := 1
		for _, v := range s {
			n *= v
		}
		return n
	}
	dw := make([]float64, size(ws))
	kn := size(ws[1 : d+1])
	o, k := make([]int, d), make([]int, d)
	for r := range size(gs[:d+1]) {
		rr := r
		for i := d - 1; i >= 0; i-- {
			o[i] = rr % gs[i+1]
			rr /= gs[i+1]
		}
		for kp := range kn {
			kr := kp
			for i := d - 1; i >= 0; i-- {
				k[i] = kr % ws[i+1]
				kr /= ws[i+1]
			}
			xoff, wk, ok := rr, 0, true
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
				grp := co / cog
				for ci := range cig {
					dw[(co*kn+wk)*cig+ci] += g[r*cout+co] * x[xoff*cin+grp*cig+ci]
				}
			}
		}
	}
	return dw
}

// TestConvWeightGradMatchesNaive checks ConvWeightGrad on every float
// dtype against the definition, on the paths it takes: the product with
// groups, patches packed in several blocks (long patches) and cotangent
// columns in several blocks, whole kernel rows, input dilation, negative
// padding and flip, 3-D, and the depthwise loop; x and g are read
// contiguous, then through a channel stride of 2 and an offset; and each
// case runs on one core and split over two.
func TestConvWeightGradMatchesNaive(t *testing.T) {
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
		{"2d kernel rows", []int{3, 7, 8, 5}, []int{7, 3, 3, 5}, convCase(2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), 1, false},
		{"2d one channel, rows in chunks", []int{2, 28, 27, 1}, []int{8, 3, 3, 1}, convCase(2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), 1, false},
		{"2d small images, uneven padding", []int{3, 6, 5, 24}, []int{4, 3, 2, 24}, convCase(2, 1, 1, 2, 0, 0, 1, 1, 1, 1, 1), 1, false},
		{"1d long patches", []int{2, 13, 150}, []int{5, 5, 150}, convCase(1, 1, 2, 2, 1, 1), 1, false},
		{"1d wide cotangent", []int{1, 40, 3}, []int{600, 2, 3}, convCase(1, 1, 0, 0, 1, 1), 1, false},
		{"1d negative padding, input dilation, flip", []int{1, 8, 3}, []int{2, 3, 3}, convCase(1, 2, -1, 2, 2, 3), 1, true},
		{"2d padded, input dilation on the first axis", []int{2, 5, 6, 3}, []int{4, 3, 3, 3}, convCase(2, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1), 1, false},
		{"3d", []int{1, 4, 3, 5, 2}, []int{3, 2, 2, 3, 2}, convCase(3, 1, 1, 2, 0, 1, 0, 1, 0, 1, 1, 2, 1, 1, 1, 1), 1, false},
		{"2d depthwise", []int{2, 6, 5, 4}, []int{4, 3, 3, 1}, convCase(2, 1, 2, 1, 1, 1, 0, 1, 1, 1, 1), 4, true},
		{"2d depthwise many rows", []int{3, 11, 9, 3}, []int{3, 3, 3, 1}, convCase(2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), 3, false},
	}
	r := rand.New(rand.NewPCG(20, 2))
	oldPar := parallelFlops
	defer func() { parallelFlops = oldPar }()
	for _, c := range cases {
		c.p.Groups, c.p.Flip = c.groups, c.flip
		nx := 1
		for _, v := range c.xs {
			nx *= v
		}
		x := make([]float64, nx)
		for i := range x {
			x[i] = float64(r.IntN(17)-8) / 8
		}
		// The output shape, from the forward definition.
		_, gs := naiveConv(x, c.xs, make([]float64, sizeOf(c.ws)), c.ws, c.p)
		g := make([]float64, sizeOf(gs))
		for i := range g {
			g[i] = float64(r.IntN(17)-8) / 8
		}
		want := naiveWGrad(x, c.xs, g, gs, c.ws, c.p)
		for _, dt := range []array.DType{array.Float32, array.Float64, array.Float16, array.BFloat16} {
			for _, split := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%v/split=%v", c.name, dt, split), func(t *testing.T) {
					parallelFlops = oldPar
					if split {
						parallelFlops = 0
					}
					for _, step := range []int{1, 2} {
						xb, gb := stridedBuf(dt, x, c.xs, step), stridedBuf(dt, g, gs, step)
						dwb, got := outBuf(dt, c.ws)
						if err := ConvWeightGrad(dwb, xb, gb, c.p); err != nil {
							t.Fatal(err)
						}
						// Sums of multiples of 1/64 are exact in float32;
						// 16-bit results round once.
						tol := 0.0
						if dt == array.Float16 || dt == array.BFloat16 {
							tol = 1e-2
						}
						for i := range want {
							if v := got(i); math.Abs(v-want[i]) > tol*max(1, math.Abs(want[i])) {
								t.Fatalf("channel stride %d: dw[%d] = %v, want %v", step, i, v, want[i])
							}
						}
					}
				})
			}
		}
	}
}

// TestConvWeightGradDeterministic checks that the weight gradient has the
// same bits on every run: its cores take work items as they come free,
// and the sums must not depend on which took what (a training run resumed
// from a checkpoint repeats an uninterrupted one only if they do not).
// The cases are the MNIST CNN's two layers and a depthwise one, large
// enough to split.
func TestConvWeightGradDeterministic(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		name   string
		xs, ws []int
		groups int
	}{
		{"conv1", []int{64, 28, 28, 1}, []int{32, 3, 3, 1}, 1},
		{"conv2", []int{64, 14, 14, 32}, []int{64, 3, 3, 32}, 1},
		{"depthwise", []int{16, 28, 28, 32}, []int{32, 3, 3, 1}, 32},
	} {
		p := convCase(2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)
		p.Groups = c.groups
		x := make([]float64, sizeOf(c.xs))
		for i := range x {
			x[i] = r.NormFloat64()
		}
		gs := []int{c.xs[0], c.xs[1], c.xs[2], c.ws[0]} // stride 1, padding 1
		g := make([]float64, sizeOf(gs))
		for i := range g {
			g[i] = r.NormFloat64()
		}
		xb, gb := stridedBuf(array.Float32, x, c.xs, 1), stridedBuf(array.Float32, g, gs, 1)
		var first []float64
		for run := range 8 {
			dwb, got := outBuf(array.Float32, c.ws)
			if err := ConvWeightGrad(dwb, xb, gb, p); err != nil {
				t.Fatal(err)
			}
			for i := range sizeOf(c.ws) {
				if run == 0 {
					first = append(first, got(i))
				} else if v := got(i); v != first[i] {
					t.Fatalf("%s: run %d: dw[%d] = %v, run 0 gave %v", c.name, run, i, v, first[i])
				}
			}
		}
	}
}

func sizeOf(s []int) int {
	n := 1
	for _, v := range s {
		n *= v
	}
	return n
}

// stridedBuf stores v of shape s in dtype dt with every step-th element
// used and one leading element, so that a kernel reads a channel stride
// of step and an offset.
func stridedBuf(dt array.DType, v []float64, s []int, step int) Buf {
	str := make([]int, len(s))
	n := step
	for i := len(s) - 1; i >= 0; i-- {
		str[i] = n
		n *= s[i]
	}
	wide := make([]float64, 1+step*len(v))
	for i, f := range v {
		wide[1+step*i] = f
	}
	b, _, _, _ := convBufs(dt, wide, str, s, nil, nil, nil)
	return b
}

// outBuf is a row-major result of shape s in dtype dt and a reader of
// its i-th element.
func outBuf(dt array.DType, s []int) (Buf, func(int) float64) {
	_, _, o, get := convBufs(dt, nil, nil, nil, nil, nil, s)
	return o, get
}

func TestConvWeightGradErrors(t *testing.T) {
	p := convCase(1, 1, 0, 0, 1, 1)
	x := viewOf(make([]float32, 10), array.Float32, []int{1, 5, 2}, nil, 0)
	g := viewOf(make([]float32, 15), array.Float32, []int{1, 5, 3}, nil, 0)
	for _, c := range []struct {
		name, want string
		dw, g      Buf
	}{
		{"dtype", "differ", viewOf(make([]float64, 6), array.Float64, []int{3, 1, 2}, nil, 0), g},
		{"cotangent size", "output size 5 on spatial axis 0", viewOf(make([]float32, 12), array.Float32, []int{3, 2, 2}, nil, 0), g},
		{"not row-major", "not row-major", viewOf(make([]float32, 12), array.Float32, []int{3, 1, 2}, []int{4, 4, 2}, 0), g},
	} {
		err := ConvWeightGrad(c.dw, x, c.g, p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
	xi := viewOf(make([]int32, 10), array.Int32, []int{1, 5, 2}, nil, 0)
	gi := viewOf(make([]int32, 15), array.Int32, []int{1, 5, 3}, nil, 0)
	dwi := viewOf(make([]int32, 6), array.Int32, []int{3, 1, 2}, nil, 0)
	if err := ConvWeightGrad(dwi, xi, gi, p); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Errorf("int32: %v, want an error saying it is not supported", err)
	}
}

// BenchmarkConvWeightGrad times the weight's cotangent of issue 20's
// 3×3 convolution (32×56×56×64 → 64, padding 1) and, for comparison in
// the same run, the forward convolution, which has the same flop count.
func BenchmarkConvWeightGrad(b *testing.B) {
	xs, ws, gs := []int{32, 56, 56, 64}, []int{64, 3, 3, 64}, []int{32, 56, 56, 64}
	p := convCase(2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)
	fill := func(s []int) []float32 {
		v := make([]float32, sizeOf(s))
		for i := range v {
			v[i] = float32(i%17-8) / 8
		}
		return v
	}
	x := viewOf(fill(xs), array.Float32, xs, nil, 0)
	g := viewOf(fill(gs), array.Float32, gs, nil, 0)
	w := viewOf(fill(ws), array.Float32, ws, nil, 0)
	dw := viewOf(make([]float32, sizeOf(ws)), array.Float32, ws, nil, 0)
	y := viewOf(make([]float32, sizeOf(gs)), array.Float32, gs, nil, 0)
	flops := 2 * float64(sizeOf(gs)) * float64(sizeOf(ws[1:]))
	b.Run("weight", func(b *testing.B) {
		for b.Loop() {
			if err := ConvWeightGrad(dw, x, g, p); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
	b.Run("forward", func(b *testing.B) {
		for b.Loop() {
			if err := Conv(y, x, w, p); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
}
