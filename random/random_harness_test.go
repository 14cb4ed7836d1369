//go:build fathom_mslharness

package random_test

import (
	"runtime"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
	"github.com/fathom-go/fathom/backend/metal/mslharness"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/random"
)

// With the fathom_mslharness tag the GPU device runs on the CPU through
// the MSL harness; the package's other tests stay on the CPU.
func TestMain(m *testing.M) { mslharness.Main(m) }

// onDevice builds f's graph on dev and evaluates it.
func onDevice(t *testing.T, dev array.Device, f func() *array.Array) *array.Array {
	t.Helper()
	if err := array.SetDefaultDevice(dev); err != nil {
		t.Fatal(err)
	}
	defer array.SetDefaultDevice(array.CPU)
	out := f()
	if err := out.Eval(); err != nil {
		t.Fatalf("on %v: %v", dev, err)
	}
	if out.Stream().Device != dev {
		t.Fatalf("result is on %v, not %v", out.Stream().Device, dev)
	}
	return out
}

// TestGPUMatchesCPU runs every function of the package on the GPU and
// on the CPU with the same keys. Bits, keys, uniform draws and what is
// computed from them by exact operations (Bernoulli, RandInt,
// Permutation) agree bit for bit; draws through float32 functions
// (normal, Gumbel, Laplace, the truncated normal) agree to their last
// bits, and Categorical's samples, argmaxes of those, exactly at these
// keys.
func TestGPUMatchesCPU(t *testing.T) {
	key := func() *array.Array { return random.Key(2024) }
	logits := func() *array.Array {
		return array.FromSlice([]float32{0.1, 2, -1, 0.5, 0.5, 0, 3, -2, 1, 1, 0.2, -0.3}, 3, 4)
	}
	vmapBits := graph.Vmap(func(in ...*array.Array) []*array.Array {
		return []*array.Array{random.Bits(in[0], []int{9}, 2)}
	}, nil, nil)
	cf := compile.Compile(func(in ...*array.Array) []*array.Array {
		return []*array.Array{random.Uniform(in[0], -1, 1, []int{33}, array.Float32)}
	})
	defer cf.Release()
	for _, c := range []struct {
		name  string
		f     func() *array.Array
		exact bool
	}{
		{"Split", func() *array.Array { return random.Split(key(), 5) }, true},
		{"Threefry2x32", func() *array.Array {
			return random.Threefry2x32(key(), array.FromSlice([]uint32{1, 2, 3, 4, 5}))
		}, true},
		{"Bits 4", func() *array.Array { return random.Bits(key(), []int{3, 1}, 4) }, true},
		{"Bits 2", func() *array.Array { return random.Bits(key(), []int{7}, 2) }, true},
		{"Bits 1", func() *array.Array { return random.Bits(key(), []int{4, 5}, 1) }, true},
		{"Vmap Bits over keys", func() *array.Array { return vmapBits(random.Split(key(), 3))[0] }, true},
		{"compiled Uniform", func() *array.Array { return cf.Call(key())[0] }, true},
		{"Uniform float32", func() *array.Array { return random.Uniform(key(), -2, 5, []int{1000}, array.Float32) }, true},
		{"Uniform float16", func() *array.Array { return random.Uniform(key(), 0, 1, []int{257}, array.Float16) }, true},
		{"Uniform bfloat16", func() *array.Array { return random.Uniform(key(), -1, 1, []int{31}, array.BFloat16) }, true},
		{"UniformArray", func() *array.Array {
			return random.UniformArray(key(), array.FromSlice([]float32{0, 1}), array.FromSlice([]float32{2, 5}), []int{4, 2}, array.Float32)
		}, true},
		{"Bernoulli", func() *array.Array { return random.Bernoulli(key(), 0.3, []int{500}) }, true},
		{"BernoulliArray", func() *array.Array {
			return random.BernoulliArray(key(), array.FromSlice([]float32{0, 0.25, 0.5, 1}), []int{50, 4})
		}, true},
		{"RandInt int8", func() *array.Array { return random.RandInt(key(), -100, 100, []int{300}, array.Int8) }, true},
		{"RandInt uint16", func() *array.Array { return random.RandInt(key(), 7, 60000, []int{300}, array.Uint16) }, true},
		{"RandInt int32", func() *array.Array { return random.RandInt(key(), -5, 5, []int{300}, array.Int32) }, true},
		{"RandInt uint64", func() *array.Array { return random.RandInt(key(), 0, 1<<40+3, []int{300}, array.Uint64) }, true},
		{"Permutation", func() *array.Array { return random.Permutation(key(), 100) }, true},
		{"PermutationOf", func() *array.Array {
			return random.PermutationOf(key(), array.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 3, 2), 0)
		}, true},
		{"Categorical", func() *array.Array { return random.Categorical(key(), logits(), 1) }, true},
		{"CategoricalN", func() *array.Array { return random.CategoricalN(key(), logits(), 1, 50) }, true},
		{"Normal float32", func() *array.Array { return random.Normal(key(), []int{1000}, array.Float32, 1, 2) }, false},
		{"Normal bfloat16", func() *array.Array { return random.Normal(key(), []int{100}, array.BFloat16, 0, 1) }, false},
		{"NormalArray", func() *array.Array {
			return random.NormalArray(key(), []int{3, 2}, array.Float32, array.FromSlice([]float32{0, 10}), array.FromSlice([]float32{1, 0.5}))
		}, false},
		{"TruncatedNormal", func() *array.Array { return random.TruncatedNormal(key(), -1, 2, []int{500}, array.Float32) }, false},
		{"Gumbel", func() *array.Array { return random.Gumbel(key(), []int{500}, array.Float32) }, false},
		{"Laplace", func() *array.Array { return random.Laplace(key(), []int{500}, array.Float16, 1, 0.5) }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := onDevice(t, array.CPU, c.f)
			got := onDevice(t, array.GPU, c.f)
			approx := arraytest.Approx(0, 0)
			if !c.exact {
				approx = arraytest.Approx(1e-5, 2e-5)
				if dt := got.DType(); dt == array.Float16 || dt == array.BFloat16 {
					approx = arraytest.Approx(1e-2, 1e-2)
				}
			}
			if d := cmp.Diff(want, got, approx); d != "" {
				t.Fatalf("GPU differs from CPU (-CPU +GPU):\n%s", d)
			}
		})
	}
}

