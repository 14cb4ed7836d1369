package array

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Memory accounting, as MLX's memory API. Fathom has two allocators, the
// CPU pool (storage.go) and the Metal backend's buffer cache, and both
// count into the counters here: ActiveMemory, PeakMemory and CacheMemory
// report the sum over the devices (on Apple silicon the two share one
// memory, so the sum is what the machine gives), and DeviceMemory reports
// one device. SetMemoryLimit bounds the sum.
//
// What is counted: every buffer a pool hands out, at its size class (the
// bytes it really holds: AllocCPU(1000000) counts 1 MiB), from the
// allocation until the buffer goes back (its Storage died and a cleanup
// ran, or compile freed it early). CPU buffers of at most 4 KiB are not
// pooled and not counted: tracking each would cost a cleanup per small
// op, more than the op itself. Memory that fathom did not allocate (an
// array over a memory-mapped file) is not counted either.

// memCounter is a gauge and its high-water mark.
type memCounter struct {
	active atomic.Int64
	peak   atomic.Int64
}

// raise adds n to the gauge and keeps the peak; a is the new value.
func (c *memCounter) raise(n int64) {
	c.notePeak(c.active.Add(n))
}

func (c *memCounter) notePeak(a int64) {
	for {
		p := c.peak.Load()
		if a <= p || c.peak.CompareAndSwap(p, a) {
			return
		}
	}
}

var (
	memTotal memCounter
	memDev   [DeviceGPU + 1]memCounter
	memLimit atomic.Int64 // bytes; 0 is no limit
	// limitMu lets one allocation at a time collect for the limit: the
	// others wait for it and then find the memory it freed.
	limitMu sync.Mutex
)

// ActiveMemory returns the bytes of buffers that arrays hold now, over
// the CPU and the GPU (DeviceMemory gives each).
func ActiveMemory() int64 { return memTotal.active.Load() }

// PeakMemory returns the highest ActiveMemory since the program started
// or ResetPeakMemory was last called.
func PeakMemory() int64 { return memTotal.peak.Load() }

// ResetPeakMemory sets PeakMemory, and each device's peak, to the memory
// active now.
func ResetPeakMemory() {
	memTotal.peak.Store(memTotal.active.Load())
	for i := range memDev {
		memDev[i].peak.Store(memDev[i].active.Load())
	}
}

// CacheMemory returns the bytes of freed buffers the pools keep for
// reuse, over the CPU and the GPU.
func CacheMemory() int64 {
	n := CPUPoolStats().Cached
	if c := gpuCache(); c != nil {
		n += c.CacheMemory()
	}
	return n
}

// SetMemoryLimit bounds ActiveMemory to bytes (0 removes the bound, the
// default) and returns the previous bound. An allocation that would pass
// it first collects garbage, so that dead arrays give their buffers back,
// and empties the caches; if it still does not fit, the evaluation that
// asked fails with an *Error wrapping ErrOutOfMemory that names the
// bytes requested, active and allowed. Nothing else is affected: a
// later, smaller evaluation runs. The bound counts what ActiveMemory
// counts (not the pools' caches, which SetCacheLimit bounds). On the GPU
// the Metal backend's own limit (FATHOM_METAL_MEMORY_LIMIT_MB) also
// applies.
func SetMemoryLimit(bytes int64) (previous int64) {
	if bytes < 0 {
		Panicf("array.SetMemoryLimit", "negative limit %d", bytes)
	}
	return memLimit.Swap(bytes)
}

// SetCacheLimit sets the most bytes each device's pool keeps for reuse
// and returns the CPU pool's previous limit (FATHOM_CPU_CACHE_LIMIT's
// value at start, 1 GiB by default; the GPU's starts at
// FATHOM_METAL_CACHE_LIMIT_MB). A pool above the new limit releases the
// buffers freed longest ago. 0 turns caching off.
func SetCacheLimit(bytes int64) (previous int64) {
	if bytes < 0 {
		Panicf("array.SetCacheLimit", "negative limit %d", bytes)
	}
	prev := pool.setLimit(bytes)
	if c := gpuCache(); c != nil {
		c.SetCacheLimit(bytes)
	}
	return prev
}

// ClearCache releases every cached buffer of every device's pool, and
// the scratch memory the CPU's kernels keep between calls.
func ClearCache() {
	ClearCPUPool()
	if s, ok := backendFor(DeviceCPU).(ScratchBackend); ok {
		s.ClearScratch()
	}
	if c := gpuCache(); c != nil {
		c.ClearCache()
	}
}

// ScratchBackend is a Backend whose kernels keep memory of their own
// between calls (the CPU's packing buffers), which ClearCache releases
// too. ActiveMemory does not count it.
type ScratchBackend interface {
	ClearScratch()
}

