package metal_test

import (
	"math"
	"math/rand"
	"strconv"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
	"github.com/fathom-go/fathom/internal/opset"
)

func init() {
	registerFamily("copy", copyCases)
	registerFamily("unary", unaryCases)
	registerFamily("binary", binaryCases)
	registerFamily("where", whereCases)
	registerFamily("create", createCases)
}

// layoutsOf1 are the single-operand layouts every unary or copy case
// runs on: contiguous, strided (sliced with a reversed axis, transposed,
// broadcast), one element (0-d) and empty.
var layoutsOf1 = []struct {
	name  string
	shape []int
	in    Layout
	out   Layout
}{
	{"contig", OddShape, Contig, Contig},
	{"sliced", OddShape, Sliced, Contig},
	{"transposed", []int{5, 37}, Transposed, Sliced},
	{"broadcast", OddShape, Broadcast, Contig},
	{"0d", nil, Contig, Contig},
	{"empty", []int{0, 4}, Contig, Contig},
}

func copyCases() []Case {
	var cs []Case
	cpuCopy := func(out, in []cpu.Buf) error { return cpu.Copy(out[0], in[0]) }
	gpuCopy := func(out, in []metal.View) ([]metal.Launch, error) { return metal.Copy(out[0], in[0]) }
	for _, from := range allDTypes {
		for _, to := range allDTypes {
			name := "Copy/" + from.String() + "/" + to.String()
			in := func(shape []int) Operand {
				o := Op(from, shape...)
				if from == array.Int64 {
					// The CPU converts int64 to narrower integers through
					// float64, which sends values near 2^63 to 0.
					o = o.Values(func(r *rand.Rand, i int) float64 { return float64(r.Int63n(1<<40) - 1<<39) })
				}
				return o
			}
			cs = append(cs,
				Case{Name: name + "/contig", In: []Operand{in(LongShape)}, Out: []Operand{Op(to, LongShape...)}, GPU: gpuCopy, CPU: cpuCopy},
				Case{Name: name + "/scalar", In: []Operand{in(OddShape).With(Scalar)}, Out: []Operand{Op(to, OddShape...)}, GPU: gpuCopy, CPU: cpuCopy},
				Case{Name: name + "/strided", In: []Operand{in(OddShape).With(Transposed)}, Out: []Operand{Op(to, OddShape...).With(Sliced)}, GPU: gpuCopy, CPU: cpuCopy},
			)
		}
	}
	for _, dt := range []array.DType{array.Float32, array.Float16, array.Int64} {
		for _, l := range layoutsOf1 {
			cs = append(cs, Case{Name: "Copy/" + dt.String() + "/" + l.name,
				In: []Operand{Op(dt, l.shape...).With(l.in)}, Out: []Operand{Op(dt, l.shape...).With(l.out)}, GPU: gpuCopy, CPU: cpuCopy})
		}
	}
	// More than maxGridDim elements: the 2-D grid and its bounds check.
	cs = append(cs, Case{Name: "Copy/float32/2d-grid",
		In: []Operand{Op(array.Float32, OddShape...)}, Out: []Operand{Op(array.Float32, OddShape...)},
		GPU: func(out, in []metal.View) ([]metal.Launch, error) {
			defer metal.SetMaxGridDim(100)()
			return metal.Copy(out[0], in[0])
		},
		CPU: cpuCopy})
	cs = append(cs, Case{Name: "Copy/float64", In: []Operand{Op(array.Float64, 3)}, Out: []Operand{Op(array.Float32, 3)},
		GPU: gpuCopy, WantErr: "float64 is not supported on the GPU"})
	return cs
}

