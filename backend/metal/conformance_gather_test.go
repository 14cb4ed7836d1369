package metal_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
)

// Cases of Take, TakeAlongAxis, PutAlongAxis and ScatterAddAlongAxis, and
// the run-time report of indices out of range.

func init() { registerFamily("gather", gatherCases) }

// indexValues draws indices into an axis of size n: negative ones too,
// except for uint8.
func indexValues(dt array.DType, n int) func(r *rand.Rand, i int) float64 {
	if dt == array.Uint8 {
		return func(r *rand.Rand, _ int) float64 { return float64(r.Intn(n)) }
	}
	return func(r *rand.Rand, _ int) float64 { return float64(r.Intn(2*n) - n) }
}

var indexDTypes = []array.DType{array.Uint8, array.Int32, array.Int64}

// gatherDTypes covers every element size: gathers move words.
var gatherDTypes = []array.DType{array.Bool, array.Uint8, array.Float16, array.BFloat16, array.Int32, array.Float32, array.Int64, array.Complex64,
	array.Int8, array.Int16, array.Uint16, array.Uint32, array.Uint64}

// dropGPUCheck adapts a gather plan to Case.GPU; TestIndexOutOfRange
// covers the IndexCheck.
func dropGPUCheck(ls []metal.Launch, _ *metal.IndexCheck, err error) ([]metal.Launch, error) {
	return ls, err
}

func gatherCases() []Case {
	var cs []Case
	for _, dt := range gatherDTypes {
		for _, it := range indexDTypes {
			for _, c := range []struct {
				axis   int
				idx    []int
				layout Layout
			}{{0, []int{4}, Contig}, {2, []int{2, 3}, Transposed}, {1, nil, Sliced}, {2, []int{300}, Broadcast}} {
				n := OddShape[c.axis]
				want := append(append(append([]int{}, OddShape[:c.axis]...), c.idx...), OddShape[c.axis+1:]...)
				cs = append(cs, Case{
					Name: fmt.Sprintf("Take/%v/%v/axis%d/idx%v/%v", dt, it, c.axis, c.idx, c.layout),
					In:   []Operand{Op(dt, OddShape...).With(c.layout), Op(it, c.idx...).Values(indexValues(it, n))},
					Out:  []Operand{Op(dt, want...)},
					GPU: func(out, in []metal.View) ([]metal.Launch, error) {
						return dropGPUCheck(metal.Take(out[0], in[0], in[1], c.axis))
					},
					CPU: func(out, in []cpu.Buf) error { return cpu.Take(out[0], in[0], in[1], c.axis) },
				})
			}
			for _, c := range []struct {
				axis, m int
				layout  Layout
			}{{1, 7, Contig}, {2, 40, Sliced}, {0, 1, Transposed}} {
				shape := append([]int{}, OddShape...)
				shape[c.axis] = c.m
				idx := Op(it, shape...).Values(indexValues(it, OddShape[c.axis]))
				name := fmt.Sprintf("%v/%v/axis%d/m%d/%v", dt, it, c.axis, c.m, c.layout)
				cs = append(cs, Case{
					Name: "TakeAlongAxis/" + name,
					In:   []Operand{Op(dt, OddShape...).With(c.layout), idx},
					Out:  []Operand{Op(dt, shape...)},
					GPU: func(out, in []metal.View) ([]metal.Launch, error) {
						return dropGPUCheck(metal.TakeAlongAxis(out[0], in[0], in[1], c.axis))
					},
					CPU: func(out, in []cpu.Buf) error { return cpu.TakeAlongAxis(out[0], in[0], in[1], c.axis) },
				}, Case{
					Name: "PutAlongAxis/" + name,
					In:   []Operand{Op(dt, OddShape...).With(c.layout), idx, Op(dt, shape...)},
					Out:  []Operand{Op(dt, OddShape...)},
					GPU: func(out, in []metal.View) ([]metal.Launch, error) {
						return dropGPUCheck(metal.PutAlongAxis(out[0], in[0], in[1], in[2], c.axis))
					},
					CPU: func(out, in []cpu.Buf) error { return cpu.PutAlongAxis(out[0], in[0], in[1], in[2], c.axis) },
				})
				if dt == array.Bool || dt == array.Complex64 {
					continue
				}
				cs = append(cs, Case{
					Name: "ScatterAddAlongAxis/" + name,
					In:   []Operand{idx, Op(dt, shape...).With(c.layout)},
					Out:  []Operand{Op(dt, OddShape...).With(c.layout)},
					GPU: func(out, in []metal.View) ([]metal.Launch, error) {
						return dropGPUCheck(metal.ScatterAddAlongAxis(out[0], in[0], in[1], c.axis))
					},
					CPU: func(out, in []cpu.Buf) error { return cpu.ScatterAddAlongAxis(out[0], in[0], in[1], c.axis) },
					Tol: 4,
				})
			}
		}
	}
	f32 := Op(array.Float32, 3, 4)
	cs = append(cs, Case{
		Name: "error/float index", In: []Operand{f32, Op(array.Float32, 2)}, Out: []Operand{Op(array.Float32, 2, 4)}, WantErr: "not an integer dtype",
		GPU: func(out, in []metal.View) ([]metal.Launch, error) {
			return dropGPUCheck(metal.Take(out[0], in[0], in[1], 0))
		},
	}, Case{
		Name: "error/bool add", In: []Operand{Op(array.Int32, 3, 4), Op(array.Bool, 3, 4)}, Out: []Operand{Op(array.Bool, 3, 4)}, WantErr: "cannot add dtype bool",
		GPU: func(out, in []metal.View) ([]metal.Launch, error) {
			return dropGPUCheck(metal.ScatterAddAlongAxis(out[0], in[0], in[1], 1))
		},
	})
	return cs
}

