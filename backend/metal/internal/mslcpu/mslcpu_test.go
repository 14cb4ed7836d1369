package mslcpu_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/backend/metal/internal/mslcpu"
	"github.com/fathom-go/fathom/backend/metal/internal/plan"
)

type mem []byte

func (m mem) Bytes() []byte { return m }

func requireHarness(t *testing.T) {
	t.Helper()
	if err := mslcpu.Available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the MSL harness needs clang++ on CI: %v", err)
		}
		t.Skipf("skipping: %v", err)
	}
}

const testLib = `#include <metal_stdlib>
using namespace metal;

template <typename T>
[[kernel]] void scale(device const T* x [[buffer(0)]], device T* y [[buffer(1)]],
                      constant float& s [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  y[i] = x[i] * T(s);
}
instantiate_kernel("scale_float", scale, float)
instantiate_kernel("scale_int", scale, int)

// The barrier after the first store is missing: threads that run early
// read partial sums that later threads have not stored yet.
kernel void row_sum_missing_barrier(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                                    uint row [[threadgroup_position_in_grid]],
                                    uint lid [[thread_position_in_threadgroup]],
                                    uint tpg [[threads_per_threadgroup]]) {
  threadgroup float partial[64];
  partial[lid] = x[row * tpg + lid];
  for (uint s = tpg / 2; s > 0; s >>= 1) {
    if (lid < s) {
      partial[lid] += partial[lid + s];
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  if (lid == 0) {
    out[row] = partial[0];
  }
}
register_kernel(row_sum_missing_barrier)

kernel void divergent_barrier(device float* out [[buffer(0)]], uint lid [[thread_position_in_threadgroup]]) {
  if (lid < 16) {
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[lid] = 1.0f;
}
register_kernel(divergent_barrier)

// Declares its largest threadgroup: Metal's pipeline allows no more.
template <typename T>
[[kernel, max_total_threads_per_threadgroup(64)]] void capped(device T* y [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  y[i] = T(1);
}
instantiate_kernel("capped_float", capped, float)
`

var lib = mslcpu.Library{Name: "gen:mslcpu-test", Source: testLib}

func f32s(xs ...float32) mem {
	b := make(mem, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func f32at(b []byte, i int) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])) }

func launch(kernel string, bufs []plan.BufArg, params []byte, grid, group [3]int) plan.Launch {
	return plan.Launch{Library: lib.Name, Source: lib.Source, Kernel: kernel, Buffers: bufs, Params: params, Grid: grid, Group: group}
}

func TestKernelsAreSelectedByName(t *testing.T) {
	requireHarness(t)
	names, err := mslcpu.Kernels(lib)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names, " "); got != "scale_float scale_int row_sum_missing_barrier divergent_barrier capped_float" {
		t.Errorf("kernels %q", got)
	}
	x := f32s(1, 2, 3, 4, 5)
	y := make(mem, len(x))
	s := f32s(2.5)
	var e mslcpu.Executor
	// 5 threads in groups of 2: the last group is partial.
	if err := e.Run(launch("scale_float", []plan.BufArg{{Mem: x}, {Mem: y, Write: true}}, s, [3]int{5, 1, 1}, [3]int{2, 1, 1})); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if got, want := f32at(y, i), 2.5*float32(i+1); got != want {
			t.Errorf("y[%d] = %v, want %v", i, got, want)
		}
	}
	xi := mem{7, 0, 0, 0, 0xfd, 0xff, 0xff, 0xff} // 7, -3
	yi := make(mem, 8)
	if err := e.Run(launch("scale_int", []plan.BufArg{{Mem: xi}, {Mem: yi, Write: true}}, f32s(2), [3]int{2, 1, 1}, [3]int{2, 1, 1})); err != nil {
		t.Fatal(err)
	}
	if a, b := int32(binary.LittleEndian.Uint32(yi)), int32(binary.LittleEndian.Uint32(yi[4:])); a != 14 || b != -6 {
		t.Errorf("scale_int gave %d, %d", a, b)
	}
}

