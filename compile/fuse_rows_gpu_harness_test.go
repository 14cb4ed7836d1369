//go:build fathom_mslharness

package compile

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/metal/mslharness"
	"github.com/fathom-go/fathom/ops"
)

// With the fathom_mslharness tag the GPU device runs on the CPU through
// the MSL harness.
func TestMain(m *testing.M) { mslharness.Main(m) }

// TestRowFusedOnGPU runs the hand-written row functions compiled with
// the GPU the default device (metal.FusedRows' kernels) and wants the
// CPU's uncompiled values.
func TestRowFusedOnGPU(t *testing.T) {
	fns := map[string]func(in ...*array.Array) []*array.Array{
		"softmax": handSoftmax, "logsoftmax": handLogSoftmax, "layernorm": handLayerNorm,
		"rmsnorm": func(in ...*array.Array) []*array.Array { return handRMSNorm(in[0], in[1]) },
	}
	for _, dt := range []array.DType{array.Float32, array.Float16} {
		for name, f := range fns {
			r := rand.New(rand.NewPCG(uint64(dt), 21))
			const rows, cols = 9, 300
			vals := make([][]float32, 3)
			shapes := [][]int{{cols, rows}, {cols}, {cols}}
			for i, s := range shapes {
				n := 1
				for _, d := range s {
					n *= d
				}
				vals[i] = make([]float32, n)
				for j := range vals[i] {
					vals[i][j] = float32(4*r.Float64() - 2)
				}
			}
			// x transposed: a strided view on both devices
			inputs := func() []*array.Array {
				in := make([]*array.Array, 3)
				for i, v := range vals {
					in[i] = ops.AsType(array.FromSlice(v, shapes[i]...), dt)
				}
				in[0] = ops.Transpose(in[0])
				return in
			}
			want := f(inputs()...)[0]
			if err := want.Eval(); err != nil {
				t.Fatal(err)
			}
			if err := array.SetDefaultDevice(array.GPU); err != nil {
				t.Fatal(err)
			}
			in := inputs()
			if rs, _ := rowSteps(f, in...); len(rs) != 1 {
				t.Errorf("%s/%v on the GPU: %d row-wise steps, want 1", name, dt, len(rs))
			}
			cf := Compile(f)
			got := cf.Call(in...)[0]
			err := got.Eval()
			cf.Release()
			if err2 := array.SetDefaultDevice(array.CPU); err2 != nil {
				t.Fatal(err2)
			}
			if err != nil {
				t.Fatalf("%s/%v: %v", name, dt, err)
			}
			if got.Stream().Device != array.GPU {
				t.Fatalf("%s/%v ran on %v", name, dt, got.Stream().Device)
			}
			sameValues(t, fmt.Sprintf("%s/%v", name, dt), got, want, tolOf(dt))
		}
	}
}

// TestRowFusedLayerNormLargeMeanOnGPU is TestRowFusedLayerNormLargeMean
// with the GPU the default device: the kernel's folds accumulate in
// float over the threadgroup.
func TestRowFusedLayerNormLargeMeanOnGPU(t *testing.T) {
	in, want := largeMeanLayerNorm(t)
	if err := array.SetDefaultDevice(array.GPU); err != nil {
		t.Fatal(err)
	}
	rs, _ := rowSteps(handLayerNorm, in...)
	f := Compile(handLayerNorm)
	got := f.Call(in...)[0]
	err := got.Eval()
	f.Release()
	if err2 := array.SetDefaultDevice(array.CPU); err2 != nil {
		t.Fatal(err2)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || got.Stream().Device != array.GPU {
		t.Fatalf("%d row-wise steps on %v, want 1 on the GPU", len(rs), got.Stream().Device)
	}
	sameValues(t, "against float64", got, want, 5e-3)
}
