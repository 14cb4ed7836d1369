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
	cg, err := convGeometry(op, [3]string{"input", "weight gradient", "cotangent"}, x, dw, g, p)
	if err != nil {
		return nil, err
	}
	n, cin, cout, rows, kk := cg.n, cg.cin, cg.cout, cg.rows, cg.kk
	in, osp, kern, stride, lo, kdil, idil := cg.in, cg.osp, cg.kern, cg.stride, cg.lo, cg.kdil, cg.idil
	xs, gs, ws := cg.xs, cg.os, cg.ws
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
	for _, v := range [][maxConvDims]int{in, osp, kern, stride, lo, kdil, idil} {
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