func TestOneMemoryBoundTwiceIsOneBuffer(t *testing.T) {
	requireHarness(t)
	// y = x * 2 within one memory: x is elements 0..2, y elements 3..5.
	m := f32s(1, 2, 3, 0, 0, 0)
	var e mslcpu.Executor
	l := launch("scale_float", []plan.BufArg{{Mem: m}, {Mem: m, Offset: 12, Write: true}}, f32s(2), [3]int{3, 1, 1}, [3]int{3, 1, 1})
	if err := e.Run(l); err != nil {
		t.Fatal(err)
	}
	for i, want := range []float32{1, 2, 3, 2, 4, 6} {
		if got := f32at(m, i); got != want {
			t.Errorf("m[%d] = %v, want %v", i, got, want)
		}
	}
}

func TestScheduleIsPassedToTheRunner(t *testing.T) {
	requireHarness(t)
	x := make(mem, 4*64)
	for i := range 64 {
		binary.LittleEndian.PutUint32(x[4*i:], math.Float32bits(1))
	}
	sum := func(schedule string) float32 {
		out := make(mem, 4)
		e := mslcpu.Executor{Schedule: schedule}
		if err := e.Run(launch("row_sum_missing_barrier", []plan.BufArg{{Mem: x}, {Mem: out, Write: true}}, nil,
			[3]int{64, 1, 1}, [3]int{64, 1, 1})); err != nil {
			t.Fatal(err)
		}
		return f32at(out, 0)
	}
	// Reverse order stores every partial sum before it is read, forward
	// order reads them first: the missing barrier shows under one order.
	if f, r := sum("forward"), sum("reverse"); f == 64 || r != 64 {
		t.Errorf("sum of 64 ones with a missing barrier: forward %v (want wrong), reverse %v (want 64)", f, r)
	}
}

func TestKernelFaultsAreErrors(t *testing.T) {
	requireHarness(t)
	var e mslcpu.Executor
	out := make(mem, 4*32)
	err := e.Run(launch("divergent_barrier", []plan.BufArg{{Mem: out, Write: true}}, nil, [3]int{32, 1, 1}, [3]int{32, 1, 1}))
	if err == nil || !strings.Contains(err.Error(), "divergent threadgroup_barrier") {
		t.Errorf("divergent barrier: error %v", err)
	}
	// The runner that faulted is gone; the next launch starts another.
	y := make(mem, 4)
	if err := e.Run(launch("scale_float", []plan.BufArg{{Mem: f32s(3)}, {Mem: y, Write: true}}, f32s(2), [3]int{1, 1, 1}, [3]int{1, 1, 1})); err != nil || f32at(y, 0) != 6 {
		t.Errorf("after a fault: %v, %v", err, f32at(y, 0))
	}
	if err := e.Run(launch("no_such_kernel", nil, nil, [3]int{1, 1, 1}, [3]int{1, 1, 1})); err == nil ||
		!strings.Contains(err.Error(), "no kernel named no_such_kernel") {
		t.Errorf("unknown kernel: error %v", err)
	}
	for _, l := range []plan.Launch{
		launch("scale_float", nil, nil, [3]int{0, 1, 1}, [3]int{1, 1, 1}),
		launch("scale_float", nil, nil, [3]int{4, 1, 1}, [3]int{64, 32, 1}),
		launch("scale_float", []plan.BufArg{{Mem: y, Offset: 8}}, nil, [3]int{1, 1, 1}, [3]int{1, 1, 1}),
	} {
		if err := e.Run(l); err == nil {
			t.Errorf("launch with grid %v, group %v, buffers %v: no error", l.Grid, l.Group, l.Buffers)
		}
	}
}

func TestCompileErrorsNameTheLine(t *testing.T) {
	requireHarness(t)
	bad := mslcpu.Library{Name: "gen:bad", Source: "#include <metal_stdlib>\nusing namespace metal;\n#line 1 \"bad.metal\"\n" +
		"template <typename T>\n[[kernel]] void k(device T* y [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  y[i] = undeclared;\n}\n" +
		"instantiate_kernel(\"k\", k, float)\n"}
	err := mslcpu.Prepare(bad)
	if err == nil || !strings.Contains(err.Error(), "bad.metal:3:") || !strings.Contains(err.Error(), "undeclared") {
		t.Errorf("compile error %v, want one at bad.metal:3", err)
	}
}

