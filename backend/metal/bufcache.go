package metal

import (
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/fathom-go/fathom/array"
)

// devBuf is one device buffer: on darwin a retained shared-storage
// MTLBuffer, whose contents are host memory (Apple silicon has one memory
// for CPU and GPU). Arrays on the GPU hold it as their Storage's Handle.
type devBuf struct {
	id    unsafe.Pointer // retained id<MTLBuffer>
	data  []byte         // contents, class bytes long
	class int
	cache *bufCache // the allocator it came from (plans allocate scratch beside it)
	// lastUse is the sequence number of the newest command buffer that
	// uses the buffer (cmdQueue), for recycle.
	lastUse atomic.Uint64
	// links in the cache's least-recently-freed list while cached
	prev, next *devBuf
}

// deviceBuf returns the device buffer behind m, or nil if m is host memory
// (a CPU Storage, or the harness's byte slices).
func deviceBuf(m Memory) *devBuf {
	if st, ok := m.(*array.Storage); ok {
		if b, ok := st.Handle.(*devBuf); ok {
			return b
		}
	}
	return nil
}

// gpuPage is the page size of Apple silicon: Metal rounds every shared
// buffer up to it, so size classes above it are whole pages.
const gpuPage = 16 << 10

// gpuSizeClass rounds n up to its buffer size class: powers of two from
// 256 bytes to a page, whole pages up to four pages, and above that four
// classes per power of two (so at most 25% of a buffer is slack).
func gpuSizeClass(n int) int {
	switch {
	case n <= 256:
		return 256
	case n <= gpuPage:
		return 1 << bits.Len(uint(n-1))
	case n <= 4*gpuPage:
		return (n + gpuPage - 1) / gpuPage * gpuPage
	}
	step := 1 << (bits.Len(uint(n-1)) - 3)
	return (n + step - 1) / step * step
}

// bufCache hands out device buffers as *array.Storage and takes them back
// through runtime.AddCleanup when the Storage becomes unreachable, or
// earlier when compile proves no array reads it any more (recycle). Freed
// buffers wait in per-class free lists for reuse; the oldest are released
// to Metal when the cache exceeds its byte limit, or when a new buffer
// would exceed the memory or buffer-count limit.
type bufCache struct {
	// newBuf creates a buffer of size bytes; freeBuf releases one.
	newBuf  func(size int) (id unsafe.Pointer, contents []byte, err error)
	freeBuf func(id unsafe.Pointer)

	// onFull, if set, runs when an allocation finds no room, before
	// allocWaiting collects garbage and tries again: the host waits
	// there for the queued GPU work, whose buffers may then be freed.
	onFull func()

	cacheLimit int64 // bytes of freed buffers kept
	memLimit   int64 // bytes of live plus cached buffers
	maxBuffers int   // live plus cached buffers
	maxLength  int   // largest single buffer

	mu     sync.Mutex
	free   map[int][]*devBuf
	lru    devBuf // sentinel: lru.next is the oldest cached buffer
	live   int64
	cached int64
	nlive  int
	ncache int
	peak   int64
	// retired is the sequence number of the newest command buffer known
	// to have completed (the queue's retire); recycled holds buffers that
	// compile freed while a command buffer that uses them had not.
	retired  uint64
	recycled []*devBuf
}

func newBufCache(cfg config, maxLength int,
	newBuf func(int) (unsafe.Pointer, []byte, error), freeBuf func(unsafe.Pointer)) *bufCache {
	c := &bufCache{
		newBuf: newBuf, freeBuf: freeBuf,
		cacheLimit: cfg.cacheLimit, memLimit: cfg.memLimit, maxBuffers: cfg.maxBuffers, maxLength: maxLength,
		free: map[int][]*devBuf{},
	}
	c.lru.prev, c.lru.next = &c.lru, &c.lru
	return c
}

// alloc returns device storage of n bytes. Its contents are arbitrary.
// When the limits leave no room even after releasing every cached buffer,
// it returns an error that says which limit and how to raise it.
func (c *bufCache) alloc(n int) (*array.Storage, error) {
	if n < 0 {
		return nil, array.Errorf("metal.Alloc", "negative size %d", n)
	}
	if n > c.maxLength {
		return nil, array.Errorf("metal.Alloc", "%d bytes exceed the device's largest buffer (%d bytes)", n, c.maxLength)
	}
	class := gpuSizeClass(n)
	if err := array.ReserveMemory("metal.Alloc", array.GPU, int64(class)); err != nil {
		return nil, err
	}
	b, err := c.take(class)
	if err != nil {
		array.ReleaseMemory(array.GPU, int64(class))
		return nil, err
	}
	return array.NewPooledStorage(b.data[:n:n], array.GPU, b, c.collected, c.recycle), nil
}

