//go:build darwin && cgo

package metal

import (
	"encoding/binary"
	"math"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/fathom-go/fathom/array"
	"github.com/progrium/darwinkit/macos/metal"
	"github.com/progrium/darwinkit/objc"
)

// These tests need a Mac with Apple silicon; on Linux they are only
// type-checked (tools/darwincheck -test). Where Metal is unavailable they
// skip, unless FATHOM_DEVICE=gpu asks for the GPU, when they fail.

func gpuHost(t *testing.T) *host {
	t.Helper()
	h, err := getHost()
	if err != nil {
		if os.Getenv(array.EnvDevice) == "gpu" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return h
}

const testMSL = `
#include <metal_stdlib>
using namespace metal;

struct Params { uint n; float add; };

[[host_name("add_const")]] kernel void add_const(
		device const float* x [[buffer(0)]],
		device float* y [[buffer(1)]],
		constant Params& p [[buffer(2)]],
		uint i [[thread_position_in_grid]]) {
	if (i < p.n) y[i] = x[i] + p.add;
}

[[host_name("gather_table")]] kernel void gather_table(
		device float* y [[buffer(0)]],
		constant float* table [[buffer(1)]],
		uint i [[thread_position_in_grid]]) {
	y[i] = table[i];
}
`

func addConst(x, y Memory, n int, add float32) Launch {
	p := binary.LittleEndian.AppendUint32(nil, uint32(n))
	p = binary.LittleEndian.AppendUint32(p, math.Float32bits(add))
	return Launch{Library: "gen:test", Source: testMSL, Kernel: "add_const",
		Buffers: []bufArg{rd(x), wr(y)}, Params: p, Grid: [3]int{n, 1, 1}, Group: [3]int{256, 1, 1}}
}

func TestGPURunsGeneratedKernel(t *testing.T) {
	h := gpuHost(t)
	const n = 1000 // not a multiple of the threadgroup size
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = float32(i)
	}
	x := devF32(t, h, vals...)
	y := devZeros(t, h, n)
	mustRun(t, h, addConst(x, y, n, 0.5))
	mustSync(t, h)
	for i, v := range f32s(y.Bytes())[:n] {
		if v != float32(i)+0.5 {
			t.Fatalf("y[%d] = %v, want %v", i, v, float32(i)+0.5)
		}
	}
}

// A chain of dependent dispatches spanning several command buffers: each
// reads what the previous wrote, so a missing barrier shows as a wrong sum.
func TestGPUDependentChain(t *testing.T) {
	h := gpuHost(t)
	const n, steps = 100000, 150
	a, b := devZeros(t, h, n), devZeros(t, h, n)
	for range steps {
		mustRun(t, h, addConst(a, b, n, 1))
		a, b = b, a
	}
	mustSync(t, h)
	for i, v := range f32s(a.Bytes())[:n] {
		if v != steps {
			t.Fatalf("a[%d] = %v after %d steps", i, v, steps)
		}
	}
}

func TestGPUHostMemoryAndLargeParams(t *testing.T) {
	h := gpuHost(t)
	x := hostF32(1, 2, 3)
	y := make(hostMem, 12)
	mustRun(t, h, addConst(x, y, 3, 10))
	mustSync(t, h)
	wantF32(t, "y (host memory)", y, 11, 12, 13)

	table := make([]float32, 3000) // 12000 bytes: more than setBytes takes
	for i := range table {
		table[i] = float32(3 * i)
	}
	out := devZeros(t, h, len(table))
	mustRun(t, h, Launch{Library: "gen:test", Source: testMSL, Kernel: "gather_table",
		Buffers: []bufArg{wr(out)}, Params: hostF32(table...), Grid: [3]int{len(table), 1, 1}, Group: [3]int{64, 1, 1}})
	mustSync(t, h)
	wantF32(t, "table", out, table...)
}

func TestGPUCompileErrors(t *testing.T) {
	h := gpuHost(t)
	x, y := devZeros(t, h, 1), devZeros(t, h, 1)
	l := addConst(x, y, 1, 1)
	l.Library, l.Source = "gen:broken", "kernel void f( {"
	wantErr(t, h.run([]Launch{l}), "gen:broken", "error")
	l = addConst(x, y, 1, 1)
	l.Kernel = "no_such_kernel"
	wantErr(t, h.run([]Launch{l}), "no_such_kernel")
}

