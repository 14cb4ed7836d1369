package metal_test

import (
	"fmt"
	"math"
	"math/rand"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
	"github.com/fathom-go/fathom/internal/opset"
)

// Cases of the integer dtypes of issue 17 (and uint8, whose Sum and Prod
// now give uint32) in the line-wise, sort, matmul, copy and create
// kernels, with values over each dtype's whole range rather than the
// suite's small mix: sums and products that overflow the element type
// (the accumulators are MLX's: int32 or uint32 for the narrow types, the
// type itself for the wide ones, wrapping), unsigned values with the top
// bit set (which a signed comparison would order first), uint64 values
// above 2^63, and few distinct values, so that ties decide arg
// reductions and sorts. Long folds go through the two-pass split and the
// column kernel.

func init() { registerFamily("ints", intCases) }

// newIntDTypes are the dtypes these cases cover.
var newIntDTypes = []array.DType{array.Int8, array.Int16, array.Uint16, array.Uint32, array.Uint64, array.Uint8}

// fullRange draws values over all of dt (uint64: half of them at or above
// 2^63, drawn as negative int64s).
func fullRange(dt array.DType) func(r *rand.Rand, i int) float64 {
	return func(r *rand.Rand, _ int) float64 {
		switch dt {
		case array.Int8:
			return float64(r.Intn(256) - 128)
		case array.Uint8:
			return float64(r.Intn(256))
		case array.Int16:
			return float64(r.Intn(1<<16) - 1<<15)
		case array.Uint16:
			return float64(r.Intn(1 << 16))
		case array.Uint32:
			return float64(r.Uint32())
		}
		if r.Intn(2) == 0 {
			return -float64(r.Int63n(1 << 53))
		}
		return float64(r.Int63n(1 << 53))
	}
}

// fewInts draws from the extremes of dt and a few small values: many
// ties, and the largest and smallest values side by side.
func fewInts(dt array.DType) func(r *rand.Rand, i int) float64 {
	vals := []float64{0, 1, 2, 3}
	switch dt {
	case array.Int8:
		vals = append(vals, -1, math.MaxInt8, math.MinInt8)
	case array.Int16:
		vals = append(vals, -1, math.MaxInt16, math.MinInt16)
	case array.Uint8:
		vals = append(vals, math.MaxUint8, 128)
	case array.Uint16:
		vals = append(vals, math.MaxUint16, 1<<15)
	case array.Uint32:
		vals = append(vals, math.MaxUint32, 1<<31)
	case array.Uint64:
		vals = append(vals, -1, math.MinInt64) // 2^64-1 and 2^63
	}
	return func(r *rand.Rand, _ int) float64 { return vals[r.Intn(len(vals))] }
}

