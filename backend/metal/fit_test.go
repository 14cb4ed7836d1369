package metal

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/backend/metal/internal/plan"
)

func TestFitLaunch(t *testing.T) {
	l := func(fit plan.Fit, grid, group [3]int) Launch {
		return Launch{Library: "test.metal", Kernel: "k", Grid: grid, Group: group, Fit: fit}
	}
	cases := []struct {
		name      string
		in        Launch
		max, simd int
		grid      [3]int
		group     [3]int
		err       string
	}{
		{"fits already", l(plan.FitNone, [3]int{64, 8, 1}, [3]int{32, 8, 1}), 256, 32, [3]int{64, 8, 1}, [3]int{32, 8, 1}, ""},
		{"threads 1-D", l(plan.FitThreads, [3]int{3000, 1, 1}, [3]int{1024, 1, 1}), 896, 32, [3]int{3000, 1, 1}, [3]int{896, 1, 1}, ""},
		{"threads 2-D shrinks y", l(plan.FitThreads, [3]int{40, 40, 3}, [3]int{32, 32, 1}), 512, 32, [3]int{40, 40, 3}, [3]int{32, 16, 1}, ""},
		{"threads 2-D odd limit", l(plan.FitThreads, [3]int{40, 40, 3}, [3]int{64, 16, 1}), 900, 32, [3]int{40, 40, 3}, [3]int{64, 14, 1}, ""},
		{"threads 3-D", l(plan.FitThreads, [3]int{9, 9, 9}, [3]int{8, 8, 8}), 96, 32, [3]int{9, 9, 9}, [3]int{8, 8, 1}, ""},
		{"threads below a simdgroup", l(plan.FitThreads, [3]int{100, 1, 1}, [3]int{64, 1, 1}), 20, 32, [3]int{100, 1, 1}, [3]int{20, 1, 1}, ""},
		{"groups keep their count", l(plan.FitGroups, [3]int{5 * 1024, 1, 1}, [3]int{1024, 1, 1}), 896, 32, [3]int{5 * 896, 1, 1}, [3]int{896, 1, 1}, ""},
		{"groups rounded to the SIMD width", l(plan.FitGroups, [3]int{3 * 1024, 7, 1}, [3]int{1024, 1, 1}), 900, 32, [3]int{3 * 896, 7, 1}, [3]int{896, 1, 1}, ""},
		{"groups, another width", l(plan.FitGroups, [3]int{2 * 512, 1, 1}, [3]int{512, 1, 1}), 500, 64, [3]int{2 * 448, 1, 1}, [3]int{448, 1, 1}, ""},
		{"simd rounds the grid up", l(plan.FitSimd, [3]int{2048, 3, 1}, [3]int{1024, 1, 1}), 896, 32, [3]int{2688, 3, 1}, [3]int{896, 1, 1}, ""},
		{"simd 160", l(plan.FitSimd, [3]int{512, 1, 1}, [3]int{256, 1, 1}), 160, 32, [3]int{640, 1, 1}, [3]int{160, 1, 1}, ""},
		{"default width", l(plan.FitSimd, [3]int{512, 1, 1}, [3]int{256, 1, 1}), 100, 0, [3]int{576, 1, 1}, [3]int{96, 1, 1}, ""},
		{"none", l(plan.FitNone, [3]int{64, 64, 1}, [3]int{16, 16, 1}), 192, 32, [3]int{}, [3]int{}, "kernel k needs threadgroups of exactly 256 threads ([16 16 1]); its pipeline allows at most 192"},
		{"simd below a simdgroup", l(plan.FitSimd, [3]int{256, 1, 1}, [3]int{256, 1, 1}), 24, 32, [3]int{}, [3]int{}, "kernel k works on whole simdgroups of 32 threads; its pipeline allows at most 24"},
		{"groups 2-D", l(plan.FitGroups, [3]int{256, 2, 1}, [3]int{128, 2, 1}), 128, 32, [3]int{}, [3]int{}, "needs a 1-D threadgroup"},
		{"no threads", l(plan.FitThreads, [3]int{256, 1, 1}, [3]int{128, 1, 1}), 0, 32, [3]int{}, [3]int{}, "allows no threads"},
	}
	for _, c := range cases {
		got, err := fitLaunch(c.in, c.max, c.simd)
		if c.err != "" {
			if err == nil {
				t.Errorf("%s: fitted to %v %v, want an error", c.name, got.Grid, got.Group)
				continue
			}
			wantErr(t, err, "metal.Run", c.err)
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got.Grid != c.grid || got.Group != c.group {
			t.Errorf("%s: grid %v group %v, want %v %v", c.name, got.Grid, got.Group, c.grid, c.group)
		}
		if n := got.Group[0] * got.Group[1] * got.Group[2]; n > c.max {
			t.Errorf("%s: %d threads, above the limit %d", c.name, n, c.max)
		}
		if err := checkLaunch(&got); err != nil {
			t.Errorf("%s: the fitted launch fails its checks: %v", c.name, err)
		}
	}
}

// TestHostFitsThreadgroupsToThePipeline runs launches of every Fit mode
// on a fake GPU whose pipelines report small limits, as register-heavy
// kernels have on a Mac, and checks what the host encoded: the group
// shrunk to the limit (a multiple of the SIMD width), the grid
// recomputed, the caller's launches unchanged, and kernels that need
// their group reported by name with the limit.
func TestHostFitsThreadgroupsToThePipeline(t *testing.T) {
	for _, limit := range []int{512, 896, 900} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			h, g := newFakeHost(t, testConfig())
			g.maxThreads = limit
			fitted := limit / 32 * 32
			n := 3000
			vals := make([]float32, n)
			for i := range vals {
				vals[i] = float32(i)
			}
			x, y, z := devF32(t, h, vals...), devZeros(t, h, n), devZeros(t, h, 8)
			threads := kernelLaunch("add1", n, rd(x), wr(y))
			threads.Group, threads.Fit = [3]int{1024, 1, 1}, plan.FitThreads
			groups := Launch{Library: "test.metal", Kernel: "noop", Buffers: []bufArg{wr(z)},
				Grid: [3]int{3 * 1024, 1, 1}, Group: [3]int{1024, 1, 1}, Fit: plan.FitGroups}
			simd := groups
			simd.Grid, simd.Fit = [3]int{2048, 2, 1}, plan.FitSimd
			small := groups
			small.Grid, small.Group = [3]int{300, 1, 1}, [3]int{256, 1, 1} // fits: untouched
			ls := []Launch{threads, groups, simd, small}
			orig := append([]Launch{}, ls...)
			mustRun(t, h, ls...)
			mustSync(t, h)
			for i := range ls {
				if ls[i].Grid != orig[i].Grid || ls[i].Group != orig[i].Group {
					t.Errorf("launch %d: the caller's launch changed to %v %v", i, ls[i].Grid, ls[i].Group)
				}
			}
			want := []struct{ grid, group [3]int }{
				{[3]int{n, 1, 1}, [3]int{fitted, 1, 1}},
				{[3]int{3 * fitted, 1, 1}, [3]int{fitted, 1, 1}},
				{[3]int{(2048 + fitted - 1) / fitted * fitted, 2, 1}, [3]int{fitted, 1, 1}},
				{[3]int{300, 1, 1}, [3]int{256, 1, 1}},
			}
			var got []fakeDispatch
			for _, cb := range g.cbs {
				got = append(got, cb.dispatches...)
			}
			if len(got) != len(want) {
				t.Fatalf("%d dispatches, want %d", len(got), len(want))
			}
			for i, w := range want {
				if got[i].grid != w.grid || got[i].group != w.group {
					t.Errorf("dispatch %d (%s): grid %v group %v, want %v %v", i, got[i].kernel, got[i].grid, got[i].group, w.grid, w.group)
				}
			}
			want1 := make([]float32, n)
			for i := range want1 {
				want1[i] = float32(i) + 1
			}
			wantF32(t, "add1 with a fitted group", y, want1...)

			fixed := groups
			fixed.Fit = plan.FitNone
			g.resetEvents()
			wantErr(t, h.run([]Launch{threads, fixed}), "kernel noop needs threadgroups of exactly 1024 threads",
				fmt.Sprintf("its pipeline allows at most %d", limit))
			if ev := g.eventLog(); len(ev) != 0 {
				t.Errorf("a failed run encoded %v", ev)
			}
		})
	}
}

