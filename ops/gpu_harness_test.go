//go:build fathom_mslharness

package ops_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
	"github.com/fathom-go/fathom/backend/metal/mslharness"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/internal/workload"
	"github.com/fathom-go/fathom/ops"
)

// With the fathom_mslharness tag the GPU device runs on the CPU through
// the MSL harness, so the primitives' evalGPU (gpu.go) run end to end.
// The rest of the package's tests stay on the CPU: the harness only
// becomes the default device inside TestGPUHarnessMatchesCPU.
func TestMain(m *testing.M) { mslharness.Main(m) }

// gpuMatchesCPU builds f's graph on each device from inputs of the given
// shapes (harnessData values, cast to dt) and checks that the GPU's
// result, evaluated through evalGPU, the plans and the MSL kernels,
// matches the CPU's within the dtype's tolerance.
func gpuMatchesCPU(t *testing.T, dt array.DType, shapes [][]int, f func(x []*array.Array) []*array.Array) {
	t.Helper()
	run := func(dev array.Device) []*array.Array {
		t.Helper()
		if err := array.SetDefaultDevice(dev); err != nil {
			t.Fatal(err)
		}
		defer array.SetDefaultDevice(array.CPU)
		var in []*array.Array
		for i, s := range shapes {
			n := 1
			for _, d := range s {
				n *= d
			}
			in = append(in, ops.AsType(array.FromSlice(harnessData(n, i+1), s...), dt))
		}
		outs := f(in)
		if err := array.Eval(outs...); err != nil {
			t.Fatalf("%v: %v", dev, err)
		}
		return outs
	}
	want, got := run(array.CPU), run(array.GPU)
	approx := arraytest.Approx(1e-4, 1e-4)
	switch dt {
	case array.Float16:
		approx = arraytest.Approx(2e-2, 4e-3)
	case array.BFloat16:
		approx = arraytest.Approx(1e-1, 2e-2)
	}
	for i := range want {
		if got[i].Storage().Device() != array.GPU {
			t.Errorf("result %d is on %v, not the GPU", i, got[i].Storage().Device())
		}
		if d := cmp.Diff(want[i], got[i], approx); d != "" {
			t.Errorf("result %d: GPU differs from CPU (-CPU +GPU):\n%s", i, d)
		}
	}
}

// harnessData returns n deterministic float32 values in [-3, 3).
func harnessData(n, seed int) []float32 {
	x := make([]float32, n)
	s := uint32(seed*2654435761 + 1)
	for i := range x {
		s = s*1664525 + 1013904223
		x[i] = float32(s>>8)/float32(1<<24)*6 - 3
	}
	return x
}

