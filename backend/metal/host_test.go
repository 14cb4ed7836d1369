package metal

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fathom-go/fathom/array"
)

// These tests run the Metal host (allocator, pipeline cache, command
// queue) over fakeGPU, on every platform: the darwin files only forward
// the same calls to Metal.

// hostMem is host memory that is not a Storage, like the harness's.
type hostMem []byte

func (m hostMem) Bytes() []byte { return m }

func hostF32(vals ...float32) hostMem {
	m := make(hostMem, 4*len(vals))
	copy(f32s(m), vals)
	return m
}

func devF32(t *testing.T, h *host, vals ...float32) *array.Storage {
	t.Helper()
	st, err := h.alloc(4 * len(vals))
	if err != nil {
		t.Fatal(err)
	}
	copy(f32s(st.Bytes()), vals)
	return st
}

func devZeros(t *testing.T, h *host, n int) *array.Storage {
	t.Helper()
	return devF32(t, h, make([]float32, n)...)
}

func rd(m Memory) bufArg { return bufArg{Mem: m} }
func wr(m Memory) bufArg { return bufArg{Mem: m, Write: true} }

func kernelLaunch(kernel string, n int, bufs ...bufArg) Launch {
	return Launch{Library: "test.metal", Kernel: kernel, Buffers: bufs, Grid: [3]int{n, 1, 1}, Group: [3]int{min(n, 256), 1, 1}}
}

func mustRun(t *testing.T, h *host, ls ...Launch) {
	t.Helper()
	if err := h.run(ls); err != nil {
		t.Fatal(err)
	}
}

func mustSync(t *testing.T, h *host) {
	t.Helper()
	if err := h.synchronize(); err != nil {
		t.Fatal(err)
	}
}

func wantF32(t *testing.T, what string, m Memory, want ...float32) {
	t.Helper()
	if got := f32s(m.Bytes())[:len(want)]; !slices.Equal(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one saying %q", parts)
	}
	if _, ok := err.(*array.Error); !ok {
		t.Errorf("error %v is a %T, want *array.Error", err, err)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not say %q", err, p)
		}
	}
}

func TestQueueComputesAfterSynchronize(t *testing.T) {
	h, _ := newFakeHost(t, testConfig())
	x := devF32(t, h, 1, 2, 3)
	y, z := devZeros(t, h, 3), devZeros(t, h, 3)
	mustRun(t, h, kernelLaunch("add1", 3, rd(x), wr(y)), kernelLaunch("add1", 3, rd(y), wr(z)))
	// nothing committed yet: the GPU has run nothing
	wantF32(t, "z before Synchronize", z, 0, 0, 0)
	mustSync(t, h)
	wantF32(t, "y", y, 2, 3, 4)
	wantF32(t, "z", z, 3, 4, 5)
}

func TestQueueCommitsEveryNOps(t *testing.T) {
	cfg := testConfig()
	cfg.commitOps = 3
	h, g := newFakeHost(t, cfg)
	x := devF32(t, h, 1)
	var outs []*array.Storage
	for range 7 {
		y := devZeros(t, h, 1)
		outs = append(outs, y)
		mustRun(t, h, kernelLaunch("add1", 1, rd(x), wr(y)))
	}
	commits := 0
	for _, e := range g.eventLog() {
		if e == "commit" {
			commits++
		}
	}
	if commits != 2 {
		t.Errorf("%d commits after 7 dispatches with %s=3, want 2: %v", commits, envCommitOps, g.eventLog())
	}
	mustSync(t, h)
	if len(g.cbs) != 3 {
		t.Errorf("%d command buffers, want 3", len(g.cbs))
	}
	for i, cb := range g.cbs {
		if len(cb.dispatches) > 3 {
			t.Errorf("command buffer %d has %d dispatches", i, len(cb.dispatches))
		}
	}
	for i, y := range outs {
		wantF32(t, fmt.Sprint("out ", i), y, 2)
	}
}

func TestQueueCommitsByBytes(t *testing.T) {
	cfg := testConfig()
	cfg.commitBytes = 4 * gpuPage
	h, g := newFakeHost(t, cfg)
	// each launch references two new one-page buffers: the second launch
	// reaches four pages
	for range 4 {
		x, y := devZeros(t, h, gpuPage/4), devZeros(t, h, gpuPage/4)
		mustRun(t, h, kernelLaunch("add1", 4, rd(x), wr(y)))
	}
	want := []string{"new", "dispatch add1", "dispatch add1", "commit", "new", "dispatch add1", "dispatch add1", "commit"}
	if got := g.eventLog(); !slices.Equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
	mustSync(t, h)
}