// take reuses a cached buffer of the class or makes a new one.
func (c *bufCache) take(class int) (*devBuf, error) {
	c.mu.Lock()
	if l := c.free[class]; len(l) > 0 {
		b := l[len(l)-1]
		l[len(l)-1] = nil
		c.free[class] = l[:len(l)-1]
		c.unlink(b)
		c.cached -= int64(class)
		c.ncache--
		c.addLive(class)
		c.mu.Unlock()
		return b, nil
	}
	var evicted []*devBuf
	for c.ncache > 0 && (c.live+c.cached+int64(class) > c.memLimit || c.nlive+c.ncache+1 > c.maxBuffers) {
		evicted = append(evicted, c.evictOldest())
	}
	if c.live+int64(class) > c.memLimit || c.nlive+1 > c.maxBuffers {
		live, nlive := c.live, c.nlive
		c.mu.Unlock()
		c.release(evicted)
		if nlive+1 > c.maxBuffers {
			return nil, array.Errorf("metal.Alloc", "out of device buffers: %d are live (limit %d, set by %s)", nlive, c.maxBuffers, envMaxBuffers)
		}
		return nil, array.Errorf("metal.Alloc", "out of device memory: %d bytes requested with %d bytes live (limit %d bytes, set by %s)",
			class, live, c.memLimit, envMemoryLimitMB)
	}
	c.addLive(class) // reserve before the slow call, so racing allocations see it
	c.mu.Unlock()
	c.release(evicted)
	id, data, err := c.newBuf(class)
	if err != nil {
		c.mu.Lock()
		c.live -= int64(class)
		c.nlive--
		c.mu.Unlock()
		return nil, array.Errorf("metal.Alloc", "allocating %d bytes: %v", class, err)
	}
	return &devBuf{id: id, data: data[:class:class], class: class, cache: c}, nil
}

func (c *bufCache) addLive(class int) {
	c.live += int64(class)
	c.nlive++
	c.peak = max(c.peak, c.live)
}

// collected takes back the buffer of a Storage that became unreachable:
// no command buffer holds it any more (a batch keeps the Storage of every
// buffer it uses until it completes).
func (c *bufCache) collected(h any) {
	c.mu.Lock()
	evicted := c.putLocked(h.(*devBuf), nil)
	c.mu.Unlock()
	c.release(evicted)
}

// recycle takes back the buffer of a Storage that compile freed before
// it died (array.NewPooledStorage): at once if every command buffer that
// uses it has completed, else once the last of them has (retire). Work
// on the GPU would be ordered after those command buffers' reads, but
// the host writes into buffers it hands out (staged inputs, large
// parameter blocks, kernels that run on the host) with nothing to order
// those writes after the GPU's; so, as MLX does, a buffer comes back only
// when the GPU is done with it.
func (c *bufCache) recycle(h any) {
	b := h.(*devBuf)
	c.mu.Lock()
	var evicted []*devBuf
	if b.lastUse.Load() > c.retired {
		c.recycled = append(c.recycled, b)
	} else {
		evicted = c.putLocked(b, nil)
	}
	c.mu.Unlock()
	c.release(evicted)
}

// retire records that every command buffer up to sequence number seq
// has completed, and takes back the recycled buffers that waited for
// them.
func (c *bufCache) retire(seq uint64) {
	c.mu.Lock()
	c.retired = seq
	var evicted []*devBuf
	keep := c.recycled[:0]
	for _, b := range c.recycled {
		if b.lastUse.Load() > seq {
			keep = append(keep, b)
			continue
		}
		evicted = c.putLocked(b, evicted)
	}
	clear(c.recycled[len(keep):])
	c.recycled = keep
	c.mu.Unlock()
	c.release(evicted)
}

// putLocked takes back a buffer no array uses any more into the cache,
// or appends it to evicted, with the buffers the cache's limit pushes
// out, for release.
func (c *bufCache) putLocked(b *devBuf, evicted []*devBuf) []*devBuf {
	array.ReleaseMemory(array.GPU, int64(b.class))
	c.live -= int64(b.class)
	c.nlive--
	if int64(b.class) > c.cacheLimit {
		return append(evicted, b)
	}
	c.free[b.class] = append(c.free[b.class], b)
	b.prev, b.next = c.lru.prev, &c.lru
	c.lru.prev.next = b
	c.lru.prev = b
	c.cached += int64(b.class)
	c.ncache++
	return c.trimLocked(evicted)
}

