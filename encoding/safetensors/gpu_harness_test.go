//go:build fathom_mslharness

package safetensors

import (
	"path/filepath"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/metal/mslharness"
	"github.com/fathom-go/fathom/ops"
)

// With the fathom_mslharness tag the GPU device runs on the CPU through
// the MSL harness; TestLoadOnGPU makes it the default device.
func TestMain(m *testing.M) { mslharness.Main(m) }

// TestLoadOnGPU: with the GPU the default device, Get makes pending
// arrays on the GPU stream that evaluate into Metal buffers, Load does
// too, GPU kernels read them, and GPU arrays save.
func TestLoadOnGPU(t *testing.T) {
	path := filepath.Join("testdata", "all.safetensors")
	cpu, _, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := array.SetDefaultDevice(array.GPU); err != nil {
		t.Fatal(err)
	}
	defer array.SetDefaultDevice(array.CPU)
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, k := range f.Keys() {
		a, err := f.Get(k)
		if err != nil {
			t.Fatal(err)
		}
		if a.Stream().Device != array.GPU || a.Evaluated() {
			t.Errorf("%s: stream %v, evaluated %v", k, a.Stream(), a.Evaluated())
		}
		if err := a.Eval(); err != nil {
			t.Fatal(err)
		}
		if a.Storage().Device() != array.GPU {
			t.Errorf("%s: memory on %v", k, a.Storage().Device())
		}
		if !same(t, a, cpu[k]) {
			t.Errorf("%s: GPU values differ", k)
		}
	}
	all, _, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"t_f32", "t_f16", "t_bf16", "layers.0.weight"} {
		a := all[k]
		if a.Storage().Device() != array.GPU {
			t.Errorf("Load %s: memory on %v", k, a.Storage().Device())
		}
		sum := ops.Add(a, a)
		if err := sum.Eval(); err != nil {
			t.Fatal(err)
		}
		if sum.Storage().Device() != array.GPU {
			t.Errorf("%s + %s ran on %v", k, k, sum.Storage().Device())
		}
		if err := array.SetDefaultDevice(array.CPU); err != nil {
			t.Fatal(err)
		}
		want := ops.MulScalar(cpu[k], 2)
		if !same(t, sum, want) {
			t.Errorf("%s + %s on the GPU differs from the CPU", k, k)
		}
		if err := array.SetDefaultDevice(array.GPU); err != nil {
			t.Fatal(err)
		}
		// A GPU array saves.
		out := filepath.Join(t.TempDir(), "x.safetensors")
		if err := Save(out, map[string]*array.Array{"s": sum}, nil); err != nil {
			t.Fatal(err)
		}
		back, _, err := Load(out)
		if err != nil {
			t.Fatal(err)
		}
		if !same(t, back["s"], sum) {
			t.Errorf("%s: saved GPU array changed", k)
		}
	}
}