func TestQueueBarriers(t *testing.T) {
	h, g := newFakeHost(t, testConfig())
	a, c, gg := devF32(t, h, 1), devF32(t, h, 10), devF32(t, h, 100)
	b, d, e, f := devZeros(t, h, 1), devZeros(t, h, 1), devZeros(t, h, 1), devZeros(t, h, 1)
	steps := []struct {
		l       Launch
		barrier bool
		why     string
	}{
		{kernelLaunch("add1", 1, rd(a), wr(b)), false, "first dispatch"},
		{kernelLaunch("add1", 1, rd(c), wr(d)), false, "independent of the first"},
		{kernelLaunch("add1", 1, rd(b), wr(e)), true, "reads b, written by the first (RAW)"},
		{kernelLaunch("add1", 1, rd(a), wr(f)), false, "a was only read"},
		{kernelLaunch("add1", 1, rd(gg), wr(a)), true, "writes a, read by the fourth (WAR)"},
		{kernelLaunch("add1", 1, rd(gg), wr(e)), false, "e's writer is before the last barrier"},
		{kernelLaunch("add1", 1, rd(gg), wr(e)), true, "writes e again (WAW)"},
		{kernelLaunch("inc", 1, wr(d)), false, "d's writer is before two barriers"},
		{kernelLaunch("add", 1, rd(a), rd(a), wr(c)), false, "a's writer is before the last barrier"},
		{kernelLaunch("add", 1, rd(d), rd(d), wr(c)), true, "reads d, written by inc"},
	}
	for _, s := range steps {
		mustRun(t, h, s.l)
	}
	mustSync(t, h)
	if len(g.cbs) != 1 {
		t.Fatalf("%d command buffers, want 1", len(g.cbs))
	}
	for i, d := range g.cbs[0].dispatches {
		if d.barrier != steps[i].barrier {
			t.Errorf("dispatch %d (%s): barrier %v, want %v", i, steps[i].why, d.barrier, steps[i].barrier)
		}
	}
	wantF32(t, "b", b, 2)
	wantF32(t, "f", f, 2)
	wantF32(t, "a", a, 101)
	wantF32(t, "c", c, 24)
	wantF32(t, "d", d, 12)
	wantF32(t, "e", e, 101)
}