// unaryDomain draws inputs that exercise op where it is defined, with a
// few specials; nil means the dtype's default mix.
func unaryDomain(op string) func(r *rand.Rand, i int) float64 {
	special := func(r *rand.Rand, f func() float64) float64 {
		if r.Intn(10) == 0 {
			return floatSpecials[r.Intn(len(floatSpecials))]
		}
		return f()
	}
	switch op {
	case "Log", "Log2", "Log10", "Sqrt", "Rsqrt":
		return func(r *rand.Rand, i int) float64 {
			return special(r, func() float64 { return math.Exp(r.Float64()*10 - 5) })
		}
	case "Log1p", "Expm1":
		return func(r *rand.Rand, i int) float64 {
			return special(r, func() float64 {
				if i%2 == 0 {
					return (r.Float64() - 0.5) * 1e-3
				}
				return r.Float64()*4 - 0.9
			})
		}
	case "ArcSin", "ArcCos", "ErfInv", "ArcTanh":
		return func(r *rand.Rand, i int) float64 {
			return special(r, func() float64 { return r.Float64()*1.98 - 0.99 })
		}
	case "ArcCosh":
		return func(r *rand.Rand, i int) float64 {
			return special(r, func() float64 { return 1 + math.Exp(r.Float64()*6-3) })
		}
	case "Exp", "Sinh", "Cosh":
		return func(r *rand.Rand, i int) float64 { return special(r, func() float64 { return r.Float64()*20 - 10 }) }
	case "Floor", "Ceil", "Round":
		// Halves, where Round's ties to even matter.
		return func(r *rand.Rand, i int) float64 {
			return special(r, func() float64 { return float64(r.Intn(17)-8) / 2 })
		}
	}
	return nil
}

func unaryCases() []Case {
	var cs []Case
	for op := range opset.NumUnaryOps {
		name := op.String()
		for _, dt := range allDTypes {
			want, ok := op.Result(dt)
			if !op.Supported(array.DeviceGPU, dt) {
				if ok {
					// The GPU lacks an operation the CPU has: it must say so.
					cs = append(cs, Case{Name: name + "/" + dt.String() + "/unsupported",
						In: []Operand{Op(dt, 3)}, Out: []Operand{Op(want, 3)},
						GPU: func(out, in []metal.View) ([]metal.Launch, error) {
							return metal.Unary(op, out[0], in[0])
						},
						WantErr: "not supported on the GPU"})
				}
				continue
			}
			var gen func(*rand.Rand, int) float64
			if dt.IsFloat() {
				gen = unaryDomain(name)
			}
			for _, l := range layoutsOf1 {
				cs = append(cs, Case{
					Name: name + "/" + dt.String() + "/" + l.name,
					In:   []Operand{Op(dt, l.shape...).With(l.in).Values(gen)},
					Out:  []Operand{Op(want, l.shape...).With(l.out)},
					GPU:  func(out, in []metal.View) ([]metal.Launch, error) { return metal.Unary(op, out[0], in[0]) },
					CPU:  func(out, in []cpu.Buf) error { return cpu.Unary(op, out[0], in[0]) },
				})
			}
		}
	}
	cs = append(cs, Case{Name: "Exp/float64", In: []Operand{Op(array.Float64, 3)}, Out: []Operand{Op(array.Float64, 3)},
		GPU:     func(out, in []metal.View) ([]metal.Launch, error) { return metal.Unary(opset.Exp, out[0], in[0]) },
		WantErr: "float64 is not supported on the GPU"})
	return cs
}

// layoutsOf2 are the operand layouts of every binary case: both
// contiguous, either one a broadcast scalar, strided mixes, 0-d, empty.
var layoutsOf2 = []struct {
	name  string
	shape []int
	a, b  Layout
}{
	{"vv", OddShape, Contig, Contig},
	{"sv", OddShape, Scalar, Contig},
	{"vs", OddShape, Contig, Scalar},
	{"transposed-broadcast", OddShape, Transposed, Broadcast},
	{"sliced-contig", []int{5, 37}, Sliced, Contig},
	{"0d", nil, Contig, Contig},
	{"empty", []int{3, 0}, Contig, Contig},
}

