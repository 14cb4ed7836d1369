package metal

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

// fakeGPU is a driver that behaves like an asynchronous GPU: it records
// what the queue encodes and runs a command buffer's dispatches only when
// the buffer completes (when it is waited for, or polled while
// autoComplete is on). A result read too early is stale, a buffer reused
// while queued work still needs it is corrupted, and a freed buffer that a
// dispatch touches is reported, so the host's lifetimes and copy-backs are
// tested by what the kernels compute. It also checks that no two
// dispatches between barriers of one command buffer conflict on a buffer.
type fakeGPU struct {
	t *testing.T

	mu           sync.Mutex
	autoComplete bool
	failNext     string // the next committed command buffer fails with this
	// maxThreads, if positive, lowers every pipeline's
	// maxTotalThreadsPerThreadgroup to it, as register-heavy kernels
	// have on a real GPU (512, 896), so the host's fitting runs.
	maxThreads int
	// dirty fills new buffers with garbage, as reused ones hold.
	dirty    bool
	compiles int
	bufs     map[unsafe.Pointer][]byte
	freed    int
	cbs      []*fakeCB
	events   []string
}

type fakeCB struct {
	dispatches []fakeDispatch
	committed  bool
	done       bool
	released   bool
	fail       error
}

type fakeDispatch struct {
	kernel  string
	bufs    []unsafe.Pointer
	offsets []uint64
	params  []byte
	grid    [3]int
	group   [3]int
	barrier bool
}

type fakeLib struct{ source string }

// fakeKernel computes on the CPU over its buffers (each from its
// offset); writes lists the buffer indices it writes.
type fakeKernel struct {
	writes     []int
	maxThreads int
	tgMemory   int // static threadgroup memory its pipeline reports
	run        func(args [][]byte, params []byte, n int)
}

func f32s(b []byte) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
}

func paramF32(p []byte) float32 { return f32s(p)[0] }

var fakeKernels = map[string]fakeKernel{
	// add1: out = in + 1
	"add1": {writes: []int{1}, maxThreads: 1024, run: func(a [][]byte, _ []byte, n int) {
		in, out := f32s(a[0]), f32s(a[1])
		for i := range n {
			out[i] = in[i] + 1
		}
	}},
	// add: out = x + y
	"add": {writes: []int{2}, maxThreads: 1024, run: func(a [][]byte, _ []byte, n int) {
		x, y, out := f32s(a[0]), f32s(a[1]), f32s(a[2])
		for i := range n {
			out[i] = x[i] + y[i]
		}
	}},
	// scale: out = in * params[0]
	"scale": {writes: []int{1}, maxThreads: 1024, run: func(a [][]byte, p []byte, n int) {
		in, out := f32s(a[0]), f32s(a[1])
		for i := range n {
			out[i] = in[i] * paramF32(p)
		}
	}},
	// inc: x += 1 in place
	"inc": {writes: []int{0}, maxThreads: 1024, run: func(a [][]byte, _ []byte, n int) {
		x := f32s(a[0])
		for i := range n {
			x[i]++
		}
	}},
	// table: out[i] = params[i], with params too large for setBytes, so
	// they arrive as buffer 1
	"table": {writes: []int{0}, maxThreads: 1024, run: func(a [][]byte, p []byte, n int) {
		out := f32s(a[0])
		copy(out[:n], f32s(a[1]))
	}},
	// narrow: a kernel whose pipeline allows only 64 threads per group
	"narrow": {writes: []int{0}, maxThreads: 64, run: func([][]byte, []byte, int) {}},
	// bigtg: a kernel with more threadgroup memory than a 32 KB device has
	"bigtg": {writes: []int{0}, maxThreads: 1024, tgMemory: 40 << 10, run: func([][]byte, []byte, int) {}},
	// noop: computes nothing (tests that look at the geometry only)
	"noop": {writes: []int{0}, maxThreads: 1024, run: func([][]byte, []byte, int) {}},
}

func newFakeGPU(t *testing.T) *fakeGPU {
	return &fakeGPU{t: t, bufs: map[unsafe.Pointer][]byte{}}
}

// newFakeHost returns a host over a fake GPU, with cfg's limits.
func newFakeHost(t *testing.T, cfg config) (*host, *fakeGPU) {
	g := newFakeGPU(t)
	cache := newBufCache(cfg, 1<<30, g.newBuf, g.freeBuf)
	src := func(name, kernel string) (string, string, error) {
		switch name {
		case "test.metal":
			return name, "kernel void add1() {}", nil
		case "broken.metal":
			return name, "#error deliberate", nil
		}
		return "", "", errors.New("no such library")
	}
	return newHost(g, cfg, cache, src), g
}

// testConfig is a config with roomy limits.
func testConfig() config {
	return config{commitOps: 40, commitBytes: 40 << 20, cacheLimit: 64 << 20, memLimit: 256 << 20, maxBuffers: 1000}
}

func (g *fakeGPU) newBuf(size int) (unsafe.Pointer, []byte, error) {
	data := make([]byte, size)
	g.mu.Lock()
	if g.dirty {
		for i := range data {
			data[i] = 0xA5
		}
	}
	g.mu.Unlock()
	id := unsafe.Pointer(&data[0])
	g.mu.Lock()
	g.bufs[id] = data
	g.mu.Unlock()
	return id, data, nil
}

func (g *fakeGPU) freeBuf(id unsafe.Pointer) {
	g.mu.Lock()
	defer g.mu.Unlock()
	data, ok := g.bufs[id]
	if !ok {
		g.t.Errorf("fake GPU: buffer %p freed twice or never allocated", id)
		return
	}
	for i := range data {
		data[i] = 0xFF // poison: a stale reader sees NaNs
	}
	delete(g.bufs, id)
	g.freed++
}