// waitFor polls cond while collecting garbage, for at most a second:
// cleanups run on their own goroutine after a collection.
func waitFor(cond func() bool) bool {
	for range 200 {
		runtime.GC()
		if cond() {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

func TestQueueKeepsBuffersAliveUntilDone(t *testing.T) {
	h, g := newFakeHost(t, testConfig())
	x := devF32(t, h, 1, 2, 3, 4)
	y := devZeros(t, h, 4)
	mustRun(t, h, kernelLaunch("add1", 4, rd(x), wr(y)))
	mustRun(t, h, kernelLaunch("add1", 4, rd(y), wr(x))) // so the batch would need x afterwards too
	x = nil
	// x is unreachable from the test, but the queued dispatches still use
	// it: its buffer must not return to the cache, where the allocations
	// below would get it and overwrite it.
	for range 10 {
		runtime.GC()
		time.Sleep(2 * time.Millisecond)
	}
	if h.cache.stats().Cached > 0 {
		t.Fatal("a buffer used by queued work went back to the cache")
	}
	var others []*array.Storage
	for range 8 {
		o := devZeros(t, h, 4)
		for i := range o.Bytes() {
			o.Bytes()[i] = 0xEE
		}
		others = append(others, o)
	}
	mustSync(t, h)
	wantF32(t, "y", y, 2, 3, 4, 5)
	runtime.KeepAlive(others)
	// finished work releases its buffers
	if !waitFor(func() bool { return h.cache.stats().Cached > 0 }) {
		t.Error("x's buffer never returned to the cache after Synchronize")
	}
	if n := g.freedCount(); n != 0 {
		t.Errorf("%d buffers freed, want 0 (all fit in the cache)", n)
	}
}

func TestQueueStagesHostMemory(t *testing.T) {
	h, g := newFakeHost(t, testConfig())
	x := hostF32(1, 2)
	y := make(hostMem, 8)
	z := devZeros(t, h, 2)
	mustRun(t, h, kernelLaunch("add1", 2, rd(x), wr(y)))
	// x was copied when encoded; y is written on the device, and read from
	// there by the next launch
	copy(f32s(x), []float32{100, 200})
	mustRun(t, h, kernelLaunch("add1", 2, rd(y), wr(z)))
	wantF32(t, "y before Synchronize", y, 0, 0)
	mustSync(t, h)
	wantF32(t, "y", y, 2, 3)
	wantF32(t, "z", z, 3, 4)
	if n := len(g.cbs[0].dispatches); n != 2 {
		t.Fatalf("%d dispatches", n)
	}
	if g.cbs[0].dispatches[0].bufs[1] != g.cbs[0].dispatches[1].bufs[0] {
		t.Error("the second launch did not read the device copy the first wrote")
	}
	// after Synchronize host memory is staged afresh
	mustRun(t, h, kernelLaunch("add1", 2, rd(x), wr(z)))
	mustSync(t, h)
	wantF32(t, "z", z, 101, 201)

	// a CPU array's Storage is host memory too
	cpu := array.FromSlice([]float32{5, 6}).Storage()
	mustRun(t, h, kernelLaunch("add1", 2, rd(cpu), wr(z)))
	mustSync(t, h)
	wantF32(t, "z from a CPU storage", z, 6, 7)
}

func TestQueueOffsets(t *testing.T) {
	h, _ := newFakeHost(t, testConfig())
	x := devF32(t, h, 1, 2, 3, 4)
	y := devZeros(t, h, 4)
	mustRun(t, h, kernelLaunch("add1", 2, bufArg{Mem: x, Offset: 8}, bufArg{Mem: y, Offset: 4, Write: true}))
	mustSync(t, h)
	wantF32(t, "y", y, 0, 4, 5, 0)
}

func TestQueueParams(t *testing.T) {
	h, g := newFakeHost(t, testConfig())
	x := devF32(t, h, 1, 2)
	y := devZeros(t, h, 2)
	l := kernelLaunch("scale", 2, rd(x), wr(y))
	l.Params = hostF32(3)
	mustRun(t, h, l)
	l.Params[0] = 0 // setBytes copied the parameters already
	mustSync(t, h)
	wantF32(t, "y", y, 3, 6)

	// more than setBytes takes: a buffer at index len(Buffers)
	table := make([]float32, 2000)
	for i := range table {
		table[i] = float32(i)
	}
	out := devZeros(t, h, 2000)
	big := kernelLaunch("table", 2000, wr(out))
	big.Params = hostF32(table...)
	mustRun(t, h, big)
	mustSync(t, h)
	d := g.cbs[len(g.cbs)-1].dispatches[0]
	if d.params != nil || len(d.bufs) != 2 {
		t.Errorf("8000 bytes of parameters went by setBytes (%d bytes) with %d buffers", len(d.params), len(d.bufs))
	}
	wantF32(t, "table", out, table...)
}

// TestQueueGPUErrors: a command buffer's failure is recorded on the
// memory it writes, not handed to whichever run or synchronize comes
// next: work that does not read that memory runs on, a launch that reads
// it is refused with the failure, and an executor's synchronize reports
// it once.
func TestQueueGPUErrors(t *testing.T) {
	cfg := testConfig()
	cfg.commitOps = 1
	h, g := newFakeHost(t, cfg)
	g.autoComplete = true
	x, y, z := devF32(t, h, 1), devZeros(t, h, 1), devZeros(t, h, 1)
	g.failNext = "GPU command buffer failed: Caused GPU Timeout Error"
	// committed at once and found failed by the poll after the commit
	mustRun(t, h, kernelLaunch("add1", 1, rd(x), wr(y)))
	if err := y.Err(); err == nil || !strings.Contains(err.Error(), "Timeout") {
		t.Errorf("y, written by the failed command buffer, has failure %v", err)
	}
	if err := x.Err(); err != nil {
		t.Errorf("x, only read by the failed command buffer, has failure %v", err)
	}
	// work that does not read y runs
	mustRun(t, h, kernelLaunch("add1", 1, rd(x), wr(z)))
	err := h.run([]Launch{kernelLaunch("add1", 1, rd(y), wr(z))})
	if err == nil || !strings.Contains(err.Error(), "Timeout") {
		t.Errorf("a launch that reads y: %v, want the failure", err)
	}
	if err := h.synchronize(); err == nil || !strings.Contains(err.Error(), "Timeout") {
		t.Errorf("synchronize after a failed command buffer: %v", err)
	}
	wantF32(t, "z", z, 2)
	mustSync(t, h) // reported once

	g.autoComplete = false
	g.failNext = "GPU command buffer failed: out of memory"
	w := devZeros(t, h, 1)
	mustRun(t, h, kernelLaunch("add1", 1, rd(x), wr(w)))
	if err := h.synchronize(); err == nil || !strings.Contains(err.Error(), "out of memory") {
		t.Errorf("synchronize after a failed command buffer: %v", err)
	}
	if err := w.Err(); err == nil || !strings.Contains(err.Error(), "out of memory") {
		t.Errorf("w, written by the failed command buffer, has failure %v", err)
	}
	mustSync(t, h)
}

func TestPipelineCache(t *testing.T) {
	h, g := newFakeHost(t, testConfig())
	x, y := devF32(t, h, 1), devZeros(t, h, 1)
	for range 3 {
		mustRun(t, h, kernelLaunch("add1", 1, rd(x), wr(y)), kernelLaunch("inc", 1, wr(y)))
	}
	gen := Launch{Library: "gen:abc", Source: "kernel void add1() {}", Kernel: "add1",
		Buffers: []bufArg{rd(x), wr(y)}, Grid: [3]int{1, 1, 1}, Group: [3]int{1, 1, 1}}
	mustRun(t, h, gen, gen)
	if g.compiles != 2 {
		t.Errorf("%d compiles for two libraries, want 2", g.compiles)
	}
	mustSync(t, h)
	wantF32(t, "y", y, 2)

	broken := kernelLaunch("add1", 1, rd(x), wr(y))
	broken.Library = "broken.metal"
	for range 2 {
		wantErr(t, h.run([]Launch{broken}), "metal.Run", "broken.metal", "program_source:1:2: error: deliberate")
	}
	if g.compiles != 3 {
		t.Errorf("%d compiles, want 3: a failed library is not compiled again", g.compiles)
	}
	missing := kernelLaunch("add1", 1, rd(x), wr(y))
	missing.Library = "nope.metal"
	wantErr(t, h.run([]Launch{missing}), "nope.metal", "no such library")
	nokernel := kernelLaunch("nokernel", 1, rd(x), wr(y))
	wantErr(t, h.run([]Launch{nokernel}), "nokernel", "test.metal")
	nosrc := gen
	nosrc.Library, nosrc.Source = "gen:def", ""
	wantErr(t, h.run([]Launch{nosrc}), "gen:def", "no source")
	wide := kernelLaunch("narrow", 1, wr(y))
	wide.Group = [3]int{128, 1, 1}
	wantErr(t, h.run([]Launch{wide}), "narrow", "128 threads", "at most 64")

	// a bad launch among good ones encodes none of them
	g.resetEvents()
	wantErr(t, h.run([]Launch{kernelLaunch("add1", 1, rd(x), wr(y)), wide}), "narrow")
	if ev := g.eventLog(); len(ev) != 0 {
		t.Errorf("a failed run encoded %v", ev)
	}
}

func TestCheckLaunch(t *testing.T) {
	m := hostF32(1, 2)
	ok := kernelLaunch("add1", 2, rd(m), wr(m))
	many := ok
	many.Buffers = make([]bufArg, 31)
	for i := range many.Buffers {
		many.Buffers[i] = rd(m)
	}
	many.Params = []byte{1}
	cases := []struct {
		name string
		edit func(l *Launch)
		want string
	}{
		{"no kernel", func(l *Launch) { l.Kernel = "" }, "without library or kernel"},
		{"zero grid", func(l *Launch) { l.Grid[1] = 0 }, "grid [2 0 1]"},
		{"huge grid", func(l *Launch) { l.Grid[0] = 1 << 33 }, "below 2^32"},
		{"zero group", func(l *Launch) { l.Group[2] = 0 }, "threadgroup [2 1 0]"},
		{"big group", func(l *Launch) { l.Group = [3]int{64, 32, 1} }, "2048 threads"},
		{"nil memory", func(l *Launch) { l.Buffers[0].Mem = nil }, "buffer 0 has no memory"},
		{"offset past end", func(l *Launch) { l.Buffers[1].Offset = 9 }, "offset 9 outside its 8 bytes"},
		{"negative offset", func(l *Launch) { l.Buffers[1].Offset = -4 }, "offset -4"},
		{"32 arguments", func(l *Launch) { *l = many }, "32 buffer arguments"},
	}
	if err := checkLaunch(&ok); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		l := ok
		l.Buffers = slices.Clone(ok.Buffers)
		c.edit(&l)
		err := checkLaunch(&l)
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		wantErr(t, err, "metal.Run", c.want)
	}
}

func TestQueueConcurrent(t *testing.T) {
	cfg := testConfig()
	cfg.commitOps = 5
	h, g := newFakeHost(t, cfg)
	g.autoComplete = true
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				x := devF32(t, h, float32(w), float32(i))
				y := devZeros(t, h, 2)
				z := make(hostMem, 8)
				if err := h.run([]Launch{kernelLaunch("add1", 2, rd(x), wr(y)), kernelLaunch("add1", 2, rd(y), wr(z))}); err != nil {
					t.Error(err)
					return
				}
				if err := h.synchronize(); err != nil {
					t.Error(err)
					return
				}
				if got := f32s(z); got[0] != float32(w)+2 || got[1] != float32(i)+2 {
					t.Errorf("worker %d step %d: %v", w, i, got)
				}
			}
		}()
	}
	wg.Wait()
}

