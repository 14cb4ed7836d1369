package ops

import (
	"slices"

	"github.com/fathom-go/fathom/array"
)

// Shape rules (array.ShapeRule) for shapeless compilation: a shapeless
// trace replayed on inputs of new shapes asks each primitive for its
// output shapes. A primitive whose output shape is fixed by Go values
// (Reshape, BroadcastTo, Slice) has no rule, and such a replay is an
// error. Each rule re-checks what the operation checked at the call, and
// returns an *array.Error when the new shapes do not fit.

func sameShape(in []*array.Array) ([][]int, error) { return [][]int{in[0].Shape()}, nil }

func broadcastShape(name string, in []*array.Array) ([][]int, error) {
	shapes := make([][]int, len(in))
	for i, x := range in {
		shapes[i] = x.Shape()
	}
	var out []int
	err := array.Try(func() { out = BroadcastShapes(name, shapes...) })
	return [][]int{out}, err
}

// checkAxes reports an error unless every axis is within ndim.
func checkAxes(name string, axes []int, ndim int) error {
	for _, a := range axes {
		if a < 0 || a >= ndim {
			return array.Errorf(name, "axis %d out of range for %d dimensions", a, ndim)
		}
	}
	return nil
}

func (p *Unary) OutputShapes(in []*array.Array) ([][]int, error) { return sameShape(in) }
func (p *Binary) OutputShapes(in []*array.Array) ([][]int, error) {
	return broadcastShape("ops."+p.Name(), in)
}
func (p *WherePrim) OutputShapes(in []*array.Array) ([][]int, error) {
	return broadcastShape("ops.Where", in)
}
func (p *AsTypePrim) OutputShapes(in []*array.Array) ([][]int, error)       { return sameShape(in) }
func (p *CopyPrim) OutputShapes(in []*array.Array) ([][]int, error)         { return sameShape(in) }
func (p *StopGradientPrim) OutputShapes(in []*array.Array) ([][]int, error) { return sameShape(in) }
func (p *ScanPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	return sameShape(in)
}
func (p *SoftmaxPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	return sameShape(in)
}
func (p *LogSoftmaxPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	return sameShape(in)
}
func (p *SortPrim) OutputShapes(in []*array.Array) ([][]int, error)    { return sameShape(in) }
func (p *ArgSortPrim) OutputShapes(in []*array.Array) ([][]int, error) { return sameShape(in) }
func (p *PutAlongAxisPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	return sameShape(in)
}

func (p *ReducePrim) OutputShapes(in []*array.Array) ([][]int, error) {
	if err := checkAxes("ops."+p.Name(), p.Axes, in[0].Ndim()); err != nil {
		return nil, err
	}
	kept, _ := reducedShape(in[0].Shape(), p.Axes)
	return [][]int{kept}, nil
}

func (p *ArgReducePrim) OutputShapes(in []*array.Array) ([][]int, error) {
	if err := checkAxes("ops."+p.Name(), []int{p.Axis}, in[0].Ndim()); err != nil {
		return nil, err
	}
	kept, _ := reducedShape(in[0].Shape(), []int{p.Axis})
	return [][]int{kept}, nil
}

func (p *LogSumExpPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	if err := checkAxes("ops.LogSumExp", []int{p.Axis}, in[0].Ndim()); err != nil {
		return nil, err
	}
	kept, _ := reducedShape(in[0].Shape(), []int{p.Axis})
	return [][]int{kept}, nil
}

func (p *TransposePrim) OutputShapes(in []*array.Array) ([][]int, error) {
	s := in[0].Shape()
	if len(s) != len(p.Axes) {
		return nil, array.Errorf("ops.Transpose", "permutation %v for shape %v", p.Axes, s)
	}
	out := make([]int, len(s))
	for i, a := range p.Axes {
		out[i] = s[a]
	}
	return [][]int{out}, nil
}

func (p *TopKPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	s := in[0].Shape()
	if err := checkAxes("ops.TopK", []int{p.Axis}, len(s)); err != nil {
		return nil, err
	}
	if p.K > s[p.Axis] {
		return nil, array.Errorf("ops.TopK", "k=%d for axis %d of shape %v", p.K, p.Axis, s)
	}
	s[p.Axis] = p.K
	return [][]int{s}, nil
}

func (p *MatMulPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	as, bs := in[0].Shape(), in[1].Shape()
	if len(as) < 2 || len(bs) < 2 {
		return nil, array.Errorf("ops.MatMul", "shapes %v and %v: the traced operands were matrices", as, bs)
	}
	if as[len(as)-1] != bs[len(bs)-2] {
		return nil, array.Errorf("ops.MatMul", "shapes %v and %v: inner dimensions %d and %d differ", as, bs, as[len(as)-1], bs[len(bs)-2])
	}
	batch := matBatch(as, bs)
	if batch == nil {
		return nil, array.Errorf("ops.MatMul", "shapes %v and %v: batch dimensions do not broadcast", as, bs)
	}
	return [][]int{append(batch, as[len(as)-2], bs[len(bs)-1])}, nil
}

func (p *TakePrim) OutputShapes(in []*array.Array) ([][]int, error) {
	s := in[0].Shape()
	if err := checkAxes("ops.Take", []int{p.Axis}, len(s)); err != nil {
		return nil, err
	}
	out := slices.Concat(s[:p.Axis], in[1].Shape(), s[p.Axis+1:])
	return [][]int{out}, nil
}

func (p *TakeAlongAxisPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	var out []int
	err := array.Try(func() { out = alongAxisShape("ops.TakeAlongAxis", in[0], in[1], p.Axis) })
	return [][]int{out}, err
}

func (p *ConcatenatePrim) OutputShapes(in []*array.Array) ([][]int, error) {
	out := in[0].Shape()
	if err := checkAxes("ops.Concatenate", []int{p.Axis}, len(out)); err != nil {
		return nil, err
	}
	for _, x := range in[1:] {
		s := x.Shape()
		if len(s) != len(out) {
			return nil, array.Errorf("ops.Concatenate", "shapes %v and %v have different ranks", out, s)
		}
		for d := range s {
			if d != p.Axis && s[d] != out[d] {
				return nil, array.Errorf("ops.Concatenate", "shapes %v and %v differ off axis %d", out, s, p.Axis)
			}
		}
		out[p.Axis] += s[p.Axis]
	}
	return [][]int{out}, nil
}

func (p *PadPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	s := in[0].Shape()
	if len(s) != len(p.Widths) {
		return nil, array.Errorf("ops.Pad", "%d widths for shape %v", len(p.Widths), s)
	}
	for d, w := range p.Widths {
		s[d] += w[0] + w[1]
	}
	return [][]int{s}, nil
}
