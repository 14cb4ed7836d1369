package nn_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/distributed"
	"github.com/fathom-go/fathom/nn"
	"github.com/fathom-go/fathom/ops"
)

// threeProcs stands for a group of three processes whose gradients are
// x, x+1 and x+2 for this process's x: their sum is 3x+3 and their mean
// x+1. It records the size of every sum it is asked for.
type threeProcs struct{ sums []int }

func (g *threeProcs) Size() int { return 3 }

func (g *threeProcs) AllSum(x *array.Array) *array.Array {
	g.sums = append(g.sums, x.Size())
	return ops.AddScalar(ops.MulScalar(x, 3), 3)
}

func gradTree() map[string]*array.Array {
	seq := func(n int, dt array.DType) *array.Array {
		return ops.AsType(ops.Arange(0, float64(n), 1, array.Float32), dt)
	}
	return map[string]*array.Array{
		"a": seq(10, array.Float32),                    // 40 bytes
		"b": ops.Reshape(seq(12, array.Float32), 3, 4), // 48
		"c": seq(100, array.Float32),                   // 400
		"d": seq(5, array.Float64),                     // 40
		"e": nil,
		"f": ops.Reshape(seq(1, array.Float32)), // 4, 0-d
	}
}

func TestAverageGradientsPacking(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []nn.AverageOption
		sums []int
	}{
		// By dtype, then name; a buffer closes when the next gradient
		// would take it past the bound or has another dtype.
		{"100 bytes", []nn.AverageOption{nn.AllReduceSize(100)}, []int{22, 100, 1, 5}},
		{"default 32 MiB", nil, []int{123, 5}},
		{"unpacked", []nn.AverageOption{nn.AllReduceSize(0)}, []int{10, 12, 100, 1, 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &threeProcs{}
			grads := gradTree()
			avg := nn.AverageGradients(grads, g, tc.opts...)
			if !slices.Equal(g.sums, tc.sums) {
				t.Fatalf("sums of %v elements, want %v", g.sums, tc.sums)
			}
			if len(avg) != len(grads) || avg["e"] != nil {
				t.Fatalf("got %d gradients (e: %v), want %d with e nil", len(avg), avg["e"], len(grads))
			}
			for name, x := range grads {
				if x == nil {
					continue
				}
				y := avg[name]
				if !slices.Equal(y.Shape(), x.Shape()) || y.DType() != x.DType() {
					t.Fatalf("%s: %v %v, want %v %v", name, y.DType(), y.Shape(), x.DType(), x.Shape())
				}
				got, err := array.ToSlice[float64](ops.AsType(y, array.Float64))
				if err != nil {
					t.Fatal(err)
				}
				for i, v := range got {
					if v != float64(i+1) {
						t.Fatalf("%s[%d] = %v, want the mean %v", name, i, v, i+1)
					}
				}
			}
		})
	}
}

func TestAverageGradientsOneProcess(t *testing.T) {
	g, err := distributed.Init() // size 1 outside mpirun
	if err != nil {
		t.Fatal(err)
	}
	if g.Size() != 1 {
		t.Skip("run under mpirun: package distributed's tests cover that")
	}
	grads := gradTree()
	avg := nn.AverageGradients(grads, g)
	for name, x := range grads {
		if avg[name] != x {
			t.Fatalf("%s: a group of one changed the gradient", name)
		}
	}
	if err := array.Try(func() { nn.AverageGradients(grads, nil) }); err == nil {
		t.Fatal("a nil group gave no error")
	}
}

func ExampleAverageGradients() {
	g, err := distributed.Init() // size 1 outside mpirun
	if err != nil {
		panic(err)
	}
	grads := map[string]*array.Array{"w": array.FromSlice([]float32{1, 2}), "b": array.FromSlice([]float32{3})}
	avg := nn.AverageGradients(grads, g)
	fmt.Println(avg["w"], avg["b"])
	// Output: array([1., 2.], dtype=float32) array([3.], dtype=float32)
}