// TestGPUHarnessMatchesCPU runs each case on the GPU (through gpu.go, the
// plans and the MSL kernels) and on the CPU, and compares the results.
func TestGPUHarnessMatchesCPU(t *testing.T) {
	gelu := compile.Compile(workload.GELU)
	defer gelu.Release()
	cases := []struct {
		name   string
		shapes [][]int
		f      func(x []*array.Array) *array.Array
		// wantErr: Eval fails with an *array.Error naming this op
		wantErr string
	}{
		{"Add broadcast", [][]int{{2, 3, 4}, {3, 1}}, func(x []*array.Array) *array.Array { return ops.Add(x[0], x[1]) }, ""},
		{"Exp", [][]int{{5, 7}}, func(x []*array.Array) *array.Array { return ops.Exp(x[0]) }, ""},
		{"Sum axis", [][]int{{3, 700}}, func(x []*array.Array) *array.Array { return ops.Sum(x[0], 1) }, ""},
		{"Sum axis 0", [][]int{{33, 5}}, func(x []*array.Array) *array.Array { return ops.Sum(x[0], 0) }, ""},
		{"Max all", [][]int{{4, 9}}, func(x []*array.Array) *array.Array { return ops.Max(x[0]) }, ""},
		{"ArgMax", [][]int{{4, 9}}, func(x []*array.Array) *array.Array { return ops.ArgMax(x[0], -1) }, ""},
		{"Softmax", [][]int{{3, 40}}, func(x []*array.Array) *array.Array { return ops.Softmax(x[0], -1) }, ""},
		{"CumSum", [][]int{{3, 50}}, func(x []*array.Array) *array.Array { return ops.CumSum(x[0], 1, false, true) }, ""},
		{"CumSum reverse exclusive", [][]int{{6, 4}}, func(x []*array.Array) *array.Array { return ops.CumSum(x[0], 0, true, false) }, ""},
		{"MatMul", [][]int{{7, 20}, {20, 9}}, func(x []*array.Array) *array.Array { return ops.MatMul(x[0], x[1]) }, ""},
		{"MatMul batch", [][]int{{2, 3, 4}, {4, 5}}, func(x []*array.Array) *array.Array { return ops.MatMul(x[0], x[1]) }, ""},
		{"Transpose Reshape", [][]int{{3, 4, 5}}, func(x []*array.Array) *array.Array {
			return ops.Reshape(ops.Transpose(x[0], 2, 0, 1), 60)
		}, ""},
		{"Concatenate", [][]int{{2, 3}, {4, 3}}, func(x []*array.Array) *array.Array {
			return ops.Concatenate([]*array.Array{x[0], x[1]}, 0)
		}, ""},
		{"Pad", [][]int{{3, 4}}, func(x []*array.Array) *array.Array { return ops.Pad(x[0], [][2]int{{1, 0}, {0, 2}}, 1.5) }, ""},
		{"Take", [][]int{{4, 3}}, func(x []*array.Array) *array.Array {
			return ops.Take(x[0], array.FromSlice([]int32{3, 0, 0, 2}, 4), 0)
		}, ""},
		{"Take bad index", [][]int{{4, 3}}, func(x []*array.Array) *array.Array {
			return ops.Take(x[0], array.FromSlice([]int32{1, 7}, 2), 0)
		}, "ops.Take"},
		{"Sort", [][]int{{5, 33}}, func(x []*array.Array) *array.Array { return ops.Sort(x[0], -1) }, ""},
		{"Sort axis 0", [][]int{{17, 3}}, func(x []*array.Array) *array.Array { return ops.Sort(x[0], 0) }, ""},
		{"Where", [][]int{{3, 4}, {4}}, func(x []*array.Array) *array.Array {
			return ops.Where(ops.Greater(x[0], x[1]), x[0], x[1])
		}, ""},
		{"AsType float16", [][]int{{6, 5}}, func(x []*array.Array) *array.Array { return ops.AsType(x[0], array.Float16) }, ""},
		{"compiled GELU", [][]int{{8, 9}}, func(x []*array.Array) *array.Array { return gelu.Call(x[0])[0] }, ""},
		{"Prod Min", [][]int{{3, 5}}, func(x []*array.Array) *array.Array {
			return ops.Add(ops.Prod(x[0], 1), ops.Min(x[0], 1))
		}, ""},
		{"All Any", [][]int{{3, 5}}, func(x []*array.Array) *array.Array {
			pos := ops.Greater(x[0], ops.ZerosLike(x[0]))
			return ops.Add(ops.AsType(ops.All(pos, 0), array.Float32), ops.AsType(ops.Any(pos, 0), array.Float32))
		}, ""},
		{"ArgMin", [][]int{{6, 7}}, func(x []*array.Array) *array.Array { return ops.ArgMin(x[0], 0) }, ""},
		{"LogSoftmax LogSumExp", [][]int{{4, 30}}, func(x []*array.Array) *array.Array {
			return ops.Add(ops.LogSoftmax(x[0], -1), ops.ExpandDims(ops.LogSumExp(x[0], -1), -1))
		}, ""},
		{"CumProd CumMax CumMin", [][]int{{3, 9}}, func(x []*array.Array) *array.Array {
			return ops.Add(ops.CumProd(x[0], 1, false, true), ops.Sub(ops.CumMax(x[0], 1, true, true), ops.CumMin(x[0], 0, false, true)))
		}, ""},
		{"ArgSort TopK", [][]int{{4, 21}}, func(x []*array.Array) *array.Array {
			return ops.Add(ops.AsType(ops.ArgSort(x[0], -1), array.Float32), ops.Concatenate([]*array.Array{ops.TopK(x[0], 3, -1), ops.ZerosLike(ops.SliceAxis(x[0], 1, ops.R(3, ops.None)))}, 1))
		}, ""},
		{"TakeAlongAxis PutAlongAxis", [][]int{{3, 4}}, func(x []*array.Array) *array.Array {
			idx := array.FromSlice([]int32{3, 0, -1, 2, 1, 1}, 3, 2)
			t := ops.TakeAlongAxis(x[0], idx, 1)
			return ops.PutAlongAxis(x[0], idx, ops.MulScalar(t, 2), 1)
		}, ""},
		{"Take gradient (scatter-add) and Slice gradient (scatter)", [][]int{{5, 3}}, func(x []*array.Array) *array.Array {
			f := func(in ...*array.Array) *array.Array {
				t := ops.Take(in[0], array.FromSlice([]int32{1, 1, 4}, 3), 0)
				s := ops.Slice(in[0], ops.R(ops.None, ops.None, -2))
				return ops.Add(ops.Sum(ops.Square(t)), ops.Sum(ops.Exp(s)))
			}
			return graph.Grad(f)(x[0])[0]
		}, ""},
		{"creation", [][]int{{2, 3}}, func(x []*array.Array) *array.Array {
			e := ops.Eye(2, 3, 1, array.Float32)
			a := ops.Reshape(ops.Arange(0, 6, 1, array.Float32), 2, 3)
			l := ops.Reshape(ops.Linspace(-1, 1, 6, array.Float32), 2, 3)
			return ops.Add(ops.Add(ops.Add(x[0], e), ops.Add(a, l)), ops.Full([]int{2, 3}, 0.25, array.Float32))
		}, ""},
		{"Copy of a transposed view", [][]int{{4, 6}}, func(x []*array.Array) *array.Array { return ops.Copy(ops.Transpose(x[0])) }, ""},
	}
	defer array.SetDefaultDevice(array.CPU)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// run builds the case's graph on dev and evaluates it.
			run := func(dev array.Device) (*array.Array, error) {
				if err := array.SetDefaultDevice(dev); err != nil {
					t.Fatal(err)
				}
				defer array.SetDefaultDevice(array.CPU)
				var in []*array.Array
				for i, s := range c.shapes {
					n := 1
					for _, d := range s {
						n *= d
					}
					in = append(in, array.FromSlice(harnessData(n, i+1), s...))
				}
				out := c.f(in)
				return out, out.Eval()
			}
			want, werr := run(array.CPU)
			got, gerr := run(array.GPU)
			if got.Stream().Device != array.GPU {
				t.Fatalf("result is on %v, not the GPU", got.Stream().Device)
			}
			if c.wantErr != "" {
				var ge, we *array.Error
				if !errors.As(gerr, &ge) || !errors.As(werr, &we) {
					t.Fatalf("errors GPU %v, CPU %v; want *array.Error from both", gerr, werr)
				}
				if ge.Op != c.wantErr || ge.Error() != we.Error() {
					t.Fatalf("GPU error %q, CPU error %q; want the same, from %s", ge, we, c.wantErr)
				}
				return
			}
			if gerr != nil || werr != nil {
				t.Fatalf("GPU error %v, CPU error %v", gerr, werr)
			}
			if got.Storage().Device() != array.GPU {
				t.Errorf("result storage is on %v, not the GPU", got.Storage().Device())
			}
			approx := arraytest.Approx(0, 0)
			if want.DType().IsFloat() {
				approx = arraytest.Approx(1e-4, 1e-5)
			}
			if d := cmp.Diff(want, got, approx); d != "" {
				t.Fatalf("GPU differs from CPU (-CPU +GPU):\n%s", d)
			}
		})
	}
}