func (g *fakeGPU) compile(source string) (unsafe.Pointer, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.compiles++
	if strings.Contains(source, "#error") {
		return nil, errors.New("program_source:1:2: error: deliberate")
	}
	return unsafe.Pointer(&fakeLib{source: source}), nil
}

func (g *fakeGPU) pipeline(lib unsafe.Pointer, kernel string) (pipeline, error) {
	k, ok := fakeKernels[kernel]
	if !ok {
		return pipeline{}, fmt.Errorf("the library has no kernel %q", kernel)
	}
	name := new(string)
	*name = kernel
	m := k.maxThreads
	g.mu.Lock()
	if g.maxThreads > 0 {
		m = min(m, g.maxThreads)
	}
	g.mu.Unlock()
	return pipeline{id: unsafe.Pointer(name), maxThreads: m, simdWidth: 32, tgMemory: k.tgMemory}, nil
}

func (g *fakeGPU) newCommandBuffer() (cmdBuf, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	cb := &fakeCB{}
	g.cbs = append(g.cbs, cb)
	g.events = append(g.events, "new")
	return cmdBuf{cb: unsafe.Pointer(cb), enc: unsafe.Pointer(cb)}, nil
}

func (g *fakeGPU) encode(c cmdBuf, d *dispatch) {
	g.mu.Lock()
	defer g.mu.Unlock()
	cb := (*fakeCB)(c.enc)
	if cb.committed {
		g.t.Errorf("fake GPU: dispatch encoded into a committed command buffer")
	}
	name := *(*string)(d.pipeline)
	var params []byte
	if d.params != nil {
		params = append([]byte{}, d.params...) // setBytes copies at encode time
	}
	cb.dispatches = append(cb.dispatches, fakeDispatch{
		kernel: name, bufs: append([]unsafe.Pointer{}, d.buffers...), offsets: append([]uint64{}, d.offsets...),
		params: params, grid: d.grid, group: d.group, barrier: d.barrier,
	})
	ev := "dispatch " + name
	if d.barrier {
		ev = "barrier+" + ev
	}
	g.events = append(g.events, ev)
}

func (g *fakeGPU) commit(c cmdBuf) {
	g.mu.Lock()
	defer g.mu.Unlock()
	cb := (*fakeCB)(c.cb)
	cb.committed = true
	if g.failNext != "" {
		cb.fail = errors.New(g.failNext)
		g.failNext = ""
	}
	g.events = append(g.events, "commit")
}

func (g *fakeGPU) wait(c cmdBuf) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	cb := (*fakeCB)(c.cb)
	g.events = append(g.events, "wait")
	g.complete(cb)
	return cb.fail
}

func (g *fakeGPU) poll(c cmdBuf) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	cb := (*fakeCB)(c.cb)
	if !g.autoComplete {
		return false, nil
	}
	g.complete(cb)
	return true, cb.fail
}

func (g *fakeGPU) release(c cmdBuf) {
	g.mu.Lock()
	defer g.mu.Unlock()
	cb := (*fakeCB)(c.cb)
	if !cb.done || cb.released {
		g.t.Errorf("fake GPU: release of a command buffer that is unfinished (%v) or released (%v)", !cb.done, cb.released)
	}
	cb.released = true
}

// complete runs cb's dispatches, as the GPU would by now.
func (g *fakeGPU) complete(cb *fakeCB) {
	if !cb.committed {
		g.t.Errorf("fake GPU: waiting for an uncommitted command buffer")
	}
	if cb.done {
		return
	}
	cb.done = true
	g.checkHazards(cb)
	if cb.fail != nil {
		return
	}
	for _, d := range cb.dispatches {
		args := make([][]byte, len(d.bufs))
		for i, id := range d.bufs {
			data, ok := g.bufs[id]
			if !ok {
				g.t.Errorf("fake GPU: %s uses buffer %d after it was freed", d.kernel, i)
				return
			}
			args[i] = data[d.offsets[i]:]
		}
		fakeKernels[d.kernel].run(args, d.params, d.grid[0])
	}
}

// checkHazards reports two dispatches between barriers that conflict: one
// writes a buffer the other reads or writes.
func (g *fakeGPU) checkHazards(cb *fakeCB) {
	written := map[unsafe.Pointer]string{}
	read := map[unsafe.Pointer]string{}
	for _, d := range cb.dispatches {
		if d.barrier {
			clear(written)
			clear(read)
		}
		k := fakeKernels[d.kernel]
		w := map[unsafe.Pointer]bool{}
		for _, i := range k.writes {
			w[d.bufs[i]] = true
		}
		for _, id := range d.bufs {
			if prev, ok := written[id]; ok {
				g.t.Errorf("fake GPU: %s touches a buffer that %s wrote, with no barrier between", d.kernel, prev)
			}
			if prev, ok := read[id]; ok && w[id] {
				g.t.Errorf("fake GPU: %s writes a buffer that %s read, with no barrier between", d.kernel, prev)
			}
		}
		for _, id := range d.bufs {
			if w[id] {
				written[id] = d.kernel
			} else {
				read[id] = d.kernel
			}
		}
	}
}

// setFailNext makes the next committed command buffer fail with msg.
func (g *fakeGPU) setFailNext(msg string) {
	g.mu.Lock()
	g.failNext = msg
	g.mu.Unlock()
}

func (g *fakeGPU) eventLog() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string{}, g.events...)
}

func (g *fakeGPU) resetEvents() {
	g.mu.Lock()
	g.events = nil
	g.mu.Unlock()
}

func (g *fakeGPU) freedCount() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.freed
}

func (g *fakeGPU) live(id unsafe.Pointer) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.bufs[id] != nil
}