func TestDeclaredMaxThreadsAreEnforced(t *testing.T) {
	requireHarness(t)
	var e mslcpu.Executor
	y := make(mem, 4*128)
	if err := e.Run(launch("capped_float", []plan.BufArg{{Mem: y, Write: true}}, nil, [3]int{128, 1, 1}, [3]int{64, 1, 1})); err != nil {
		t.Errorf("64 threads: %v", err)
	}
	err := e.Run(launch("capped_float", []plan.BufArg{{Mem: y, Write: true}}, nil, [3]int{128, 1, 1}, [3]int{32, 4, 1}))
	if err == nil || !strings.Contains(err.Error(), "max_total_threads_per_threadgroup(64)") {
		t.Errorf("128 threads for a kernel that declares 64: error %v", err)
	}
	if got := mslcpu.PipelineMaxThreads(lib, "capped_float"); got != 64 {
		t.Errorf("PipelineMaxThreads(capped_float) = %d, want 64", got)
	}
	if got := mslcpu.PipelineMaxThreads(lib, "scale_float"); got != 1024 {
		t.Errorf("PipelineMaxThreads(scale_float) = %d, want 1024", got)
	}
	// An executor's MaxThreads lowers its pipelines' limit, the declared
	// one still applying below it.
	small := mslcpu.Executor{MaxThreads: 96}
	if err := small.Run(launch("capped_float", []plan.BufArg{{Mem: y, Write: true}}, nil, [3]int{128, 1, 1}, [3]int{64, 1, 1})); err != nil {
		t.Errorf("64 threads under MaxThreads 96: %v", err)
	}
	x0 := f32s(1, 2, 3, 4, 5)
	err = small.Run(launch("scale_float", []plan.BufArg{{Mem: x0}, {Mem: y, Write: true}}, f32s(2), [3]int{128, 1, 1}, [3]int{128, 1, 1}))
	if err == nil || !strings.Contains(err.Error(), "at most 96 (the executor's MaxThreads)") {
		t.Errorf("128 threads under MaxThreads 96: error %v", err)
	}
	err = small.Run(launch("capped_float", []plan.BufArg{{Mem: y, Write: true}}, nil, [3]int{128, 1, 1}, [3]int{96, 1, 1}))
	if err == nil || !strings.Contains(err.Error(), "max_total_threads_per_threadgroup(64)") {
		t.Errorf("96 threads for a kernel that declares 64, under MaxThreads 96: error %v", err)
	}
	// MSL_MAX_THREADS lowers every pipeline's limit.
	t.Setenv("MSL_MAX_THREADS", "32")
	if got := mslcpu.PipelineMaxThreads(lib, "capped_float"); got != 32 {
		t.Errorf("PipelineMaxThreads(capped_float) with MSL_MAX_THREADS=32 = %d", got)
	}
	x := f32s(1, 2, 3, 4, 5)
	err = e.Run(launch("scale_float", []plan.BufArg{{Mem: x}, {Mem: y, Write: true}}, f32s(2), [3]int{5, 1, 1}, [3]int{64, 1, 1}))
	if err == nil || !strings.Contains(err.Error(), "MSL_MAX_THREADS") {
		t.Errorf("64 threads with MSL_MAX_THREADS=32: error %v", err)
	}
}

