package metal_test

import (
	"fmt"
	"math/rand"
	randv2 "math/rand/v2"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
	"github.com/fathom-go/fathom/backend/metal/internal/mslcpu"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/internal/fused"
	"github.com/fathom-go/fathom/internal/randgraph"
)

// TestFusedKernelsOfCompiledGraphs runs the fused kernels that package
// compile makes of the random elementwise graphs of its own property test
// (float32 and float16 inputs, smooth operations so the two backends'
// transcendental functions may differ in the last bits) under the MSL
// harness, against the same program run by the CPU kernels.
func TestFusedKernelsOfCompiledGraphs(t *testing.T) {
	requireHarness(t)
	type prog struct {
		name string
		p    *fused.Program
	}
	var progs []prog
	for seed := uint64(0); seed < 12; seed++ {
		r := randv2.New(randv2.NewPCG(seed, 3))
		dt := array.Float32
		if seed%3 == 2 {
			dt = array.Float16
		}
		g := randgraph.New(r, 2+r.IntN(18), randgraph.Options{Mid: array.Float16, Smooth: true})
		in := make([]*array.Array, 3)
		for i := range in {
			in[i] = array.FromSlice(make([]float32, 4*5), 4, 5)
			if dt == array.Float16 {
				in[i] = array.FromSlice(make([]array.F16, 4*5), 4, 5)
			}
		}
		for k, c := range compile.Fused(g, in...) {
			progs = append(progs, prog{fmt.Sprintf("seed%d/fused%d", seed, k), c.Program()})
		}
	}
	if len(progs) < 8 {
		t.Fatalf("only %d fused programs from the random graphs", len(progs))
	}
	shape := []int{7, 37}
	var libs []mslcpu.Library
	for _, pr := range progs {
		ins, outs := fusedOperands(pr.p, shape)
		ls, err := metal.Fused(pr.p, views(materializeOuts(outs)), views(materializeOuts(ins)))
		if err != nil {
			t.Fatalf("%s:\n%s\n%v", pr.name, pr.p, err)
		}
		libs = append(libs, mslcpu.Library{Name: ls[0].Library, Source: ls[0].Source})
	}
	if err := mslcpu.Prepare(libs...); err != nil {
		t.Fatal(err)
	}
	for _, pr := range progs {
		ins, outs := fusedOperands(pr.p, shape)
		runCase(t, Case{
			Name: pr.name,
			In:   ins,
			Out:  outs,
			Tol:  64,
			GPU: func(out, in []metal.View) ([]metal.Launch, error) {
				return metal.Fused(pr.p, out, in)
			},
			CPU: func(out, in []cpu.Buf) error {
				res, err := evalProgram(pr.p, in, shape)
				if err != nil {
					return err
				}
				for k := range out {
					if err := cpu.Copy(out[k], res[k]); err != nil {
						return err
					}
				}
				return nil
			},
		})
		if t.Failed() {
			t.Fatalf("program:\n%s", pr.p)
		}
	}
}

// fusedOperands gives a program's inputs and outputs the full shape.
func fusedOperands(p *fused.Program, shape []int) (ins, outs []Operand) {
	for _, dt := range p.InDTypes {
		ins = append(ins, Op(dt, shape...).Values(func(r *rand.Rand, _ int) float64 { return 4*r.Float64() - 2 }))
	}
	for _, o := range p.Outputs {
		outs = append(outs, Op(p.DType(o), shape...))
	}
	return ins, outs
}
