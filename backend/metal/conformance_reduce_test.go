package metal_test

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
	"github.com/fathom-go/fathom/internal/opset"
)

// Cases of the reductions, arg reductions, softmax family and scans.

func init() {
	registerFamily("reduce", reduceCases)
	registerFamily("argreduce", argReduceCases)
	registerFamily("softmax", softmaxCases)
	registerFamily("scan", scanCases)
}

// lineDTypes are the dtypes of the line-wise kernels (no complex64).
var lineDTypes = []array.DType{array.Float32, array.Float16, array.BFloat16, array.Uint8, array.Int32, array.Int64, array.Bool,
	array.Int8, array.Int16, array.Uint16, array.Uint32, array.Uint64}

// nearOne draws values in [0.9, 1.1): products of many of them neither
// overflow nor underflow, so their order does not matter beyond rounding.
func nearOne(r *rand.Rand, _ int) float64 { return 0.9 + 0.2*r.Float64() }

// fewValues draws from a few small values with some NaNs and infinities,
// so that ties and NaNs decide arg reductions and sorts.
func fewValues(r *rand.Rand, _ int) float64 {
	switch v := r.Intn(40); {
	case v == 0:
		return math.NaN()
	case v == 1:
		return math.Inf(-1)
	case v == 2:
		return math.Inf(1)
	default:
		return float64(v%9) - 4
	}
}

// rareSpecials draws values in [-20, 20) with one in 200 NaN or infinite:
// most softmax lines are finite, a few are not.
func rareSpecials(r *rand.Rand, _ int) float64 {
	if r.Intn(200) == 0 {
		return []float64{math.NaN(), math.Inf(1), math.Inf(-1)}[r.Intn(3)]
	}
	return 40*r.Float64() - 20
}

// dropAxes returns shape without the axes.
func dropAxes(shape, axes []int) []int {
	var kept []int
	for i, d := range shape {
		if !slices.Contains(axes, i) {
			kept = append(kept, d)
		}
	}
	return kept
}

// reduceShape is a reduction of an input shape over axes stored with
// layout (and the output with outLayout).
type reduceShape struct {
	shape     []int
	axes      []int
	layout    Layout
	outLayout Layout
	why       string
}

var reduceShapes = []reduceShape{
	{OddShape, []int{2}, Contig, Contig, "rows"},
	{OddShape, []int{2}, Sliced, Contig, "rows of a sliced input"},
	{OddShape, []int{0}, Transposed, Contig, "a transposed input"},
	{[]int{37, 40}, []int{0}, Contig, Contig, "columns"},
	{[]int{37, 40}, []int{0}, Broadcast, Contig, "columns of a broadcast input"},
	{[]int{6, 7, 8}, []int{0, 2}, Contig, Transposed, "folded dims that do not merge, strided output"},
	{OddShape, []int{0, 1, 2}, Contig, Contig, "everything"},
	{[]int{5, 300}, []int{1}, Contig, Contig, "long rows, a threadgroup each"},
	{[]int{9000}, []int{0}, Contig, Contig, "split in two passes"},
	{[]int{3, 4}, nil, Transposed, Contig, "no axes"},
	{nil, nil, Contig, Contig, "0-d"},
	{[]int{0, 5}, []int{0}, Contig, Contig, "empty folds"},
	{[]int{5, 0}, []int{0}, Contig, Contig, "empty output"},
}

// bigReduceShapes run for float32 and int32 only: they exercise the
// plan's choices on larger arrays, which are slow on the harness.
var bigReduceShapes = []reduceShape{
	{[]int{3, 9000}, []int{1}, Contig, Contig, "few long rows, split"},
	{[]int{9000, 3}, []int{0}, Contig, Contig, "few long columns, split"},
	{[]int{100, 70, 3}, []int{0, 2}, Sliced, Contig, "strided folds"},
	{[]int{9, 2100}, []int{1}, Transposed, Contig, "transposed rows"},
	{[]int{2, 70, 130}, []int{1, 2}, Contig, Contig, "contiguous multi-axis folds"},
	{[]int{300, 40}, []int{0}, Contig, Contig, "columns, several threadgroups"},
	{[]int{4, 1100, 1}, []int{1, 2}, Contig, Contig, "size-1 axes"},
	{[]int{2049, 33}, []int{0, 1}, Contig, Contig, "everything, large"},
	{[]int{17, 17, 17}, []int{0, 1, 2}, Sliced, Contig, "odd sizes everywhere"},
}

