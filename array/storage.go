package array

import (
	"math/bits"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Storage is the memory behind one or more arrays: an array and all its
// views share one Storage. Bytes is memory the host can read and write (on
// Apple silicon a Metal buffer's contents are host memory too). Handle is
// the backend's own object for the memory (a Metal buffer), nil on the CPU.
type Storage struct {
	bytes  []byte
	device Device
	Handle any

	// pooled is set for a buffer from the CPU pool or a backend's
	// (NewPooledStorage), nil for small CPU buffers and memory a backend
	// made with NewStorage: kept apart so that the small-op path
	// allocates no more than it did before accounting.
	pooled *pooledBuf
}

// pooledBuf is what a pooled buffer needs besides its bytes: the CPU
// pool's buffer itself, the cleanup that returns it when its Storage dies
// (stopped when compile frees it early), the count of transient arrays
// that share it (memory.go), how a backend's buffer goes back early, and
// the failure of the device work that should have written it.
type pooledBuf struct {
	buf     []uint64 // nil for a backend's buffer
	cleanup runtime.Cleanup
	holders atomic.Int32
	// recycle gives a backend's buffer back when compile frees it early;
	// nil for the CPU pool's, which goes back to the pool at once.
	recycle func(handle any)
	failed  atomic.Pointer[error]
}

// pooledStorage allocates a Storage and its pooledBuf together. Storage
// comes first, so a cleanup attached to it is attached to the whole
// allocation.
type pooledStorage struct {
	Storage
	p pooledBuf
}

// NewStorage wraps memory a backend allocated. The backend arranges its
// own release (for example with runtime.AddCleanup on the Storage).
func NewStorage(b []byte, d Device, handle any) *Storage {
	return &Storage{bytes: b, device: d, Handle: handle}
}

// NewPooledStorage wraps memory from a backend's own pool (the Metal
// buffer cache), which compile may give back before the Storage dies and
// whose device work may fail (Fail). collected is called with handle when
// the Storage becomes unreachable, unless compile has called recycle with
// it first: recycle is called at most once, when compile proves that no
// array will read the memory again (memory.go, transient arrays). Work
// already queued on the device may still read it then, so the backend
// must wait for that work before it reuses the memory.
func NewPooledStorage(b []byte, d Device, handle any, collected, recycle func(handle any)) *Storage {
	ps := &pooledStorage{Storage: Storage{bytes: b, device: d, Handle: handle}}
	s := &ps.Storage
	s.pooled = &ps.p
	s.pooled.recycle = recycle
	s.pooled.cleanup = runtime.AddCleanup(s, collected, handle)
	return s
}

// Fail records that device work which should have written s failed with
// err (a GPU command buffer that did not complete, or a kernel that read
// memory marked failed): every Eval that reads an array over s, from now
// on, returns err, and so does the Eval that waited for the work. The
// first failure recorded stays. It reports false, recording nothing, for
// a storage from neither a pool (AllocCPU's above MaxUnpooled bytes, or
// NewPooledStorage) nor a backend that can fail.
func (s *Storage) Fail(err error) bool {
	if s == nil || s.pooled == nil || err == nil {
		return false
	}
	s.pooled.failed.CompareAndSwap(nil, &err)
	return true
}

// Err returns the failure Fail recorded on s, nil if none.
func (s *Storage) Err() error {
	if s == nil || s.pooled == nil {
		return nil
	}
	if e := s.pooled.failed.Load(); e != nil {
		return *e
	}
	return nil
}

// Bytes returns the storage's memory.
func (s *Storage) Bytes() []byte { return s.bytes }

// Device returns the device the storage belongs to.
func (s *Storage) Device() Device { return s.device }

// The CPU pool keeps freed buffers by size class and hands them out again:
// touching a fresh page costs more than most kernels spend on it
// (docs/performance.md, Memory). Classes are powers of two split in four
// (so at most 25% of a buffer is slack); buffers below minPooled bytes are
// left to the Go allocator, which is fast for them.
const (
	minPooled    = 4 << 10
	classSubBits = 2
)

// MaxUnpooled is the largest CPU buffer, in bytes, that the pool leaves
// to the Go allocator: such buffers are neither pooled nor counted by
// ActiveMemory, and compile does not track them.
const MaxUnpooled = minPooled

// EnvCPUCacheLimit sets the most bytes the CPU buffer pool keeps (default
// 1 GiB). Zero disables pooling.
const EnvCPUCacheLimit = "FATHOM_CPU_CACHE_LIMIT"

type cpuPool struct {
	reclaiming atomic.Bool
	missBytes  atomic.Int64 // fresh bytes allocated since the last reclaim
	back       atomic.Int64 // bytes collections gave back since the last reclaim began

	mu     sync.Mutex
	free   map[int][]pooled // class size in bytes -> buffers, oldest first
	seq    uint64           // puts so far
	cached int64
	// limit is atomic because SetCacheLimit changes it while allocations
	// read it outside mu.
	limit   atomic.Int64
	hits    atomic.Int64
	misses  atomic.Int64
	dropped int64
}

var pool = newCPUPool()

func newCPUPool() *cpuPool {
	limit := int64(1 << 30)
	if v := os.Getenv(EnvCPUCacheLimit); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			limit = n
		}
	}
	return newPoolLimited(limit)
}

