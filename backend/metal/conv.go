package metal

import (
	"fmt"
	"math"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/metal/internal/plan"
)

// ConvParams are a convolution's parameters over d spatial axes, each
// slice d long, as cpu.ConvParams (MLX's conv_general). Padding may be
// negative, which crops.
type ConvParams struct {
	Stride, PadLo, PadHi, KernelDilation, InputDilation []int
	Groups                                              int
	Flip                                                bool
}

// maxConvDims is the number of spatial axes the kernels take (MLX's
// limit too); fewer are widened by leading axes of size 1.
const maxConvDims = 3

// convDirectMaxCog: groups with fewer output channels than this
// (depthwise convolutions, above all) run conv_direct, a thread per
// output, since most of a 64-channel GEMM tile would be idle.
const convDirectMaxCog = 16

// Conv plans out = conv(x, w) as cpu.Conv computes it, channels last: x
// is [N, ...in, C_in] and w [C_out, ...kernel, C_in/groups], read
// through any strides; out is [N, ...out, C_out] with the spatial sizes p
// gives, any strides. Output position o reads the input, dilated by
// InputDilation and padded, at o·Stride + k·KernelDilation for kernel
// position k (mirrored when Flip is set). float32, float16 and bfloat16
// accumulate in float32 and round once; 1 to 3 spatial axes.
//
// Each group is a product of the patches (output positions × kernel
// positions and the group's input channels) with the group's weight. It
// runs as an implicit GEMM, MLX's approach: each threadgroup computes a
// 64×64 block of output positions × output channels, reading the patch
// tile straight from x by index arithmetic, so no im2col buffer exists.
// Groups of fewer than 16 output channels (depthwise) run a thread per
// output instead.
func Conv(out, x, w View, p ConvParams) ([]Launch, error) {
	const op = "metal.Conv"
	if err := checkViews(op, []string{"input", "weight", "output"}, x, w, out); err != nil {
		return nil, err
	}
	cg, err := convGeometry(op, [3]string{"input", "weight", "output"}, x, w, out, p)
	if err != nil {
		return nil, err
	}
	n, cin, cout, rows, kk := cg.n, cg.cin, cg.cout, cg.rows, cg.kk
	in, osp, kern, stride, lo, kdil, idil := cg.in, cg.osp, cg.kern, cg.stride, cg.lo, cg.kdil, cg.idil
	xs, ws, os := cg.xs, cg.ws, cg.os
	if out.Size() == 0 {
		return nil, nil
	}
	cig, cog := cin/p.Groups, cout/p.Groups
	if kk*cig == 0 {
		return Fill(out, 0)
	}
	xArg, xOff := bindAt(x, false)
	wArg, wOff := bindAt(w, false)
	oArg, oOff := bindAt(out, true)
	flip := 0
	if p.Flip {
		flip = 1
	}
	pr := params{}.add(n, cin, cout, p.Groups, cig, cog, rows, kk, kk*cig, flip, xOff, wOff, oOff)
	for _, v := range [][maxConvDims]int{in, osp, kern, stride, lo, kdil, idil} {
		pr = pr.add(v[:]...)
	}
	pr = pr.add(xs[:]...).add(ws[:]...).add(os[:]...)
	l := Launch{Library: "conv.metal", Buffers: []bufArg{xArg, wArg, oArg}, Params: pr.bytes()}
	limit := int(maxGridDim.Load())
	if cog < convDirectMaxCog {
		if rows > limit {
			return nil, array.Errorf(op, "%d output positions exceed the GPU's grid limit", rows)
		}
		l.Kernel = "conv_direct_" + out.DType.String()
		gx := min(cout, groupSize)
		l.Grid, l.Group, l.Fit = [3]int{cout, rows, 1}, [3]int{gx, min(rows, groupSize/gx), 1}, plan.FitThreads
		return []Launch{l}, nil
	}
	tilesM, tilesN := (rows+63)/64, (cog+63)/64
	if tilesM > limit || p.Groups > limit {
		return nil, array.Errorf(op, "%d output positions in %d groups exceed the GPU's grid limit", rows, p.Groups)
	}
	l.Kernel = "conv_gemm_" + out.DType.String()
	l.Grid, l.Group, l.Fit = [3]int{tilesN * 256, tilesM, p.Groups}, [3]int{256, 1, 1}, plan.FitGroups
	return []Launch{l}, nil
}

