//go:build fathom_mslharness

package npy

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/metal/mslharness"
	"github.com/fathom-go/fathom/ops"
)

// With the fathom_mslharness tag the GPU device runs on the CPU through
// the MSL harness; TestLoadOnGPU makes it the default device.
func TestMain(m *testing.M) { mslharness.Main(m) }

// onGPU fails unless a is evaluated on the GPU stream in GPU memory.
func onGPU(t *testing.T, name string, a *array.Array) {
	t.Helper()
	if err := a.Eval(); err != nil {
		t.Fatal(err)
	}
	if a.Stream().Device != array.GPU || a.Storage().Device() != array.GPU {
		t.Errorf("%s: stream %v, memory on %v; want the GPU", name, a.Stream(), a.Storage().Device())
	}
}

// TestLoadOnGPU: with the GPU the default device, LoadFile, Load and
// LoadNPZ make their arrays there (Metal buffers the host filled), GPU
// kernels read them (Fortran order too), and GPU arrays save.
func TestLoadOnGPU(t *testing.T) {
	if err := array.SetDefaultDevice(array.GPU); err != nil {
		t.Fatal(err)
	}
	defer array.SetDefaultDevice(array.CPU)
	for _, name := range []string{"float32.npy", "float32_be.npy", "float32_fortran.npy", "float16.npy", "int32.npy"} {
		a, err := LoadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		onGPU(t, name, a)
		f, err := os.Open(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := Load(opaque{f})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		onGPU(t, name+" (Load)", b)
		if !same(t, a, b) {
			t.Errorf("%s: Load and LoadFile differ", name)
		}
		// A GPU kernel reads the loaded memory: a + a == 2a.
		sum := ops.Add(a, a)
		onGPU(t, name+" a+a", sum)
		want := ops.MulScalar(a, 2)
		if err := array.SetDefaultDevice(array.CPU); err != nil {
			t.Fatal(err)
		}
		cpu, err := LoadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if cpu.Storage().Device() != array.CPU {
			t.Errorf("%s: loaded on the CPU into %v memory", name, cpu.Storage().Device())
		}
		if !same(t, sum, want) || !same(t, a, cpu) {
			t.Errorf("%s: GPU values differ", name)
		}
		if err := array.SetDefaultDevice(array.GPU); err != nil {
			t.Fatal(err)
		}
		// A GPU array saves.
		path := filepath.Join(t.TempDir(), name)
		if err := SaveFile(path, sum); err != nil {
			t.Fatal(err)
		}
		back, err := LoadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !same(t, back, sum) {
			t.Errorf("%s: saved GPU array changed", name)
		}
	}
	all, err := LoadNPZ(filepath.Join("testdata", "arrays_compressed.npz"))
	if err != nil {
		t.Fatal(err)
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range all {
			if !yield(k) {
				return
			}
		}
	})
	for _, k := range keys {
		onGPU(t, k, all[k])
	}
}