func TestGPUSizeClass(t *testing.T) {
	cases := [][2]int{
		{0, 256}, {1, 256}, {256, 256}, {257, 512}, {4000, 4096}, {gpuPage, gpuPage},
		{gpuPage + 1, 2 * gpuPage}, {4 * gpuPage, 4 * gpuPage}, {4*gpuPage + 1, 5 * gpuPage},
		{1 << 20, 1 << 20}, {1<<20 + 1, 1<<20 + 1<<18}, {3 << 20, 3 << 20}, {100 << 20, 112 << 20},
	}
	for _, c := range cases {
		got := gpuSizeClass(c[0])
		if got != c[1] {
			t.Errorf("gpuSizeClass(%d) = %d, want %d", c[0], got, c[1])
		}
		if got < c[0] || (c[0] > 4*gpuPage && float64(got) > 1.25*float64(c[0])) || (got > gpuPage && got%gpuPage != 0) {
			t.Errorf("gpuSizeClass(%d) = %d: too small, too much slack, or not whole pages", c[0], got)
		}
	}
}

func TestBufCacheReuseAndLimits(t *testing.T) {
	cfg := testConfig()
	cfg.cacheLimit = 3 * gpuPage
	h, g := newFakeHost(t, cfg)
	c := h.cache
	a, _ := c.alloc(gpuPage)
	b, _ := c.alloc(gpuPage)
	d, _ := c.alloc(2 * gpuPage)
	idA, idB := deviceBuf(a).id, deviceBuf(b).id
	if s := c.stats(); s.Active != 4*gpuPage || s.Buffers != 3 {
		t.Errorf("stats %+v after three allocations", s)
	}
	runtime.KeepAlive(a)
	a = nil
	if !waitFor(func() bool { return c.stats().Cached == gpuPage }) {
		t.Fatalf("a's buffer not cached: %+v", c.stats())
	}
	runtime.KeepAlive(b)
	b = nil
	if !waitFor(func() bool { return c.stats().Cached == 2*gpuPage }) {
		t.Fatalf("b's buffer not cached: %+v", c.stats())
	}
	// caching d (2 pages) exceeds the 3-page limit: the oldest (a) goes
	runtime.KeepAlive(d)
	d = nil
	if !waitFor(func() bool { return c.stats().Cached == 3*gpuPage && g.freedCount() == 1 }) {
		t.Fatalf("d's buffer not cached, or not one buffer freed: %+v, %d freed", c.stats(), g.freedCount())
	}
	if g.live(idA) || !g.live(idB) {
		t.Errorf("a's buffer live %v, b's live %v; want only b's", g.live(idA), g.live(idB))
	}
	// a page-sized allocation reuses b's buffer
	e, _ := c.alloc(gpuPage - 100)
	if deviceBuf(e).id != idB || len(e.Bytes()) != gpuPage-100 {
		t.Errorf("allocation did not reuse the cached buffer of its class")
	}
	if s := c.stats(); s.Cached != 2*gpuPage || s.Active != gpuPage || s.Peak != 4*gpuPage {
		t.Errorf("stats %+v", s)
	}
	c.clear()
	if s := c.stats(); s.Cached != 0 || s.Buffers != 1 || g.freedCount() != 2 {
		t.Errorf("after clear: %+v, %d freed", s, g.freedCount())
	}
	runtime.KeepAlive(e)
}