// binaryDomain returns generators for the two operands of op, or nils
// for the dtype's default mix.
func binaryDomain(op string, dt array.DType) (a, b func(r *rand.Rand, i int) float64) {
	switch {
	case op == "Pow" && dt.IsFloat():
		// Positive bases with any exponent, negative ones with integral
		// exponents, where the sign depends on the exponent's parity.
		a = func(r *rand.Rand, i int) float64 {
			if i%2 == 0 {
				return r.Float64()*3 + 0.1
			}
			return r.Float64()*6 - 3
		}
		b = func(r *rand.Rand, i int) float64 {
			if i%2 == 0 || r.Intn(4) == 0 {
				return r.Float64()*6 - 3
			}
			return float64(r.Intn(9) - 4)
		}
	case op == "Pow" && dt.IsInteger():
		a = func(r *rand.Rand, i int) float64 { return float64(r.Intn(11) - 5) }
		b = func(r *rand.Rand, i int) float64 { return float64(r.Intn(14) - 3) }
		if dt == array.Uint8 {
			a = func(r *rand.Rand, i int) float64 { return float64(r.Intn(256)) }
			b = func(r *rand.Rand, i int) float64 { return float64(r.Intn(10)) }
		}
	case (op == "FloorDivide" || op == "Remainder") && dt.IsFloat():
		// Small integers and halves: exact quotients and ties.
		a = func(r *rand.Rand, i int) float64 { return float64(r.Intn(41)-20) / 2 }
		b = func(r *rand.Rand, i int) float64 { return float64(r.Intn(13)-6) / 2 }
	case dt.IsFloat() && (op == "Equal" || op == "NotEqual" || op == "Less" || op == "LessEqual" ||
		op == "Greater" || op == "GreaterEqual" || op == "Maximum" || op == "Minimum"):
		// Few distinct values, so that ties occur.
		g := func(r *rand.Rand, i int) float64 {
			if r.Intn(8) == 0 {
				return floatSpecials[r.Intn(len(floatSpecials))]
			}
			return float64(r.Intn(5) - 2)
		}
		a, b = g, g
	}
	return a, b
}

func binaryCases() []Case {
	var cs []Case
	for op := range opset.NumBinaryOps {
		name := op.String()
		for _, dt := range allDTypes {
			want, ok := op.Result(dt)
			if !op.Supported(array.DeviceGPU, dt) {
				if ok {
					cs = append(cs, Case{Name: name + "/" + dt.String() + "/unsupported",
						In: []Operand{Op(dt, 3), Op(dt, 3)}, Out: []Operand{Op(want, 3)},
						GPU: func(out, in []metal.View) ([]metal.Launch, error) {
							return metal.Binary(op, out[0], in[0], in[1])
						},
						WantErr: "not supported on the GPU"})
				}
				continue
			}
			ga, gb := binaryDomain(name, dt)
			for _, l := range layoutsOf2 {
				cs = append(cs, Case{
					Name: name + "/" + dt.String() + "/" + l.name,
					In:   []Operand{Op(dt, l.shape...).With(l.a).Values(ga), Op(dt, l.shape...).With(l.b).Values(gb)},
					Out:  []Operand{Op(want, l.shape...)},
					GPU: func(out, in []metal.View) ([]metal.Launch, error) {
						return metal.Binary(op, out[0], in[0], in[1])
					},
					CPU: func(out, in []cpu.Buf) error { return cpu.Binary(op, out[0], in[0], in[1]) },
				})
			}
		}
	}
	cs = append(cs, Case{Name: "Add/float32/2d-grid",
		In:  []Operand{Op(array.Float32, OddShape...), Op(array.Float32, OddShape...).With(Scalar)},
		Out: []Operand{Op(array.Float32, OddShape...)},
		GPU: func(out, in []metal.View) ([]metal.Launch, error) {
			defer metal.SetMaxGridDim(128)()
			return metal.Binary(opset.Add, out[0], in[0], in[1])
		},
		CPU: func(out, in []cpu.Buf) error { return cpu.Binary(opset.Add, out[0], in[0], in[1]) }})
	cs = append(cs, Case{Name: "Add/float64", In: []Operand{Op(array.Float64, 3), Op(array.Float64, 3)},
		Out: []Operand{Op(array.Float64, 3)},
		GPU: func(out, in []metal.View) ([]metal.Launch, error) {
			return metal.Binary(opset.Add, out[0], in[0], in[1])
		},
		WantErr: "float64 is not supported on the GPU"})
	return cs
}