// TestPipelineCacheCompilesUnits: the host compiles the unit of an
// embedded library that holds a kernel, once, and nothing else of the
// library; kernels of one unit share its compile.
func TestPipelineCacheCompilesUnits(t *testing.T) {
	g := newFakeGPU(t)
	cfg := testConfig()
	h := newHost(g, cfg, newBufCache(cfg, 1<<30, g.newBuf, g.freeBuf), libraryUnit)
	lib := func(kernel string) *libEntry {
		e := h.pipes.library(&Launch{Library: "binary.metal", Kernel: kernel})
		if e.err != nil {
			t.Fatal(e.err)
		}
		return e
	}
	add := lib("binary_Add_float32_vv")
	if lib("binary_Add_int64_strided") != add || lib("binary_Add_float32_vv") != add {
		t.Error("kernels of one unit got different libraries")
	}
	if add.name != "binary.metal[instantiate_binary_real(Add)]" {
		t.Errorf("unit name %q", add.name)
	}
	sub := lib("binary_Sub_float16_sv")
	if sub == add || g.compiles != 2 {
		t.Errorf("%d compiles for two units, want 2", g.compiles)
	}
	src := (*fakeLib)(add.lib).source
	if !strings.Contains(src, "\ninstantiate_binary_real(Add)\n") || strings.Contains(src, "instantiate_binary_real(Sub)") {
		t.Error("the Add unit's source does not hold exactly its own instantiations")
	}
	e := h.pipes.library(&Launch{Library: "binary.metal", Kernel: "binary_Nope_float32_vv"})
	wantErr(t, e.err, "library binary.metal", `no kernel "binary_Nope_float32_vv"`)
	e = h.pipes.library(&Launch{Library: "nope.metal", Kernel: "k"})
	wantErr(t, e.err, `no embedded library "nope.metal"`)
}

// TestThreadgroupMemoryLimit: a kernel whose pipeline uses more
// threadgroup memory than the device has fails by name, once.
func TestThreadgroupMemoryLimit(t *testing.T) {
	h, g := newFakeHost(t, testConfig())
	h.pipes.maxTGMemory = 32 << 10
	y := devZeros(t, h, 4)
	for range 2 {
		wantErr(t, h.run([]Launch{kernelLaunch("bigtg", 4, wr(y))}), "kernel bigtg in library test.metal uses 40960 bytes of threadgroup memory; the device has 32768")
	}
	mustRun(t, h, kernelLaunch("noop", 4, wr(y)))
	mustSync(t, h)
	if ev := g.eventLog(); len(ev) == 0 || ev[len(ev)-3] != "dispatch noop" {
		t.Errorf("events %v", ev)
	}
}