// MemoryStats is one device's memory: the bytes its arrays hold (Active)
// and the most they have held since ResetPeakMemory (Peak), counted as
// ActiveMemory counts, and the bytes its pool keeps for reuse (Cache).
type MemoryStats struct {
	Active, Peak, Cache int64
}

// DeviceMemory returns d's memory counters (zeros for a GPU that is not
// there).
func DeviceMemory(d Device) MemoryStats {
	if int(d.Type) >= len(memDev) {
		return MemoryStats{}
	}
	c := &memDev[d.Type]
	s := MemoryStats{Active: c.active.Load(), Peak: c.peak.Load()}
	switch d.Type {
	case DeviceCPU:
		s.Cache = CPUPoolStats().Cached
	case DeviceGPU:
		if g := gpuCache(); g != nil {
			s.Cache = g.CacheMemory()
		}
	}
	return s
}

// CacheBackend is what a Backend whose device has a buffer cache of its
// own adds, so that CacheMemory, SetCacheLimit and ClearCache reach it.
type CacheBackend interface {
	CacheMemory() int64
	SetCacheLimit(bytes int64)
	ClearCache()
}

func gpuCache() CacheBackend {
	c, _ := backendFor(DeviceGPU).(CacheBackend)
	return c
}

// ReserveMemory counts n bytes that a backend's allocator is about to
// hand out on device d, or returns the *Error (for op, wrapping
// ErrOutOfMemory) of an allocation that SetMemoryLimit does not allow,
// after collecting garbage and emptying the caches to make room. Each
// successful call is matched by one ReleaseMemory when the buffer comes
// back.
func ReserveMemory(op string, d Device, n int64) error {
	if err := reserve(d, n); err != nil {
		err.Op = op
		return err
	}
	return nil
}

// ReleaseMemory uncounts n bytes that ReserveMemory counted on d.
func ReleaseMemory(d Device, n int64) { unreserve(d, n) }

func reserve(d Device, n int64) *Error {
	if tryReserve(n) {
		memDev[d.Type].raise(n)
		return nil
	}
	limitMu.Lock()
	ok := tryReserve(n) || collectFor(n)
	limitMu.Unlock()
	if !ok {
		lim := memLimit.Load()
		return &Error{Op: "array.AllocCPU", Err: ErrOutOfMemory,
			Msg: fmt.Sprintf("%s requested with %s active would pass the memory limit of %s (array.SetMemoryLimit)",
				formatBytes(n), formatBytes(ActiveMemory()), formatBytes(lim))}
	}
	memDev[d.Type].raise(n)
	return nil
}

// tryReserve counts n bytes if they fit under the limit.
func tryReserve(n int64) bool {
	for {
		a := memTotal.active.Load()
		if lim := memLimit.Load(); lim > 0 && a+n > lim {
			return false
		}
		if memTotal.active.CompareAndSwap(a, a+n) {
			memTotal.notePeak(a + n)
			return true
		}
	}
}

func unreserve(d Device, n int64) {
	memTotal.active.Add(-n)
	memDev[d.Type].active.Add(-n)
}

// collectFor runs a collection, so that the cleanups of dead arrays give
// their buffers back, and empties the caches; it reports whether n bytes
// then fit. Cleanups run on another goroutine after the collection, so it
// waits while they are still bringing memory back.
func collectFor(n int64) bool {
	collectAndWait(limitWait)
	deadline := time.Now().Add(limitWait)
	last, since := memTotal.active.Load(), time.Now()
	for time.Now().Before(deadline) && time.Since(since) < limitIdle {
		if tryReserve(n) {
			ClearCache()
			return true
		}
		if a := memTotal.active.Load(); a != last {
			last, since = a, time.Now()
		}
		time.Sleep(20 * time.Microsecond)
	}
	ClearCache()
	return tryReserve(n)
}

// limitWait bounds each of collectFor's waits (for the collection's
// cleanups to start, then for them to finish); limitIdle is how long
// ActiveMemory must stay unchanged for them to count as finished.
const (
	limitWait = 50 * time.Millisecond
	limitIdle = 2 * time.Millisecond
)

// Transient arrays. compile's replay builds every intermediate array of a
// trace itself, so it knows which no caller can hold and when their last
// consumer has run: their buffers can go back to the pool then, not at
// the next collection, and the next step of a training loop reuses them
// at once. Views and kernels that share a buffer make this a property of
// the Storage: holders counts the transient arrays over it, and a
// storage that any other array came to share is never freed early. A CPU
// buffer goes back to the pool at once; a backend's (NewPooledStorage)
// goes back through its recycle function, which waits for the device
// work already queued that reads it.
const (
	escaped  = -1 // a caller may hold the storage: never freed early
	recycled = -2 // freed early: no array may use it again
)