func TestLibrariesMetalRejectsAreRefused(t *testing.T) {
	requireHarness(t)
	for _, c := range []struct{ name, src, want string }{
		{"gen:lint", "#include <metal_stdlib>\nusing namespace metal;\n#line 1 \"lint.metal\"\n" +
			"kernel void k(device float* y [[buffer(0)]], uint3 g [[threadgroup_position_in_grid]], uint2 l [[thread_position_in_threadgroup]]) {\n  y[g.x] = float(l.x);\n}\nregister_kernel(k)\n",
			"lint.metal:1: k: [[threadgroup_position_in_grid]] g is uint3 but [[thread_position_in_threadgroup]] l is uint2"},
		{"gen:syntax", "#include <metal_stdlib>\nusing namespace metal;\n#line 1 \"syntax.metal\"\n" +
			"inline float first(constant float* x) { return x[0]; }\n" +
			"kernel void k(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  y[i] = first(y);\n}\nregister_kernel(k)\n",
			"syntax.metal:3:"},
	} {
		err := mslcpu.Prepare(mslcpu.Library{Name: c.name, Source: c.src})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one with %q", c.name, err, c.want)
		}
	}
}

func TestLintPreprocessesLikeMetal(t *testing.T) {
	src := `#include <metal_stdlib>
using namespace metal;
#define instantiate_kernel(name, func, ...) \
  template [[host_name(name)]] [[kernel]] decltype(func<__VA_ARGS__>) func<__VA_ARGS__>;
#define N_(a, b) a##b
#if defined(instantiate_kernel) && N_(1, 6) == 16
#define ROWS N_(1, 6)
#else
#define ROWS 1
#endif
#define inst(op, T, ...) instantiate_kernel("k_" #op "_" #T, k, T, __VA_ARGS__)
typedef ushort bf16_t;
template <typename T, int M>
[[kernel, max_total_threads_per_threadgroup(M * 32)]] void k(device T* y [[buffer(0)]], uint2 l [[thread_position_in_threadgroup]]) {
  threadgroup T t[ROWS][M];
  t[l.y][l.x] = y[l.x];
  y[l.x] = t[0][l.x];
}
inst(add, float, 4)
inst(add, bf16_t, 2)
`
	r := mslcpu.Lint(mslcpu.Library{Name: "pp", Source: src})
	if len(r.Findings) > 0 {
		t.Fatalf("findings: %v", r.Findings)
	}
	want := []mslcpu.KernelInfo{
		{Name: "k_add_float", Function: "k", MaxThreads: 128, ThreadgroupBytes: 16 * 4 * 4, Buffers: []int{0}},
		{Name: "k_add_bf16_t", Function: "k", MaxThreads: 64, ThreadgroupBytes: 16 * 2 * 2, Buffers: []int{0}},
	}
	if fmt.Sprint(r.Kernels) != fmt.Sprint(want) {
		t.Errorf("kernels %+v, want %+v", r.Kernels, want)
	}
}

// TestAtomicFloatHasAddAndSubOnly: Metal's atomic_float has no max, min
// or bitwise read-modify-write operations, so the harness refuses them
// (in the run and the syntax-only builds) while int and uint keep them.
func TestAtomicFloatHasAddAndSubOnly(t *testing.T) {
	requireHarness(t)
	src := func(name, typ, op string) mslcpu.Library {
		return mslcpu.Library{Name: name, Source: "#include <metal_stdlib>\nusing namespace metal;\n#line 1 \"" + name + "\"\n" +
			"[[kernel]] void k(device " + typ + "* x [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n" +
			"  atomic_fetch_" + op + "_explicit(&x[i], 1, memory_order_relaxed);\n}\nregister_kernel(k)\n"}
	}
	for _, ok := range []mslcpu.Library{src("gen:fadd", "atomic_float", "add"), src("gen:fsub", "atomic_float", "sub"),
		src("gen:umax", "atomic_uint", "max"), src("gen:ior", "atomic_int", "or")} {
		if err := mslcpu.Prepare(ok); err != nil {
			t.Errorf("%s: %v", ok.Name, err)
		}
	}
	for _, op := range []string{"max", "min", "and", "or", "xor"} {
		bad := src("gen:f"+op, "atomic_float", op)
		err := mslcpu.Prepare(bad)
		if err == nil || !strings.Contains(err.Error(), "atomic_float has add and sub only") {
			t.Errorf("atomic_fetch_%s_explicit on atomic_float: error %v", op, err)
		}
	}
}