// evictOldest removes the least recently freed buffer from the cache and
// returns it. Called with c.mu held and c.ncache > 0.
func (c *bufCache) evictOldest() *devBuf {
	b := c.lru.next
	c.unlink(b)
	l := c.free[b.class]
	for i, x := range l {
		if x == b {
			copy(l[i:], l[i+1:])
			l[len(l)-1] = nil
			c.free[b.class] = l[:len(l)-1]
			break
		}
	}
	c.cached -= int64(b.class)
	c.ncache--
	return b
}

func (c *bufCache) unlink(b *devBuf) {
	b.prev.next, b.next.prev = b.next, b.prev
	b.prev, b.next = nil, nil
}

// release gives buffers back to Metal, outside the lock: it is a call
// into Objective-C.
func (c *bufCache) release(bs []*devBuf) {
	for _, b := range bs {
		c.freeBuf(b.id)
	}
}

// setCacheLimit sets the most bytes of freed buffers kept, releasing the
// oldest until the cache keeps no more.
func (c *bufCache) setCacheLimit(n int64) {
	c.mu.Lock()
	c.cacheLimit = n
	evicted := c.trimLocked(nil)
	c.mu.Unlock()
	c.release(evicted)
}

// trimLocked evicts the buffers freed longest ago until the cache keeps
// no more than its limit, and appends them to evicted for release.
func (c *bufCache) trimLocked(evicted []*devBuf) []*devBuf {
	for c.cached > c.cacheLimit {
		evicted = append(evicted, c.evictOldest())
	}
	return evicted
}

// clear releases every cached buffer.
func (c *bufCache) clear() {
	c.mu.Lock()
	var evicted []*devBuf
	for c.ncache > 0 {
		evicted = append(evicted, c.evictOldest())
	}
	c.mu.Unlock()
	c.release(evicted)
}

// allocWaiting is alloc, except that when memory runs out it first calls
// onFull (waiting for the GPU work in flight) and collects garbage before
// it gives up with an error.
func (c *bufCache) allocWaiting(n int) (*array.Storage, error) {
	st, err := c.alloc(n)
	if err == nil {
		return st, nil
	}
	if c.onFull != nil {
		c.onFull()
	}
	return c.allocReclaiming(n)
}

// allocReclaiming retries alloc after a collection, for as long as the
// cleanups it queues may take to return dead arrays' buffers (they run
// on other goroutines, in no set order): the path taken before reporting
// that memory ran out.
func (c *bufCache) allocReclaiming(n int) (*array.Storage, error) {
	runtime.GC()
	deadline := time.Now().Add(reclaimWait)
	for {
		st, err := c.alloc(n)
		if err == nil || time.Now().After(deadline) {
			return st, err
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// reclaimWait bounds how long an allocation that found no room waits for
// cleanups; returning a buffer takes well under a microsecond, so this
// covers thousands of them.
const reclaimWait = 20 * time.Millisecond

// memStats describes the GPU allocator.
type memStats struct {
	// Active is the bytes of buffers held by live arrays (or by queued GPU
	// work), Cached the bytes of freed buffers kept for reuse, and Peak the
	// most Active has been.
	Active, Cached, Peak int64
	// Buffers counts active and cached buffers together, the number that
	// FATHOM_METAL_MAX_BUFFERS limits.
	Buffers int
}

func (c *bufCache) stats() memStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return memStats{Active: c.live, Cached: c.cached, Peak: c.peak, Buffers: c.nlive + c.ncache}
}

// The GPU's side of array's memory API: the bytes live arrays hold come
// to array.ActiveMemory through ReserveMemory and ReleaseMemory in alloc
// and put; these reach the cache, opening the device as any first use
// does (so a limit set before the first GPU work holds), and find nothing
// cached where there is no GPU.

// CacheMemory returns the bytes of freed buffers the GPU keeps.
func (gpuBackend) CacheMemory() int64 {
	return stats().Cached
}

// SetCacheLimit sets the most bytes of freed buffers the GPU keeps.
func (gpuBackend) SetCacheLimit(n int64) {
	if h, err := getHost(); err == nil {
		h.cache.setCacheLimit(n)
	}
}

// ClearCache releases every cached GPU buffer to the system.
func (gpuBackend) ClearCache() { clearCache() }