// HoldTransient records that out, just computed from ins by its
// primitive, is transient: only its consumers in the graph use it, and
// DropTransient is called once they have all run. If out shares an
// input's storage (a view), the storage gains a holder if it is already
// transient; a storage of its own is transient from now on. Only pooled
// buffers (CPU or a backend's) are ever freed early; anything else is
// left to the collector.
func HoldTransient(out *Array, ins []*Array) {
	st := storageOf(out)
	if st == nil || st.pooled == nil {
		return
	}
	shared := false
	for _, in := range ins {
		shared = shared || storageOf(in) == st
	}
	p := st.pooled
	for {
		h := p.holders.Load()
		if h < 0 || (shared && h == 0) {
			return
		}
		if p.holders.CompareAndSwap(h, h+1) {
			return
		}
	}
}

// DonateStorage makes a's storage transient, as HoldTransient does for a
// value a primitive just made, for a caller that gives a up (compile's
// CallDonating). It reports false, changing nothing, if a has no pooled
// buffer or the buffer is already tracked.
func DonateStorage(a *Array) bool {
	st := storageOf(a)
	return st != nil && st.pooled != nil && st.pooled.holders.CompareAndSwap(0, 1)
}

// EscapeTransient records that out, just computed by its primitive, is
// not transient (a caller may hold it): if it shares a transient
// storage, that storage is never freed early.
func EscapeTransient(out *Array) {
	st := storageOf(out)
	if st == nil || st.pooled == nil {
		return
	}
	p := st.pooled
	for {
		h := p.holders.Load()
		if h <= 0 || p.holders.CompareAndSwap(h, escaped) {
			return
		}
	}
}

// DropTransient records that every consumer of a, an array given to
// HoldTransient, has run. When no transient array holds its storage any
// more, the buffer goes back to the pool at once.
func DropTransient(a *Array) {
	st := storageOf(a)
	if st == nil || st.pooled == nil {
		return
	}
	p := st.pooled
	for {
		h := p.holders.Load()
		if h <= 0 {
			return
		}
		if h > 1 {
			if p.holders.CompareAndSwap(h, h-1) {
				return
			}
			continue
		}
		if p.holders.CompareAndSwap(1, recycled) {
			st.giveBack()
			return
		}
	}
}

// Recycle gives s's buffer back to its pool now, as compile does a value
// no array can read any more, for a backend that made s for its own use
// (a staged copy of host memory) and is done with it; a backend's
// recycle function still waits for the device work queued that reads it.
// It reports false, changing nothing, if s is not pooled or is already
// tracked as transient or given back.
func (s *Storage) Recycle() bool {
	if s == nil || s.pooled == nil || !s.pooled.holders.CompareAndSwap(0, recycled) {
		return false
	}
	s.giveBack()
	return true
}

// giveBack returns the buffer of a storage marked recycled to its pool.
func (s *Storage) giveBack() {
	p := s.pooled
	p.cleanup.Stop()
	s.bytes = nil
	if p.recycle != nil {
		p.recycle(s.Handle)
		return
	}
	buf := p.buf
	p.buf = nil
	freeCPU(buf)
}

// readError returns the error of reading a, an evaluated array whose
// storage is st: its buffer went back to the pool (a caller gave it to
// CallDonating and used it again; an intermediate's buffer goes back
// only when nothing can read it), or the device work that should have
// written it failed (Storage.Fail).
func readError(a *Array, st *Storage) error {
	if st == nil || st.pooled == nil {
		return nil
	}
	if st.pooled.holders.Load() == recycled {
		return Errorf("array.Eval", "array of shape %v and dtype %v was donated (compile's CallDonating) and has no value any more", a.shape, a.dtype)
	}
	if e := st.pooled.failed.Load(); e != nil {
		return *e
	}
	return nil
}

// failedWork is what an Eval checks of a node on a device that runs
// asynchronously, once it has waited for the node's work: the failure
// recorded on the memory of its inputs or outputs (Storage.Fail), nil if
// none. A failure found on an input is recorded on the outputs too: the
// node computed them from memory that was never written (a kernel that
// ran on the host after waiting for the GPU, say), and whoever reads
// them must find the error as well.
func (n *node) failedWork() error {
	var err error
	for _, in := range n.inputs {
		if err = storageOf(in).Err(); err != nil {
			break
		}
	}
	if err == nil {
		for _, o := range n.outputs {
			if err = storageOf(o).Err(); err != nil {
				break
			}
		}
	}
	if err != nil {
		for _, o := range n.outputs {
			storageOf(o).Fail(err)
		}
	}
	return err
}

// storageOf is a.Storage(), nil for a nil array too.
func storageOf(a *Array) *Storage {
	if a == nil {
		return nil
	}
	return a.Storage()
}