func intCases() []Case {
	var cs []Case
	for _, dt := range newIntDTypes {
		full, few := fullRange(dt), fewInts(dt)
		for op := range opset.NumReduceOps {
			for _, s := range []reduceShape{
				{[]int{3, 9000}, []int{1}, Contig, Contig, "few long rows, split"},
				{[]int{9000, 3}, []int{0}, Sliced, Contig, "few long columns, split"},
				{[]int{300, 40}, []int{0}, Contig, Contig, "columns"},
				{[]int{9, 2100}, []int{1}, Transposed, Contig, "transposed rows"},
				{[]int{17, 17, 17}, []int{0, 2}, Sliced, Transposed, "strided folds"},
			} {
				gen := full
				if op == opset.All || op == opset.Any {
					gen = few // zeros, so that All is not always true
				}
				odt, _ := op.Result(dt)
				cs = append(cs, Case{
					Name: fmt.Sprintf("%v/%v/%v/axes%v/%v/%s", op, dt, s.shape, s.axes, s.layout, s.why),
					In:   []Operand{Op(dt, s.shape...).With(s.layout).Values(gen)},
					Out:  []Operand{Op(odt, dropAxes(s.shape, s.axes)...).With(s.outLayout)},
					GPU: func(out, in []metal.View) ([]metal.Launch, error) {
						return metal.Reduce(op, out[0], in[0], s.axes)
					},
					CPU: func(out, in []cpu.Buf) error { return cpu.Reduce(op, out[0], in[0], s.axes) },
				})
			}
		}
		for _, s := range []axisShape{{[]int{4, 300}, 1, Contig}, {[]int{2, 9000}, 1, Sliced}, {[]int{300, 3}, 0, Transposed}} {
			name := fmt.Sprintf("%v/%v/axis%d/%v", dt, s.shape, s.axis, s.layout)
			in := Op(dt, s.shape...).With(s.layout).Values(few)
			for op := range opset.NumArgOps {
				cs = append(cs, Case{
					Name: fmt.Sprintf("%v/%s", op, name),
					In:   []Operand{in},
					Out:  []Operand{Op(array.Int32, dropAxes(s.shape, []int{s.axis})...)},
					GPU: func(out, in []metal.View) ([]metal.Launch, error) {
						return metal.ArgReduce(op, out[0], in[0], s.axis)
					},
					CPU: func(out, in []cpu.Buf) error { return cpu.ArgReduce(op, out[0], in[0], s.axis) },
				})
			}
			cs = append(cs, Case{
				Name: "Sort/" + name,
				In:   []Operand{Op(dt, s.shape...).With(s.layout).Values(full)},
				Out:  []Operand{Op(dt, s.shape...)},
				GPU:  func(out, in []metal.View) ([]metal.Launch, error) { return metal.Sort(out[0], in[0], s.axis) },
				CPU:  func(out, in []cpu.Buf) error { return cpu.Sort(out[0], in[0], s.axis) },
			}, Case{
				Name: "ArgSort/" + name,
				In:   []Operand{in},
				Out:  []Operand{Op(array.Int32, s.shape...)},
				GPU:  func(out, in []metal.View) ([]metal.Launch, error) { return metal.ArgSort(out[0], in[0], s.axis) },
				CPU:  func(out, in []cpu.Buf) error { return cpu.ArgSort(out[0], in[0], s.axis) },
			})
			k := min(7, s.shape[s.axis])
			oshape := append([]int{}, s.shape...)
			oshape[s.axis] = k
			cs = append(cs, Case{
				Name: "TopK/" + name,
				In:   []Operand{Op(dt, s.shape...).With(s.layout).Values(full)},
				Out:  []Operand{Op(dt, oshape...)},
				GPU:  func(out, in []metal.View) ([]metal.Launch, error) { return metal.TopK(out[0], in[0], s.axis, k) },
				CPU:  func(out, in []cpu.Buf) error { return cpu.TopK(out[0], in[0], s.axis, k) },
			})
		}
		// products that wrap: gemm, gemv, and gemv_t split over K
		for _, s := range [][3]int{{37, 29, 45}, {37, 300, 1}, {1, 1500, 33}} {
			cs = append(cs, Case{
				Name: fmt.Sprintf("MatMul/%v/%dx%dx%d", dt, s[0], s[1], s[2]),
				In:   []Operand{Op(dt, s[0], s[1]).Values(full), Op(dt, s[1], s[2]).With(Transposed).Values(full)},
				Out:  []Operand{Op(dt, s[0], s[2])},
				GPU:  func(out, in []metal.View) ([]metal.Launch, error) { return metal.MatMul(out[0], in[0], in[1]) },
				CPU:  func(out, in []cpu.Buf) error { return cpu.MatMul(out[0], in[0], in[1]) },
			})
		}
		for _, to := range []array.DType{array.Float32, array.Float16, array.Int64, array.Int8, array.Uint16, array.Uint64, array.Bool} {
			if to == dt {
				continue
			}
			cs = append(cs, Case{
				Name: fmt.Sprintf("Copy/%v->%v/full range", dt, to),
				In:   []Operand{Op(dt, OddShape...).With(Sliced).Values(full)},
				Out:  []Operand{Op(to, OddShape...)},
				GPU:  func(out, in []metal.View) ([]metal.Launch, error) { return metal.Copy(out[0], in[0]) },
				CPU:  func(out, in []cpu.Buf) error { return cpu.Copy(out[0], in[0]) },
			})
		}
	}
	return cs
}