func whereCases() []Case {
	var cs []Case
	gpuWhere := func(out, in []metal.View) ([]metal.Launch, error) { return metal.Where(out[0], in[0], in[1], in[2]) }
	cpuWhere := func(out, in []cpu.Buf) error { return cpu.Where(out[0], in[0], in[1], in[2]) }
	layouts := []struct {
		name    string
		shape   []int
		c, x, y Layout
	}{
		{"contig", OddShape, Contig, Contig, Contig},
		{"strided", OddShape, Broadcast, Scalar, Sliced},
		{"transposed", []int{37, 5}, Transposed, Contig, Broadcast},
		{"0d", nil, Contig, Contig, Contig},
		{"empty", []int{0}, Contig, Contig, Contig},
	}
	for _, dt := range allDTypes {
		for _, l := range layouts {
			cs = append(cs, Case{Name: "Where/" + dt.String() + "/" + l.name,
				In:  []Operand{Op(array.Bool, l.shape...).With(l.c), Op(dt, l.shape...).With(l.x), Op(dt, l.shape...).With(l.y)},
				Out: []Operand{Op(dt, l.shape...)}, GPU: gpuWhere, CPU: cpuWhere})
		}
	}
	cs = append(cs, Case{Name: "Where/strided-out",
		In:  []Operand{Op(array.Bool, OddShape...), Op(array.Int32, OddShape...), Op(array.Int32, OddShape...)},
		Out: []Operand{Op(array.Int32, OddShape...).With(Sliced)}, GPU: gpuWhere, CPU: cpuWhere})
	return cs
}

func createCases() []Case {
	var cs []Case
	for _, dt := range allDTypes {
		for _, v := range []float64{2.75, -3, 0} {
			cs = append(cs, Case{Name: "Fill/" + dt.String() + "/" + ftoa(v),
				Out: []Operand{Op(dt, LongShape...)},
				GPU: func(out, _ []metal.View) ([]metal.Launch, error) { return metal.Fill(out[0], v) },
				CPU: func(out, _ []cpu.Buf) error {
					return cpu.Copy(out[0], cpu.Buf{Data: f64bytes(v), DType: array.Float64, Shape: out[0].Shape,
						Strides: make([]int, len(out[0].Shape))})
				}})
		}
		cs = append(cs, Case{Name: "Fill/" + dt.String() + "/strided",
			Out: []Operand{Op(dt, OddShape...).With(Sliced)},
			GPU: func(out, _ []metal.View) ([]metal.Launch, error) { return metal.Fill(out[0], 1) },
			CPU: func(out, _ []cpu.Buf) error {
				return cpu.Copy(out[0], cpu.Buf{Data: f64bytes(1), DType: array.Float64, Shape: out[0].Shape,
					Strides: make([]int, len(out[0].Shape))})
			}})

		ranges := [][2]float64{{-7, 3}, {0.5, 0.25}, {100, -1.5}}
		if dt.IsInteger() {
			ranges = [][2]float64{{-7, 3}, {300, -2}}
		}
		for _, rg := range ranges {
			start, step := rg[0], rg[1]
			for _, l := range []struct {
				name   string
				shape  []int
				layout Layout
			}{{"contig", LongShape, Contig}, {"strided", OddShape, Sliced}, {"transposed", []int{6, 7}, Transposed}} {
				cs = append(cs, Case{Name: "Arange/" + dt.String() + "/" + ftoa(start) + "," + ftoa(step) + "/" + l.name,
					Out: []Operand{Op(dt, l.shape...).With(l.layout)},
					GPU: func(out, _ []metal.View) ([]metal.Launch, error) { return metal.Arange(out[0], start, step) },
					CPU: func(out, _ []cpu.Buf) error { return cpu.Arange(out[0], start, step) },
					Tol: 4})
			}
		}
		for _, k := range []int{0, 3, -2, 50} {
			for _, l := range []Layout{Contig, Sliced} {
				cs = append(cs, Case{Name: "Eye/" + dt.String() + "/" + strconv.Itoa(k) + "/" + l.String(),
					Out: []Operand{Op(dt, 9, 13).With(l)},
					GPU: func(out, _ []metal.View) ([]metal.Launch, error) { return metal.Eye(out[0], k) },
					CPU: func(out, _ []cpu.Buf) error { return cpu.Eye(out[0], k) }})
			}
		}
	}
	cs = append(cs, Case{Name: "Fill/empty", Out: []Operand{Op(array.Float32, 0, 3)},
		GPU: func(out, _ []metal.View) ([]metal.Launch, error) { return metal.Fill(out[0], 1) },
		CPU: func(out, _ []cpu.Buf) error { return nil }})
	return cs
}

func f64bytes(v float64) []byte {
	b := make([]byte, 8)
	putValue(b, array.Float64, value{c: complex(v, 0)})
	return b
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
