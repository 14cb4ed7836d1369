//go:build fathom_mslharness

package metal

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"unsafe"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/metal/internal/mslcpu"
	"github.com/fathom-go/fathom/backend/metal/internal/plan"
)

// UseExecutorForTests makes the GPU device run its dispatches with e (the
// MSL harness, internal/mslcpu, through package mslharness), so code that
// reaches the GPU only through Run, Alloc and Synchronize (the ops
// layer's evalGPU) runs end to end where there is no Metal. The host is
// the real one (allocator, pipeline cache, command queue); only the
// driver under it is replaced. It exists only in builds with the
// fathom_mslharness tag, and must be called before the GPU is first used.
func UseExecutorForTests(e plan.Executor) error {
	installed := false
	hostOnce.Do(func() {
		d := &execDriver{e: e, bufs: map[unsafe.Pointer][]byte{}, names: map[string]string{}}
		cfg := config{commitOps: 40, commitBytes: 40 << 20, cacheLimit: 256 << 20, memLimit: 4 << 30, maxBuffers: 499000}
		theHost = newHost(d, cfg, newBufCache(cfg, 1<<30, d.newBuf, d.freeBuf), d.source)
		installed = true
	})
	if !installed {
		return array.Errorf("metal.UseExecutorForTests", "the GPU host is already open: install the executor before the GPU is first used")
	}
	return nil
}

// execDriver is a driver whose command buffers run their dispatches, in
// order, as Launches of an Executor when they are committed. Buffers are
// Go memory, so a launch that fails leaves them as the executor left them
// and the failure is reported when the buffer is waited for or polled.
type execDriver struct {
	e plan.Executor

	mu    sync.Mutex
	bufs  map[unsafe.Pointer][]byte
	names map[string]string // unit source -> name of its embedded library
}

type execLib struct{ name, source string }

type execPipe struct {
	lib    *execLib
	kernel string
}

type execCB struct {
	launches []Launch
	err      error
}

// execMem is a device buffer's contents as the executor sees them.
type execMem []byte

func (m execMem) Bytes() []byte { return m }

// source is libraryUnit, remembering each unit's library so its launches
// run the whole embedded library, as the harness compiles it once (a unit
// at a time would mean a clang++ build per unit). The host still splits,
// compiles and caches units as on a Mac.
func (d *execDriver) source(lib, kernel string) (string, string, error) {
	unit, src, err := libraryUnit(lib, kernel)
	if err == nil {
		d.mu.Lock()
		d.names[src] = lib
		d.mu.Unlock()
	}
	return unit, src, err
}

func (d *execDriver) newBuf(size int) (unsafe.Pointer, []byte, error) {
	data := make([]byte, size)
	id := unsafe.Pointer(unsafe.SliceData(data))
	d.mu.Lock()
	d.bufs[id] = data
	d.mu.Unlock()
	return id, data, nil
}

func (d *execDriver) freeBuf(id unsafe.Pointer) {
	d.mu.Lock()
	delete(d.bufs, id)
	d.mu.Unlock()
}

// compile names a generated library after its source's hash, and runs a
// unit of an embedded library as the whole library: the executor compiles
// and caches libraries by name and source.
func (d *execDriver) compile(source string) (unsafe.Pointer, error) {
	d.mu.Lock()
	name, ok := d.names[source]
	d.mu.Unlock()
	if !ok {
		h := sha256.Sum256([]byte(source))
		name = genPrefix + hex.EncodeToString(h[:8])
	} else {
		full, err := librarySource(name)
		if err != nil {
			return nil, err
		}
		source = full
	}
	return unsafe.Pointer(&execLib{name: name, source: source}), nil
}

// pipeline defers to the executor, which reports a missing kernel when
// it runs. Its limit is what a Metal pipeline of the kernel would report
// under the harness (mslcpu.PipelineMaxThreads: the kernel's declared
// maximum, lowered by MSL_MAX_THREADS), so the host fits launches to it
// as it would on a Mac.
func (d *execDriver) pipeline(lib unsafe.Pointer, kernel string) (pipeline, error) {
	l := (*execLib)(lib)
	limit := mslcpu.PipelineMaxThreads(mslcpu.Library{Name: l.name, Source: l.source}, kernel)
	return pipeline{id: unsafe.Pointer(&execPipe{lib: l, kernel: kernel}), maxThreads: limit, simdWidth: 32}, nil
}

func (d *execDriver) newCommandBuffer() (cmdBuf, error) {
	cb := unsafe.Pointer(&execCB{})
	return cmdBuf{cb: cb, enc: cb}, nil
}

// encode copies the dispatch, whose slices the queue reuses. Only the
// buffers the launch declares written are copied back, as a GPU leaves
// the others alone: another goroutine may be reading them on the host, and
// a plan that forgets to declare a write loses its result here, as its
// barriers would be missing on a Mac.
func (d *execDriver) encode(c cmdBuf, disp *dispatch) {
	p := (*execPipe)(disp.pipeline)
	l := Launch{Library: p.lib.name, Source: p.lib.source, Kernel: p.kernel, Grid: disp.grid, Group: disp.group}
	if disp.params != nil {
		l.Params = append([]byte{}, disp.params...)
	}
	d.mu.Lock()
	for i, id := range disp.buffers {
		l.Buffers = append(l.Buffers, bufArg{Mem: execMem(d.bufs[id]), Offset: int(disp.offsets[i]), Write: disp.writes[i]})
	}
	d.mu.Unlock()
	cb := (*execCB)(c.enc)
	cb.launches = append(cb.launches, l)
}

func (d *execDriver) commit(c cmdBuf) {
	cb := (*execCB)(c.cb)
	for _, l := range cb.launches {
		if err := d.e.Run(l); err != nil {
			cb.err = array.Errorf("metal.Run", "kernel %s of %s: %v", l.Kernel, l.Library, err)
			break
		}
	}
	cb.launches = nil
}

func (d *execDriver) wait(c cmdBuf) error { return (*execCB)(c.cb).err }

func (d *execDriver) poll(c cmdBuf) (bool, error) { return true, (*execCB)(c.cb).err }

func (d *execDriver) release(cmdBuf) {}