// Every embedded library compiles with Apple's compiler (the harness on
// Linux accepts some code Metal rejects), as a whole and unit by unit (as
// the host compiles it, see units.go), and every kernel in it builds a
// pipeline from its unit, which holds it.
func TestGPUEmbeddedLibrariesCompile(t *testing.T) {
	h := gpuHost(t)
	total := 0
	for _, lib := range libraryNames() {
		src, err := librarySource(lib)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := h.pipes.drv.compile(src)
		if err != nil {
			t.Errorf("%s: %v", lib, err)
			continue
		}
		var names []string
		objc.WithAutoreleasePool(func() {
			names = metal.LibraryObject{Object: objc.ObjectFrom(whole)}.FunctionNames()
		})
		releaseHandle(whole)
		if len(names) == 0 {
			t.Errorf("%s: no kernels", lib)
		}
		for _, k := range names {
			if _, err := h.pipes.get(&Launch{Library: lib, Kernel: k}); err != nil {
				t.Error(err)
			}
		}
		u, err := unitsOf(lib)
		if err != nil {
			t.Fatal(err)
		}
		if len(u.unitOf) != len(names) {
			t.Errorf("%s: %d kernels in Metal's library, %d in its units", lib, len(names), len(u.unitOf))
		}
		total += len(names)
		t.Logf("%s: %d kernels", lib, len(names))
	}
	t.Logf("%d kernels", total)
}

// TestGPUPipelineArchive builds pipelines through a fresh binary archive,
// saves it, and opens it again as the next process would: the same
// pipelines are then found in it rather than compiled.
func TestGPUPipelineArchive(t *testing.T) {
	gpuHost(t)
	dir := t.TempDir()
	open := func() *host {
		h, err := openHostEnv(func(k string) string {
			if k == envPipelineCache {
				return dir
			}
			return ""
		})
		if err != nil {
			t.Fatal(err)
		}
		if h.pipes.drv.(*mtlDriver).archive == nil {
			t.Skip("this system has no Metal binary archives")
		}
		return h
	}
	kernels := []string{"binary_Add_float32_vv", "binary_Add_float32_strided", "unary_Exp_float32_contig"}
	libs := []string{"binary.metal", "binary.metal", "unary.metal"}
	h := open()
	start := time.Now()
	for i, k := range kernels {
		if _, err := h.pipes.get(&Launch{Library: libs[i], Kernel: k}); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("first use, compiled: %v for %d kernels of 2 units", time.Since(start), len(kernels))
	a := h.pipes.drv.(*mtlDriver).archive
	if hits, misses := a.stats(); hits != 0 || misses != len(kernels) {
		t.Errorf("fresh archive: %d hits, %d misses", hits, misses)
	}
	if err := a.flush(); err != nil {
		t.Fatal(err)
	}
	h2 := open()
	start = time.Now()
	for i, k := range kernels {
		if _, err := h2.pipes.get(&Launch{Library: libs[i], Kernel: k}); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("first use, from the archive: %v", time.Since(start))
	if hits, misses := h2.pipes.drv.(*mtlDriver).archive.stats(); hits != len(kernels) || misses != 0 {
		t.Errorf("saved archive: %d hits, %d misses, want %d hits", hits, misses, len(kernels))
	}
}

func TestGPUAllocLimits(t *testing.T) {
	gpuHost(t)
	h, err := openHostEnv(func(k string) string {
		if k == envMemoryLimitMB {
			return "64"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := h.alloc(40 << 20)
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.alloc(40 << 20)
	wantErr(t, err, "out of device memory", envMemoryLimitMB)
	z, err := h.alloc(0)
	if err != nil || len(z.Bytes()) != 0 {
		t.Errorf("Alloc(0) = %v bytes, %v", len(z.Bytes()), err)
	}
	if s := h.cache.stats(); s.Active < 40<<20 {
		t.Errorf("stats %+v", s)
	}
	runtime.KeepAlive(a)
}

func TestGPUBackendRegistered(t *testing.T) {
	gpuHost(t)
	if err := array.DeviceAvailable(array.GPU); err != nil {
		t.Fatal(err)
	}
	e, err := newExecutor(array.DefaultStream(array.GPU))
	if err != nil {
		t.Fatal(err)
	}
	x := hostF32(1)
	y := make(hostMem, 4)
	if err := e.Run(addConst(x, y, 1, 2)); err != nil {
		t.Fatal(err)
	}
	if err := e.Synchronize(); err != nil {
		t.Fatal(err)
	}
	wantF32(t, "y", y, 3)
}