// TestGPUDeterminism: the GPU path gives the same numbers as the CPU for
// every GOMAXPROCS from 1 to 8 (the CPU splits its counters over cores;
// the GPU's threads take one pair of counters each), eagerly and
// compiled.
func TestGPUDeterminism(t *testing.T) {
	const n = 1<<15 + 3
	draw := func(in ...*array.Array) []*array.Array {
		return []*array.Array{random.Bits(in[0], []int{n}, 4), random.Bits(in[0], []int{n}, 1),
			random.Uniform(in[0], 0, 1, []int{n}, array.Float32)}
	}
	cf := compile.Compile(draw)
	defer cf.Release()
	var want [][]uint64
	for _, o := range draw(random.Key(77)) {
		want = append(want, bitsOf(t, o))
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for procs := 1; procs <= 8; procs++ {
		runtime.GOMAXPROCS(procs)
		for mode, f := range []func(*array.Array) []*array.Array{
			func(k *array.Array) []*array.Array { return draw(k) },
			func(k *array.Array) []*array.Array { return cf.Call(k) },
		} {
			var outs []*array.Array
			onDevice(t, array.GPU, func() *array.Array {
				outs = f(random.Key(77))
				if err := array.Eval(outs...); err != nil {
					t.Fatal(err)
				}
				return outs[0]
			})
			for i, o := range outs {
				if !slices.Equal(bitsOf(t, o), want[i]) {
					t.Errorf("GPU, GOMAXPROCS %d, compiled %v: output %d differs from the CPU's", procs, mode == 1, i)
				}
			}
		}
	}
}