func reduceCases() []Case {
	var cs []Case
	add := func(op opset.ReduceOp, dt array.DType, s reduceShape) {
		name := fmt.Sprintf("%s/%v/%v/axes%v/%v/%s", op, dt, s.shape, s.axes, s.layout, s.why)
		in := Op(dt, s.shape...).With(s.layout)
		if op == opset.Prod && dt.IsFloat() {
			in = in.Values(nearOne)
		}
		odt, _ := op.Result(dt)
		kept := dropAxes(s.shape, s.axes)
		c := Case{
			Name: name,
			In:   []Operand{in},
			Out:  []Operand{Op(odt, kept...).With(s.outLayout)},
			GPU: func(out, in []metal.View) ([]metal.Launch, error) {
				return metal.Reduce(op, out[0], in[0], s.axes)
			},
			CPU: func(out, in []cpu.Buf) error { return cpu.Reduce(op, out[0], in[0], s.axes) },
		}
		n := 1
		for _, ax := range s.axes {
			n *= s.shape[ax]
		}
		if op == opset.Sum || op == opset.Prod {
			// Another order of additions: the error grows with the fold.
			c.Tol = max(1, float64(n)/20)
		}
		if n == 0 && (op == opset.Max || op == opset.Min) && shapeSize(kept) > 0 {
			c.WantErr = "no identity"
		}
		if !op.Supported(array.DeviceGPU, dt) {
			// Sum and Prod of uint8 give uint32 (MLX's rule), which the
			// GPU's kernels do not take yet.
			c.WantErr = "is not supported on the GPU"
		}
		cs = append(cs, c)
	}
	for op := range opset.NumReduceOps {
		for _, dt := range lineDTypes {
			for _, s := range reduceShapes {
				add(op, dt, s)
			}
			if dt == array.Float32 || dt == array.Int32 {
				for _, s := range bigReduceShapes {
					add(op, dt, s)
				}
			}
			if dt == array.Int32 && op == opset.Sum {
				// Lines longer than 8192 that are not split: 1024 threads
				// each, fitted on pipelines that allow fewer.
				add(op, dt, reduceShape{[]int{256, 8200}, []int{1}, Contig, Contig, "long rows, 1024 threads each"})
			}
		}
	}
	f32 := func(shape ...int) Operand { return Op(array.Float32, shape...) }
	bad := []struct {
		name, want string
		in, out    Operand
		op         opset.ReduceOp
		axes       []int
	}{
		{"float64", "float64 is not supported on the GPU", Op(array.Float64, 3, 4), Op(array.Float64, 3), opset.Sum, []int{1}},
		{"complex64", "complex64 is not supported on the GPU", Op(array.Complex64, 3, 4), Op(array.Complex64, 3), opset.Sum, []int{1}},
		{"bad op", "ReduceOp(9) is not defined", f32(3, 4), f32(3), opset.ReduceOp(9), []int{1}},
		{"wrong output dtype", "gives bool", f32(3, 4), f32(3), opset.All, []int{1}},
	}
	for _, b := range bad {
		cs = append(cs, Case{
			Name: "error/" + b.name, In: []Operand{b.in}, Out: []Operand{b.out}, WantErr: b.want,
			GPU: func(out, in []metal.View) ([]metal.Launch, error) { return metal.Reduce(b.op, out[0], in[0], b.axes) },
		})
	}
	return cs
}

// axisShape is an operation along one axis of a shape.
type axisShape struct {
	shape  []int
	axis   int
	layout Layout
}

var axisShapes = []axisShape{
	{OddShape, 2, Contig},
	{OddShape, 2, Sliced},
	{OddShape, 0, Transposed},
	{OddShape, 1, Broadcast},
	{[]int{2, 1031}, 1, Contig},
	{LongShape, 0, Sliced},
	{[]int{5, 0}, 1, Contig},
	{[]int{0, 5}, 1, Contig},
}

func argReduceCases() []Case {
	var cs []Case
	for op := range opset.NumArgOps {
		for _, dt := range lineDTypes {
			// [2, 9000]: lines longer than 8192, which take 1024 threads.
			for _, s := range append(slices.Clone(axisShapes), axisShape{[]int{2, 9000}, 1, Sliced}) {
				in := Op(dt, s.shape...).With(s.layout)
				if dt.IsFloat() {
					in = in.Values(fewValues)
				}
				c := Case{
					Name: fmt.Sprintf("%s/%v/%v/axis%d/%v", op, dt, s.shape, s.axis, s.layout),
					In:   []Operand{in},
					Out:  []Operand{Op(array.Int32, dropAxes(s.shape, []int{s.axis})...)},
					GPU: func(out, in []metal.View) ([]metal.Launch, error) {
						return metal.ArgReduce(op, out[0], in[0], s.axis)
					},
					CPU: func(out, in []cpu.Buf) error { return cpu.ArgReduce(op, out[0], in[0], s.axis) },
				}
				if s.shape[s.axis] == 0 && shapeSize(dropAxes(s.shape, []int{s.axis})) > 0 {
					c.WantErr = "empty axis"
				}
				cs = append(cs, c)
			}
		}
	}
	return cs
}