// convGeom is a convolution's geometry as the kernels take it: the
// spatial axes widened to maxConvDims by leading axes of size 1, the
// strides of x, w and out (batch or output channel, three spatial,
// channel), the number of output positions (rows) and of kernel
// positions (kk).
type convGeom struct {
	n, cin, cout, rows, kk                int
	in, osp, kern, stride, lo, kdil, idil [maxConvDims]int
	xs, ws, os                            [5]int
}

// convGeometry checks that out = conv(x, w) with p fits (dtypes, ranks,
// groups, output sizes, the kernels' 32-bit positions) and returns its
// geometry. ConvWeightGrad's views play the same parts (its dw is w, its
// cotangent out); names name the three in errors.
func convGeometry(op string, names [3]string, x, w, out View, p ConvParams) (convGeom, error) {
	var g convGeom
	fail := func(format string, args ...any) (convGeom, error) {
		return g, array.Errorf(op, "%s %v, %s %v, %s %v: %s", names[0], x.Shape, names[1], w.Shape, names[2], out.Shape, fmt.Sprintf(format, args...))
	}
	if x.DType != out.DType || w.DType != out.DType {
		return fail("dtypes %v, %v and %v differ", x.DType, w.DType, out.DType)
	}
	if !out.DType.IsFloat() {
		return fail("dtype %v not supported: convolution is for floats", out.DType)
	}
	d := len(x.Shape) - 2
	if d < 1 || d > maxConvDims || len(w.Shape) != d+2 || len(out.Shape) != d+2 || len(p.Stride) != d || len(p.PadLo) != d ||
		len(p.PadHi) != d || len(p.KernelDilation) != d || len(p.InputDilation) != d || p.Groups < 1 {
		return fail("want 1 to %d spatial axes, with parameters %+v", maxConvDims, p)
	}
	g.n, g.cin, g.cout = x.Shape[0], x.Shape[d+1], w.Shape[0]
	if g.cin%p.Groups != 0 || g.cout%p.Groups != 0 || w.Shape[d+1] != g.cin/p.Groups || out.Shape[0] != g.n || out.Shape[d+1] != g.cout {
		return fail("do not fit %d groups", p.Groups)
	}
	lead := maxConvDims - d
	g.xs = [5]int{x.Strides[0], 0, 0, 0, x.Strides[d+1]}
	g.ws = [5]int{w.Strides[0], 0, 0, 0, w.Strides[d+1]}
	g.os = [5]int{out.Strides[0], 0, 0, 0, out.Strides[d+1]}
	for i := range maxConvDims {
		g.in[i], g.osp[i], g.kern[i], g.stride[i], g.kdil[i], g.idil[i] = 1, 1, 1, 1, 1, 1
	}
	g.rows, g.kk = g.n, 1
	for i := range d {
		a := lead + i
		if p.Stride[i] < 1 || p.KernelDilation[i] < 1 || p.InputDilation[i] < 1 {
			return fail("strides and dilations %v, %v, %v must be positive", p.Stride, p.KernelDilation, p.InputDilation)
		}
		g.in[a], g.kern[a], g.osp[a] = x.Shape[1+i], w.Shape[1+i], out.Shape[1+i]
		g.stride[a], g.lo[a], g.kdil[a], g.idil[a] = p.Stride[i], p.PadLo[i], p.KernelDilation[i], p.InputDilation[i]
		g.xs[1+a], g.ws[1+a], g.os[1+a] = x.Strides[1+i], w.Strides[1+i], out.Strides[1+i]
		span := (g.in[a]-1)*g.idil[a] + 1 + p.PadLo[i] + p.PadHi[i] - (g.kern[a]-1)*g.kdil[a]
		if g.in[a] == 0 || g.kern[a] == 0 || span < 1 {
			if g.osp[a] != 0 {
				return fail("%s size %d on spatial axis %d, want 0", names[2], g.osp[a], i)
			}
		} else if want := (span-1)/g.stride[a] + 1; g.osp[a] != want {
			return fail("%s size %d on spatial axis %d, want %d", names[2], g.osp[a], i, want)
		}
		// The kernels index positions on the padded, dilated input in
		// 32-bit arithmetic.
		if reach := (g.in[a]-1)*g.idil[a] + 1 + abs(p.PadLo[i]) + abs(p.PadHi[i]) + (g.kern[a]-1)*g.kdil[a] + g.osp[a]*g.stride[a]; reach > math.MaxInt32 {
			return fail("with %+v, positions on spatial axis %d exceed the GPU kernels' 32-bit range", p, i)
		}
		g.rows *= g.osp[a]
		g.kk *= g.kern[a]
	}
	if g.kk > math.MaxInt32 {
		return fail("%d kernel positions exceed the GPU kernels' 32-bit range", g.kk)
	}
	return g, nil
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
