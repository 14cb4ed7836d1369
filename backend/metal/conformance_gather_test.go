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

// Cases of Take, TakeAlongAxis, PutAlongAxis and ScatterAddAlongAxis,
// MLX's Gather and Scatter, and the run-time report of indices out of
// range.

func init() {
	registerFamily("gather", gatherCases)
	registerFamily("slices", sliceCases)
}

// indexValues draws indices into an axis of size n: negative ones too,
// except for the unsigned dtypes.
func indexValues(dt array.DType, n int) func(r *rand.Rand, i int) float64 {
	switch dt {
	case array.Uint8, array.Uint16, array.Uint32, array.Uint64:
		return func(r *rand.Rand, _ int) float64 { return float64(r.Intn(n)) }
	}
	return func(r *rand.Rand, _ int) float64 { return float64(r.Intn(2*n) - n) }
}

var indexDTypes = []array.DType{array.Uint8, array.Int32, array.Int64}

// newIndexDTypes are the other integer index dtypes, given fewer cases:
// their kernels differ from the others only in how an index is read.
var newIndexDTypes = []array.DType{array.Int8, array.Int16, array.Uint16, array.Uint32, array.Uint64}

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
	for _, dt := range gatherDTypes {
		for _, it := range newIndexDTypes {
			n := OddShape[1]
			cs = append(cs, Case{
				Name: fmt.Sprintf("Take/%v/%v", dt, it),
				In:   []Operand{Op(dt, OddShape...).With(Sliced), Op(it, 2, 9).Values(indexValues(it, n))},
				Out:  []Operand{Op(dt, OddShape[0], 2, 9, OddShape[2])},
				GPU: func(out, in []metal.View) ([]metal.Launch, error) {
					return dropGPUCheck(metal.Take(out[0], in[0], in[1], 1))
				},
				CPU: func(out, in []cpu.Buf) error { return cpu.Take(out[0], in[0], in[1], 1) },
			})
			shape := []int{OddShape[0], 11, OddShape[2]}
			idx := Op(it, shape...).Values(indexValues(it, n))
			cs = append(cs, Case{
				Name: fmt.Sprintf("PutAlongAxis/%v/%v", dt, it),
				In:   []Operand{Op(dt, OddShape...).With(Transposed), idx, Op(dt, shape...)},
				Out:  []Operand{Op(dt, OddShape...)},
				GPU: func(out, in []metal.View) ([]metal.Launch, error) {
					return dropGPUCheck(metal.PutAlongAxis(out[0], in[0], in[1], in[2], 1))
				},
				CPU: func(out, in []cpu.Buf) error { return cpu.PutAlongAxis(out[0], in[0], in[1], in[2], 1) },
			})
			if dt == array.Bool || dt == array.Complex64 {
				continue
			}
			cs = append(cs, Case{
				Name: fmt.Sprintf("ScatterAddAlongAxis/%v/%v", dt, it),
				In:   []Operand{idx, Op(dt, shape...).With(Sliced)},
				Out:  []Operand{Op(dt, OddShape...)},
				GPU: func(out, in []metal.View) ([]metal.Launch, error) {
					return dropGPUCheck(metal.ScatterAddAlongAxis(out[0], in[0], in[1], 1))
				},
				CPU: func(out, in []cpu.Buf) error { return cpu.ScatterAddAlongAxis(out[0], in[0], in[1], 1) },
				Tol: 4,
			})
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

// sliceCases are MLX's Gather and Scatter: index arrays of every integer
// dtype, broadcast (stride 0) and strided, repeated indices, slices
// narrower than the array, no index arrays at all, and every scatter mode
// on every dtype.
func sliceCases() []Case {
	var cs []Case
	type cfg struct {
		name   string
		axes   []int
		b      []int // the indices' shape
		slice  []int
		layout Layout
	}
	cfgs := []cfg{
		{"rows", []int{0}, []int{7}, []int{1, OddShape[1], OddShape[2]}, Contig},
		{"two axes", []int{2, 0}, []int{4, 6}, []int{1, 2, 1}, Transposed},
		{"window", []int{1}, []int{300}, []int{2, 1, 5}, Sliced},
		{"no indices", nil, nil, []int{2, 3, 4}, Sliced},
	}
	idxOps := func(it array.DType, c cfg) []Operand {
		var ops []Operand
		for k, ax := range c.axes {
			o := Op(it, c.b...).Values(indexValues(it, OddShape[ax]))
			if k == 1 {
				o = o.With(Broadcast)
			}
			ops = append(ops, o)
		}
		return ops
	}
	for _, dt := range gatherDTypes {
		for ci, c := range cfgs {
			it := append(indexDTypes, newIndexDTypes...)[(ci+int(dt))%8]
			in := append([]Operand{Op(dt, OddShape...).With(c.layout)}, idxOps(it, c)...)
			outShape := append(append([]int{}, c.b...), c.slice...)
			cs = append(cs, Case{
				Name: fmt.Sprintf("Gather/%v/%v/%s", dt, it, c.name),
				In:   in, Out: []Operand{Op(dt, outShape...)},
				GPU: func(out, in []metal.View) ([]metal.Launch, error) {
					return dropGPUCheck(metal.Gather(out[0], in[0], in[1:], c.axes, c.slice))
				},
				CPU: func(out, in []cpu.Buf) error { return cpu.Gather(out[0], in[0], in[1:], c.axes, c.slice) },
			})
			for mode := metal.ScatterSet; mode <= metal.ScatterMin; mode++ {
				if dt == array.Complex64 && mode >= metal.ScatterMax {
					continue
				}
				tol := 0.0
				if mode == metal.ScatterSum && (dt == array.Float32 || dt == array.Complex64) {
					tol = 4
				}
				upd := Op(dt, outShape...).With(Transposed)
				if mode == metal.ScatterProd {
					// Factors near one keep a product of many repeats finite.
					upd = upd.Values(func(r *rand.Rand, _ int) float64 { return float64(r.Intn(3)) })
				}
				cs = append(cs, Case{
					Name: fmt.Sprintf("Scatter/%d/%v/%v/%s", mode, dt, it, c.name),
					In:   append(append([]Operand{Op(dt, OddShape...).With(c.layout)}, idxOps(it, c)...), upd),
					Out:  []Operand{Op(dt, OddShape...)},
					GPU: func(out, in []metal.View) ([]metal.Launch, error) {
						k := len(in) - 1
						return dropGPUCheck(metal.Scatter(out[0], in[0], in[1:k], in[k], c.axes, mode))
					},
					CPU: func(out, in []cpu.Buf) error {
						k := len(in) - 1
						return cpu.Scatter(out[0], in[0], in[1:k], in[k], c.axes, mode)
					},
					Tol: tol,
				})
			}
		}
	}
	// Every index dtype reaches index_offsets.
	for _, it := range append(indexDTypes, newIndexDTypes...) {
		c := cfgs[0]
		cs = append(cs, Case{
			Name: fmt.Sprintf("Gather/index %v", it),
			In:   append([]Operand{Op(array.Float32, OddShape...)}, idxOps(it, c)...),
			Out:  []Operand{Op(array.Float32, append(append([]int{}, c.b...), c.slice...)...)},
			GPU: func(out, in []metal.View) ([]metal.Launch, error) {
				return dropGPUCheck(metal.Gather(out[0], in[0], in[1:], c.axes, c.slice))
			},
			CPU: func(out, in []cpu.Buf) error { return cpu.Gather(out[0], in[0], in[1:], c.axes, c.slice) },
		})
	}
	cs = append(cs, Case{
		Name: "error/max of complex", In: []Operand{Op(array.Complex64, 3, 4), Op(array.Int32, 2), Op(array.Complex64, 2, 1, 4)},
		Out: []Operand{Op(array.Complex64, 3, 4)}, WantErr: "cannot take the maximum",
		GPU: func(out, in []metal.View) ([]metal.Launch, error) {
			return dropGPUCheck(metal.Scatter(out[0], in[0], in[1:2], in[2], []int{0}, metal.ScatterMax))
		},
	}, Case{
		Name: "error/strided out", In: []Operand{Op(array.Float32, 3, 4), Op(array.Int32, 2)},
		Out: []Operand{Op(array.Float32, 2, 1, 4).With(Transposed)}, WantErr: "not row-major",
		GPU: func(out, in []metal.View) ([]metal.Launch, error) {
			return dropGPUCheck(metal.Gather(out[0], in[0], in[1:], []int{0}, []int{1, 4}))
		},
	})
	return cs
}