func softmaxCases() []Case {
	var cs []Case
	type fn struct {
		gpu     func(out, in metal.View, axis int) ([]metal.Launch, error)
		cpu     func(out, in cpu.Buf, axis int) error
		reduced bool
	}
	fns := map[string]fn{
		"Softmax":    {metal.Softmax, cpu.Softmax, false},
		"LogSoftmax": {metal.LogSoftmax, cpu.LogSoftmax, false},
		"LogSumExp":  {metal.LogSumExp, cpu.LogSumExp, true},
	}
	shapes := append(slices.Clone(axisShapes), axisShape{[]int{3, 9000}, 1, Contig}, axisShape{[]int{4}, 0, Contig})
	for _, kind := range []string{"Softmax", "LogSoftmax", "LogSumExp"} {
		f := fns[kind]
		for _, dt := range floatDTypes {
			for _, s := range shapes {
				oshape := s.shape
				if f.reduced {
					oshape = dropAxes(s.shape, []int{s.axis})
				}
				cs = append(cs, Case{
					Name: fmt.Sprintf("%s/%v/%v/axis%d/%v", kind, dt, s.shape, s.axis, s.layout),
					In:   []Operand{Op(dt, s.shape...).With(s.layout).Values(rareSpecials)},
					Out:  []Operand{Op(dt, oshape...)},
					GPU: func(out, in []metal.View) ([]metal.Launch, error) {
						return f.gpu(out[0], in[0], s.axis)
					},
					CPU: func(out, in []cpu.Buf) error { return f.cpu(out[0], in[0], s.axis) },
					// exp of inputs up to 40 apart amplifies the input's
					// rounding.
					Tol: 8,
				})
			}
		}
	}
	cs = append(cs, Case{
		Name: "error/int", In: []Operand{Op(array.Int32, 3, 4)}, Out: []Operand{Op(array.Int32, 3, 4)}, WantErr: "not a float dtype",
		GPU: func(out, in []metal.View) ([]metal.Launch, error) { return metal.Softmax(out[0], in[0], 1) },
	})
	return cs
}

func scanCases() []Case {
	var cs []Case
	// [2, 9000]: lines longer than 8192, which take 1024 threads.
	shapes := append(slices.Clone(axisShapes), axisShape{[]int{1, 3000}, 1, Contig}, axisShape{[]int{2, 9000}, 1, Contig})
	for op := range opset.NumScanOps {
		for _, dt := range lineDTypes {
			if _, ok := op.Result(dt); !ok {
				continue // LogCumSumExp of an integer: ops converts first
			}
			for i, s := range shapes {
				// Both directions and kinds, spread over the shapes.
				reverse, inclusive := i%2 == 1, i%4 < 2
				in := Op(dt, s.shape...).With(s.layout)
				if op == opset.CumProd && dt.IsFloat() {
					in = in.Values(nearOne)
				}
				odt, _ := op.Result(dt)
				c := Case{
					Name: fmt.Sprintf("%s/%v/%v/axis%d/%v/reverse=%v/inclusive=%v", op, dt, s.shape, s.axis, s.layout, reverse, inclusive),
					In:   []Operand{in},
					Out:  []Operand{Op(odt, s.shape...)},
					GPU: func(out, in []metal.View) ([]metal.Launch, error) {
						return metal.Scan(op, out[0], in[0], s.axis, reverse, inclusive)
					},
					CPU: func(out, in []cpu.Buf) error {
						return cpu.Scan(op, out[0], in[0], s.axis, reverse, inclusive)
					},
				}
				if op == opset.CumSum || op == opset.CumProd || op == opset.LogCumSumExp {
					c.Tol = max(1, float64(s.shape[s.axis])/20)
				}
				cs = append(cs, c)
			}
		}
	}
	cs = append(cs, Case{
		Name: "error/dtype", In: []Operand{Op(array.Bool, 3, 4)}, Out: []Operand{Op(array.Bool, 3, 4)}, WantErr: "gives int32",
		GPU: func(out, in []metal.View) ([]metal.Launch, error) {
			return metal.Scan(opset.CumSum, out[0], in[0], 1, false, true)
		},
	})
	return cs
}

func shapeSize(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// TestGridStrideLoops runs cases of the families whose kernels loop over
// more work than their grid holds (as they do past gridGroups
// threadgroups) with the grid capped at two threadgroups.
func TestGridStrideLoops(t *testing.T) {
	requireHarness(t)
	defer metal.SetGridGroups(2)()
	pick := map[string]func(name string) bool{
		"reduce":    func(n string) bool { return strings.HasPrefix(n, "Sum/float32/") || strings.HasPrefix(n, "Max/int64/") },
		"argreduce": func(n string) bool { return strings.HasPrefix(n, "ArgMax/float16/") },
		"softmax":   func(n string) bool { return strings.HasPrefix(n, "LogSoftmax/float32/") },
		"scan":      func(n string) bool { return strings.HasPrefix(n, "CumSum/int32/") },
		"gather":    func(n string) bool { return strings.HasPrefix(n, "Take/float32/") },
	}
	for _, f := range families {
		if keep := pick[f.name]; keep != nil {
			for _, c := range f.cases() {
				if keep(c.Name) {
					runCase(t, c)
				}
			}
		}
	}
}