func newPoolLimited(limit int64) *cpuPool {
	p := &cpuPool{free: map[int][]pooled{}}
	p.limit.Store(limit)
	return p
}

// sizeClass rounds n up to its class.
func sizeClass(n int) int {
	if n <= minPooled {
		return n
	}
	hi := bits.Len(uint(n - 1)) // 2^hi >= n
	step := 1 << (hi - 1 - classSubBits)
	return (n + step - 1) / step * step
}

// pooled is a free buffer and when it was put in the pool.
type pooled struct {
	buf []uint64
	seq uint64
}

func (p *cpuPool) get(class int) []uint64 {
	p.mu.Lock()
	l := p.free[class]
	if k := len(l); k > 0 {
		b := l[k-1].buf
		l[k-1] = pooled{}
		p.free[class] = l[:k-1]
		p.cached -= int64(class)
		p.mu.Unlock()
		return b
	}
	p.mu.Unlock()
	return nil
}

// put keeps b for reuse. A full pool makes room by dropping the buffers
// put longest ago, whatever their size: it keeps the sizes a program uses
// now rather than those of work it has finished, whose buffers would
// otherwise fill it for good and send every large allocation to fresh
// memory.
func (p *cpuPool) put(b []uint64) {
	class := len(b) * 8
	p.mu.Lock()
	defer p.mu.Unlock()
	limit := p.limit.Load()
	if int64(class) > limit {
		p.dropped++
		return
	}
	for p.cached+int64(class) > limit {
		p.dropOldest()
	}
	p.seq++
	p.free[class] = append(p.free[class], pooled{b, p.seq})
	p.cached += int64(class)
}

// dropOldest drops the buffer put longest ago: the first of some class.
func (p *cpuPool) dropOldest() {
	oldest := -1
	for c, l := range p.free {
		if len(l) > 0 && (oldest < 0 || l[0].seq < p.free[oldest][0].seq) {
			oldest = c
		}
	}
	l := p.free[oldest]
	l[0] = pooled{}
	p.free[oldest] = l[1:]
	p.cached -= int64(oldest)
	p.dropped++
}

// AllocCPU returns storage of n bytes on the CPU. Its contents are
// arbitrary: kernels write every byte they later read. The memory goes back
// to the pool when the Storage becomes unreachable. A size the machine
// cannot give, or one that would take ActiveMemory past SetMemoryLimit,
// panics with an *Error wrapping ErrOutOfMemory (Eval returns it, naming
// the operation), never with the runtime's fatal error.
func AllocCPU(n int) *Storage {
	if n < 0 {
		Panicf("array.AllocCPU", "negative size %d", n)
	}
	class := sizeClass(n)
	if class <= minPooled {
		s := &Storage{device: CPU}
		if n == 0 {
			s.bytes = []byte{}
			return s
		}
		if err := checkAlloc("array.AllocCPU", n); err != nil {
			panic(err)
		}
		buf := make([]uint64, (class+7)/8)
		s.bytes = unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), n)
		return s
	}
	if err := reserve(CPU, int64(class)); err != nil {
		panic(err)
	}
	buf := pool.get(class)
	if buf == nil && pool.shouldReclaim(int64(class)) {
		buf = pool.reclaim(class)
	}
	if buf != nil {
		pool.hits.Add(1)
	} else {
		pool.misses.Add(1)
		if err := checkAlloc("array.AllocCPU", n); err != nil {
			unreserve(CPU, int64(class))
			panic(err)
		}
		buf = make([]uint64, class/8)
		if class >= hugeFrom {
			adviseHuge(buf)
		}
	}
	ps := &pooledStorage{Storage: Storage{device: CPU}}
	s := &ps.Storage
	s.pooled = &ps.p
	s.pooled.buf = buf
	s.bytes = unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), n)
	s.pooled.cleanup = runtime.AddCleanup(s, collectedCPU, buf)
	return s
}