// TestIndexOutOfRange runs every gather and scatter with one index out of
// range and checks that the plan's IndexCheck reports it as the CPU
// kernel does, and that in-range runs report nothing.
func TestIndexOutOfRange(t *testing.T) {
	requireHarness(t)
	for _, bad := range []int64{5, -6, 1 << 40} {
		a := Op(array.Float32, 3, 5)
		idx := Op(array.Int64, 3, 2).Values(func(_ *rand.Rand, i int) float64 {
			if i == 3 {
				return float64(bad)
			}
			return float64(i % 5)
		})
		for _, c := range []struct {
			name string
			in   []Operand
			out  Operand
			gpu  func(out, in []metal.View) ([]metal.Launch, *metal.IndexCheck, error)
			cpu  func(out, in []cpu.Buf) error
		}{
			{"Take", []Operand{a, Op(array.Int64, 6).Values(func(_ *rand.Rand, i int) float64 { return float64(bad) * float64(i/5) })}, Op(array.Float32, 3, 6),
				func(out, in []metal.View) ([]metal.Launch, *metal.IndexCheck, error) {
					return metal.Take(out[0], in[0], in[1], 1)
				},
				func(out, in []cpu.Buf) error { return cpu.Take(out[0], in[0], in[1], 1) }},
			{"TakeAlongAxis", []Operand{a, idx}, Op(array.Float32, 3, 2),
				func(out, in []metal.View) ([]metal.Launch, *metal.IndexCheck, error) {
					return metal.TakeAlongAxis(out[0], in[0], in[1], 1)
				},
				func(out, in []cpu.Buf) error { return cpu.TakeAlongAxis(out[0], in[0], in[1], 1) }},
			{"PutAlongAxis", []Operand{a, idx, Op(array.Float32, 3, 2)}, a,
				func(out, in []metal.View) ([]metal.Launch, *metal.IndexCheck, error) {
					return metal.PutAlongAxis(out[0], in[0], in[1], in[2], 1)
				},
				func(out, in []cpu.Buf) error { return cpu.PutAlongAxis(out[0], in[0], in[1], in[2], 1) }},
			{"ScatterAddAlongAxis", []Operand{idx, Op(array.Float16, 3, 2)}, Op(array.Float16, 3, 5),
				func(out, in []metal.View) ([]metal.Launch, *metal.IndexCheck, error) {
					return metal.ScatterAddAlongAxis(out[0], in[0], in[1], 1)
				},
				func(out, in []cpu.Buf) error { return cpu.ScatterAddAlongAxis(out[0], in[0], in[1], 1) }},
		} {
			r := rand.New(rand.NewSource(1))
			cpuIn, gpuIn := materializeAll(r, c.in, false)
			cpuOut, gpuOut := materializeAll(r, []Operand{c.out}, true)
			cerr := c.cpu(bufs(cpuOut), bufs(cpuIn))
			ls, chk, err := c.gpu(views(gpuOut), views(gpuIn))
			if err != nil {
				t.Fatalf("%s: plan: %v", c.name, err)
			}
			if chk.Err() != nil {
				t.Errorf("%s: IndexCheck reports %v before the run", c.name, chk.Err())
			}
			for _, l := range ls {
				if err := executor("forward").Run(l); err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
			}
			gerr := chk.Err()
			if cerr == nil || gerr == nil {
				t.Errorf("%s index %d: cpu error %v, gpu error %v", c.name, bad, cerr, gerr)
				continue
			}
			_, cmsg, _ := strings.Cut(cerr.Error(), ": ")
			if want := "metal." + c.name + ": " + cmsg; gerr.Error() != want {
				t.Errorf("%s: gpu error %q, want %q", c.name, gerr, want)
			}
			if _, ok := gerr.(*array.Error); !ok {
				t.Errorf("%s: error %T is not an *array.Error", c.name, gerr)
			}
		}
	}
	var none *metal.IndexCheck
	if none.Err() != nil {
		t.Error("a nil IndexCheck reports an error")
	}
}