func TestAllocOutOfMemory(t *testing.T) {
	cfg := testConfig()
	cfg.memLimit = 1 << 20
	cfg.maxBuffers = 3
	h, _ := newFakeHost(t, cfg)
	a, err := h.alloc(600 << 10)
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.alloc(600 << 10)
	wantErr(t, err, "metal.Alloc", "out of device memory", envMemoryLimitMB)
	_, err = h.alloc(-1)
	wantErr(t, err, "negative size")
	_, err = h.alloc(2 << 30)
	wantErr(t, err, "largest buffer")
	// freeing a makes room: alloc collects garbage before giving up
	runtime.KeepAlive(a)
	a = nil
	b, err := h.alloc(600 << 10)
	if err != nil {
		t.Fatalf("after the first buffer became garbage: %v", err)
	}
	c, _ := h.alloc(10)
	d, _ := h.alloc(10)
	_, err = h.alloc(10)
	wantErr(t, err, "out of device buffers", envMaxBuffers)
	runtime.KeepAlive([]any{b, c, d})
}

func TestAllocWaitsForQueuedWork(t *testing.T) {
	cfg := testConfig()
	cfg.memLimit = 1 << 20
	h, g := newFakeHost(t, cfg)
	x := devZeros(t, h, 100<<10)
	y := devZeros(t, h, 100<<10)
	mustRun(t, h, kernelLaunch("add1", 4, rd(x), wr(y)))
	x, y = nil, nil
	// only the queued command buffer holds x and y now; the allocation
	// needs their memory, so it waits for the GPU
	z, err := h.alloc(700 << 10)
	if err != nil {
		t.Fatalf("allocation with queued work holding the memory: %v", err)
	}
	if !slices.Contains(g.eventLog(), "wait") {
		t.Error("the allocation did not wait for the queued work")
	}
	runtime.KeepAlive(z)
	mustSync(t, h)
}