// collectedCPU takes back the buffer of a CPU Storage that a collection
// found dead, and counts it for reclaim's bookkeeping.
func collectedCPU(buf []uint64) {
	pool.back.Add(int64(len(buf) * 8))
	freeCPU(buf)
}

// freeCPU takes back a buffer that no array uses any more: the collector
// found it dead, or compile proved it (memory.go).
func freeCPU(buf []uint64) {
	unreserve(CPU, int64(len(buf)*8))
	pool.put(buf)
}

// reclaimYield is what a forced collection should give back for the
// pool to miss no more than once a collection. Buffers come back only
// through cleanups, which run after a collection, so a loop that drops a
// large result every iteration finds the pool empty once it has reused
// every buffer in circulation. The pool then either runs a collection
// (cheap for fathom's heap of pointer-free buffers) or takes fresh memory
// (dearer: docs/performance.md), which adds a buffer to the circulation
// for good. Until collections have given back
// reclaimYield bytes, or two buffers of a bigger class, a miss takes
// fresh memory, up to the difference; after that a miss runs a
// collection. So a loop that drops 4 MiB a call keeps 16 buffers in
// circulation and collects once every 16 calls, and one that drops 64 MiB
// keeps two and collects every other call. A pool that grew by a buffer
// at every collection kept growing (docs/performance.md).
const reclaimYield = 64 << 20

// shouldReclaim counts a miss of a buffer of size bytes and reports
// whether to run a collection for it rather than take fresh memory (see
// reclaimYield). A pool never keeps more than its limit in circulation,
// and never collects for a buffer it could not keep.
func (p *cpuPool) shouldReclaim(size int64) bool {
	limit := p.limit.Load()
	if size > limit {
		return false
	}
	target := min(max(reclaimYield, 2*size), limit)
	return p.missBytes.Add(size) >= target-p.back.Load()
}

// reclaim runs a collection, waits briefly for the cleanups it queues to
// return buffers, and tries the pool again. Only one goroutine reclaims
// at a time; the others allocate fresh memory meanwhile.
func (p *cpuPool) reclaim(class int) []uint64 {
	if !p.reclaiming.CompareAndSwap(false, true) {
		return nil
	}
	defer p.reclaiming.Store(false)
	p.missBytes.Store(0)
	p.back.Store(0)
	collectAndWait(2 * time.Millisecond)
	// Cleanups run in no set order: the sentinel's may come before the
	// buffers'. Wait while they are still putting buffers back.
	last, since := int64(-1), time.Now()
	for time.Since(since) < cleanupIdle {
		if b := p.get(class); b != nil {
			return b
		}
		if n := p.back.Load(); n != last {
			last, since = n, time.Now()
		}
		runtime.Gosched()
	}
	return nil
}

// collectAndWait runs a collection and waits, at most wait, for the
// cleanups it queued to start: a sentinel's cleanup, queued with them,
// says when.
func collectAndWait(wait time.Duration) {
	done := make(chan struct{})
	// big enough to stay out of the tiny allocator, whose blocks free late
	sentinel := new([32]byte)
	runtime.AddCleanup(sentinel, func(c chan struct{}) { close(c) }, done)
	sentinel = nil
	runtime.GC()
	select {
	case <-done:
	case <-time.After(wait):
	}
}

// cleanupIdle is how long reclaim waits for the next buffer to come back
// before it gives up on its class: long enough for the cleanup goroutine
// to put a buffer back under the race detector.
const cleanupIdle = 100 * time.Microsecond

// PoolStats reports the CPU pool's counters: bytes cached now, allocations
// served from the pool, allocations that needed fresh memory, and freed
// buffers dropped because the pool was full.
type PoolStats struct {
	Cached, Hits, Misses, Dropped int64
}

// CPUPoolStats returns the CPU pool's counters.
func CPUPoolStats() PoolStats {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	return PoolStats{pool.cached, pool.hits.Load(), pool.misses.Load(), pool.dropped}
}

// ClearCPUPool frees every cached CPU buffer to the Go allocator;
// ClearCache does so for every device.
func ClearCPUPool() {
	pool.mu.Lock()
	pool.free = map[int][]pooled{}
	pool.cached = 0
	pool.mu.Unlock()
}

// setLimit sets the most bytes the pool keeps, dropping the buffers put
// longest ago until it keeps no more, and returns the previous limit.
func (p *cpuPool) setLimit(n int64) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	prev := p.limit.Swap(n)
	for p.cached > n {
		p.dropOldest()
	}
	return prev
}
