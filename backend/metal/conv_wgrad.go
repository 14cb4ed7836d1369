package metal

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/metal/internal/plan"
)

// ConvWeightGrad plans dw, the cotangent of a convolution's weight, as
// cpu.ConvWeightGrad computes it: for y = conv(x, w) with p (see Conv)
// and the cotangent g of y, dw[co, k, ci] = Σ over batch and output
// positions o of g[n, o, co]·x[n, o·Stride + k·KernelDilation − PadLo,
// group(co)·C_in/groups + ci], with x dilated by InputDilation and k
// mirrored under Flip. x is [N, ...in, C_in], g [N, ...out, C_out] and dw
// [C_out, ...kernel, C_in/groups], all read or written through any
// strides. float32, float16 and bfloat16 accumulate in float32 and round
// once; 1 to 3 spatial axes.
//
// Each threadgroup computes a 64×64 block of one group's dw (output
// channels × kernel positions and input channels), looping over every
// row of g and reading the patches straight from x.
func ConvWeightGrad(dw, x, g View, p ConvParams) ([]Launch, error) {
	const op = "metal.ConvWeightGrad"
	if err := checkViews(op, []string{"input", "cotangent", "weight"}, x, g, dw); err != nil {
		return nil, err
	}
	if x.DType != dw.DType || g.DType != dw.DType {
		return nil, array.Errorf(op, "dtypes %v and %v -> %v differ", x.DType, g.DType, dw.DType)
	}
	if !dw.DType.IsFloat() {
		return nil, array.Errorf(op, "dtype %v not supported: convolution is for floats", dw.DType)
	}
	d := len(x.Shape) - 2
	if d < 1 || d > maxWGradDims || len(dw.Shape) != d+2 || len(g.Shape) != d+2 || len(p.Stride) != d || len(p.PadLo) != d ||
		len(p.PadHi) != d || len(p.KernelDilation) != d || len(p.InputDilation) != d || p.Groups < 1 {
		return nil, array.Errorf(op, "shapes %v, %v -> %v do not fit 1 to %d spatial axes and parameters %+v", x.Shape, g.Shape, dw.Shape, maxWGradDims, p)
	}
	n, cin, cout := x.Shape[0], x.Shape[d+1], dw.Shape[0]
	if cin%p.Groups != 0 || cout%p.Groups != 0 || dw.Shape[d+1] != cin/p.Groups || g.Shape[0] != n || g.Shape[d+1] != cout {
		return nil, array.Errorf(op, "shapes %v, %v -> %v do not fit %d groups", x.Shape, g.Shape, dw.Shape, p.Groups)
	}
	lead := maxWGradDims - d
	var in, osp, kern, stride, lo, kdil, idil [maxWGradDims]int
	xs, gs, ws := [5]int{x.Strides[0], 0, 0, 0, x.Strides[d+1]}, [5]int{g.Strides[0], 0, 0, 0, g.Strides[d+1]}, [5]int{dw.Strides[0], 0, 0, 0, dw.Strides[d+1]}
	for i := range maxWGradDims {
		in[i], osp[i], kern[i], stride[i], kdil[i], idil[i] = 1, 1, 1, 1, 1, 1
	}
	rows, kk := n, 1
	for i := range d {
		a := lead + i
		if p.Stride[i] < 1 || p.KernelDilation[i] < 1 || p.InputDilation[i] < 1 {
			return nil, array.Errorf(op, "strides and dilations %v, %v, %v must be positive", p.Stride, p.KernelDilation, p.InputDilation)
		}
		in[a], kern[a], osp[a] = x.Shape[1+i], dw.Shape[1+i], g.Shape[1+i]
		stride[a], lo[a], kdil[a], idil[a] = p.Stride[i], p.PadLo[i], p.KernelDilation[i], p.InputDilation[i]
		xs[1+a], gs[1+a], ws[1+a] = x.Strides[1+i], g.Strides[1+i], dw.Strides[1+i]
		span := (in[a]-1)*idil[a] + 1 + p.PadLo[i] + p.PadHi[i] - (kern[a]-1)*kdil[a]
		if in[a] == 0 || kern[a] == 0 || span < 1 {
			if osp[a] != 0 {
				return nil, array.Errorf(op, "output size %d on spatial axis %d of %v, want 0", osp[a], i, g.Shape)
			}
		} else if want := (span-1)/stride[a] + 1; osp[a] != want {
			return nil, array.Errorf(op, "output size %d on spatial axis %d of %v, want %d", osp[a], i, g.Shape, want)
		}
		rows *= osp[a]
		kk *= kern[a]
	}
	if dw.Size() == 0 {
		return nil, nil
	}
	if rows == 0 {
		return Fill(dw, 0)
	}
	cig, cog := cin/p.Groups, cout/p.Groups
	xArg, xOff := bindAt(x, false)
	gArg, gOff := bindAt(g, false)
	wArg, wOff := bindAt(dw, true)
	flip := 0
	if p.Flip {
		flip = 1
	}
	// Few blocks of dw would leave most of a GPU idle while each loops
	// over every row: the rows are then split in parts, whose partial
	// sums a second kernel adds.
	tilesN, tilesM := (kk*cig+63)/64, (cog+63)/64
	parts := 1
	if blocks := tilesN * tilesM * p.Groups; blocks < wgradMinBlocks {
		parts = max(1, min((rows+wgradMinRows-1)/wgradMinRows, (wgradMinBlocks+blocks-1)/blocks))
	}
	chunk := (rows + parts - 1) / parts
	parts = (rows + chunk - 1) / chunk
	pr := params{}.add(n, cin, cout, p.Groups, cig, cog, rows, kk, kk*cig, flip, parts, chunk, xOff, gOff, wOff)
	for _, v := range [][maxWGradDims]int{in, osp, kern, stride, lo, kdil, idil} {
		pr = pr.add(v[:]...)
	}
	pr = pr.add(xs[:]...).add(gs[:]...).add(ws[:]...)
	if limit := int(maxGridDim.Load()); tilesN*256 > limit || tilesM > limit || parts*p.Groups > limit {
		return nil, array.Errorf(op, "a weight of shape %v in %d groups exceeds the GPU's grid limit", dw.Shape, p.Groups)
	}
	dt := dw.DType.String()
	l := Launch{
		Library: "conv_wgrad.metal", Kernel: "conv_wgrad_" + dt, Params: pr.bytes(),
		Grid: [3]int{tilesN * 256, tilesM, parts * p.Groups}, Group: [3]int{256, 1, 1}, Fit: plan.FitGroups,
	}
	if parts == 1 {
		// The partial-sum binding is unused: dw again, unwritten.
		l.Buffers = []bufArg{xArg, gArg, wArg, {Mem: wArg.Mem, Offset: wArg.Offset}}
		return []Launch{l}, nil
	}
	part, err := newScratch(parts*cout*kk*cig*4, dw, x, g)
	if err != nil {
		return nil, err
	}
	l.Kernel = "conv_wgrad_part_" + dt
	l.Buffers = []bufArg{xArg, gArg, {Mem: wArg.Mem, Offset: wArg.Offset}, {Mem: part, Write: true}}
	sum := Launch{
		Library: "conv_wgrad.metal", Kernel: "conv_wgrad_sum_" + dt, Buffers: []bufArg{{Mem: part}, wArg}, Params: l.Params,
		Grid: [3]int{kk * cig, cout, 1}, Group: [3]int{min(kk*cig, groupSize), 1, 1}, Fit: plan.FitThreads,
	}
	return []Launch{l, sum}, nil
}

// wgradMinBlocks is the number of threadgroups below which ConvWeightGrad
// splits the rows in parts: a few times the cores of a large Apple GPU.
const wgradMinBlocks = 128

// wgradMinRows is the fewest rows a part takes, so that its loop
// outweighs writing and adding its partial sums.
const wgradMinRows = 1024

// maxWGradDims is the number of spatial axes the kernel takes; fewer are
// widened by leading axes of size 1.
const maxWGradDims = 3