func TestStagingRunsOutOfMemory(t *testing.T) {
	cfg := testConfig()
	cfg.memLimit = 64 << 10
	h, _ := newFakeHost(t, cfg)
	big := make(hostMem, 128<<10)
	y := devZeros(t, h, 4)
	err := h.run([]Launch{kernelLaunch("add1", 4, rd(big), wr(y))})
	wantErr(t, err, "out of device memory")
	mustSync(t, h)
}

func TestLoadConfig(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	c, err := loadConfig(env(), 8<<30)
	if err != nil {
		t.Fatal(err)
	}
	want := config{commitOps: 40, commitBytes: 40 << 20, cacheLimit: 8 << 30, memLimit: 12 << 30, maxBuffers: 499000}
	if c != want {
		t.Errorf("defaults %+v, want %+v", c, want)
	}
	c, err = loadConfig(env(envCommitOps, "7", envCommitMB, "3", envCacheLimitMB, "0", envMemoryLimitMB, "100", envMaxBuffers, "9"), 8<<30)
	if err != nil {
		t.Fatal(err)
	}
	want = config{commitOps: 7, commitBytes: 3 << 20, cacheLimit: 0, memLimit: 100 << 20, maxBuffers: 9}
	if c != want {
		t.Errorf("from the environment %+v, want %+v", c, want)
	}
	for _, bad := range [][2]string{{envCommitOps, "0"}, {envCommitMB, "x"}, {envCacheLimitMB, "-1"}, {envMemoryLimitMB, "1e3"}, {envMaxBuffers, "99999999999999999999"}} {
		_, err := loadConfig(env(bad[0], bad[1]), 8<<30)
		if err == nil || !strings.Contains(err.Error(), bad[0]) || !strings.Contains(err.Error(), fmt.Sprintf("%q", bad[1])) {
			t.Errorf("%s=%s: error %v", bad[0], bad[1], err)
		}
	}
}
