package array

import (
	"errors"
	"math/bits"
	"runtime"
	"testing"
	"time"
	"unsafe"
)

func TestSizeClassBounds(t *testing.T) {
	check := func(n int) {
		c := sizeClass(n)
		switch {
		case c < n:
			t.Fatalf("sizeClass(%d) = %d, smaller than the request", n, c)
		case n <= minPooled && c != n:
			t.Fatalf("sizeClass(%d) = %d; unpooled sizes are not rounded", n, c)
		case n > minPooled && 4*(c-n) > n:
			t.Fatalf("sizeClass(%d) = %d wastes more than 25%%", n, c)
		case n > minPooled && c%8 != 0:
			t.Fatalf("sizeClass(%d) = %d is not a whole number of words", n, c)
		case sizeClass(c) != c:
			t.Fatalf("sizeClass(sizeClass(%d)) = %d, not %d", n, sizeClass(c), c)
		}
	}
	prev := 0
	for n := range 1 << 17 {
		check(n)
		if c := sizeClass(n); c < prev {
			t.Fatalf("sizeClass(%d) = %d < sizeClass(%d) = %d", n, c, n-1, prev)
		}
		prev = sizeClass(n)
	}
	for p := 17; p < min(45, bits.UintSize-2); p++ {
		for _, d := range []int{-1, 0, 1, 3, 1 << (p - 3), 1<<(p-3) + 1, 1 << (p - 1)} {
			check(1<<p + d)
		}
	}
	// four classes per doubling above the pooling threshold
	classes := map[int]bool{}
	for n := 1<<20 + 1; n <= 1<<21; n += 1 << 10 {
		classes[sizeClass(n)] = true
	}
	if len(classes) != 4 {
		t.Errorf("%d classes between 1 MiB and 2 MiB, want 4", len(classes))
	}
}

func TestAllocCPU(t *testing.T) {
	for _, n := range []int{0, 1, 7, minPooled, minPooled + 1, 1<<20 + 3} {
		s := AllocCPU(n)
		if len(s.Bytes()) != n || s.Bytes() == nil || s.Device() != CPU || s.Handle != nil {
			t.Errorf("AllocCPU(%d): %d bytes (nil %v), device %v, handle %v", n, len(s.Bytes()), s.Bytes() == nil, s.Device(), s.Handle)
		}
		if n > 0 && uintptr(unsafe.Pointer(&s.Bytes()[0]))%8 != 0 {
			t.Errorf("AllocCPU(%d) is not 8-byte aligned", n)
		}
	}
	err := Try(func() { AllocCPU(-1) })
	var e *Error
	if !errors.As(err, &e) || e.Op != "array.AllocCPU" {
		t.Errorf("AllocCPU(-1): %v", err)
	}
	st := NewStorage([]byte{1, 2}, GPU, "handle")
	if len(st.Bytes()) != 2 || st.Device() != GPU || st.Handle != "handle" {
		t.Errorf("NewStorage: %v %v %v", st.Bytes(), st.Device(), st.Handle)
	}
}

// dropped allocates n bytes, marks them, lets the storage die and
// returns the buffer's address.
//
//go:noinline
func dropped(n int) uintptr {
	s := AllocCPU(n)
	s.Bytes()[0] = 42
	return uintptr(unsafe.Pointer(&s.Bytes()[0]))
}

// awaitPooled collects until a buffer of the class is in the pool.
func awaitPooled(t *testing.T, class int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		pool.mu.Lock()
		k := len(pool.free[class])
		pool.mu.Unlock()
		if k > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no freed buffer of class %d came back to the pool", class)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

func TestPoolReusesFreedBuffer(t *testing.T) {
	if pool.limit.Load() == 0 {
		t.Skipf("pooling is off (%s=0)", EnvCPUCacheLimit)
	}
	// a size no other test allocates, and one in the same class
	const n, m = 3<<20 + 12345, 7 << 19
	class := sizeClass(n)
	if sizeClass(m) != class {
		t.Fatalf("%d and %d are in classes %d and %d", n, m, class, sizeClass(m))
	}
	addr := dropped(n)
	awaitPooled(t, class)
	before := CPUPoolStats()
	if before.Cached < int64(class) {
		t.Errorf("pool caches %d bytes, less than the freed buffer's %d", before.Cached, class)
	}
	s := AllocCPU(m)
	after := CPUPoolStats()
	if after.Hits <= before.Hits {
		t.Errorf("hits %d -> %d: the freed buffer was not reused", before.Hits, after.Hits)
	}
	if got := uintptr(unsafe.Pointer(&s.Bytes()[0])); got != addr {
		t.Errorf("reused buffer at %#x, freed one at %#x", got, addr)
	}
	if len(s.Bytes()) != m {
		t.Errorf("%d bytes, want %d", len(s.Bytes()), m)
	}
	if after.Cached > before.Cached-int64(class) {
		t.Errorf("cached bytes %d -> %d after taking a %d-byte buffer", before.Cached, after.Cached, class)
	}
	runtime.KeepAlive(s)

	ClearCPUPool()
	if st := CPUPoolStats(); st.Cached != 0 {
		t.Errorf("after ClearCPUPool, %d bytes cached", st.Cached)
	}
}

// raceEnabled is set under the race detector.
var raceEnabled = false

// TestPoolCirculation drops a 4 MiB buffer an iteration, as a loop that
// drops its result does. The pool takes fresh memory until collections
// give back reclaimYield bytes, about 16 buffers, and then collects at each
// miss: the buffers in circulation stay bounded. A pool that grew by a
// buffer at each collection took fresh memory 78 times in 3000 iterations
// and 110 times in 6000.
func TestPoolCirculation(t *testing.T) {
	if pool.limit.Load() < 2*reclaimYield {
		t.Skipf("the pool keeps %d bytes, too few for this test", pool.limit.Load())
	}
	const n, iters = 4 << 20, 6000
	// A collection whose cleanups come late (on a busy machine, or under
	// the race detector) makes the pool take fresh memory for up to
	// reclaimYield more.
	bound := int64(3 * reclaimYield / n)
	if raceEnabled {
		bound += 2 * reclaimYield / n
	}
	before := CPUPoolStats()
	for range iters {
		dropped(n)
	}
	after := CPUPoolStats()
	if fresh := after.Misses - before.Misses; fresh > bound {
		t.Errorf("%d iterations took fresh memory %d times, want at most %d", iters, fresh, bound)
	}
	if hits := after.Hits - before.Hits; hits < iters-bound {
		t.Errorf("%d iterations reused a buffer %d times, want at least %d", iters, hits, iters-bound)
	}
}

// TestPoolShouldReclaim follows the decision between fresh memory and a
// collection at each miss.
func TestPoolShouldReclaim(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name        string
		limit, size int64
		back        int64 // bytes put back since the last reclaim
		first       int   // the miss that collects, 0 for none in 100
	}{
		{"small buffers fill reclaimYield first", 1 << 30, 4 * mib, 0, 16},
		{"a collection gave back enough", 1 << 30, 4 * mib, reclaimYield, 1},
		{"it gave back part", 1 << 30, 4 * mib, 40 * mib, 6},
		{"big buffers circulate two", 1 << 30, 64 * mib, 0, 2},
		{"two big ones came back", 1 << 30, 64 * mib, 128 * mib, 1},
		{"the limit bounds the circulation", 16 * mib, 4 * mib, 0, 4},
		{"a buffer the pool cannot keep", 10 * mib, 16 * mib, 0, 0},
		{"pooling off", 0, 8 << 10, 0, 0},
	} {
		p := newPoolLimited(c.limit)
		p.back.Store(c.back)
		got := 0
		for i := 1; i <= 100 && got == 0; i++ {
			if p.shouldReclaim(c.size) {
				got = i
			}
		}
		if got != c.first {
			t.Errorf("%s: collects at miss %d, want %d", c.name, got, c.first)
		}
	}
}

func TestPoolLimit(t *testing.T) {
	p := newPoolLimited(10 << 10)
	buf := func() []uint64 { return make([]uint64, 512) } // 4 KiB
	p.put(buf())
	p.put(buf())
	p.put(buf()) // 12 KiB would pass the 10 KiB limit
	if p.cached != 8<<10 || p.dropped != 1 || len(p.free[4<<10]) != 2 {
		t.Errorf("cached %d, dropped %d, %d free; want 8192, 1, 2", p.cached, p.dropped, len(p.free[4<<10]))
	}
	if b := p.get(4 << 10); len(b) != 512 || p.cached != 4<<10 {
		t.Errorf("get: %d words, %d bytes left cached", len(b), p.cached)
	}
	if b := p.get(8 << 10); b != nil {
		t.Error("get of a class with no free buffer returned one")
	}
	off := newPoolLimited(0)
	off.put(buf())
	if off.cached != 0 || off.dropped != 1 {
		t.Errorf("a pool with limit 0 cached %d bytes", off.cached)
	}
}

// TestPoolDropsOldest fills a pool with small buffers, then frees larger
// ones: the pool makes room by dropping the buffers freed longest ago, so
// it ends up holding the sizes in use now.
func TestPoolDropsOldest(t *testing.T) {
	p := newPoolLimited(16 << 10)
	small, large := make([][]uint64, 4), make([]uint64, 1024) // 4 KiB each, 8 KiB
	for i := range small {
		small[i] = make([]uint64, 512)
		p.put(small[i])
	}
	p.put(large)
	if p.cached != 16<<10 || p.dropped != 2 || len(p.free[4<<10]) != 2 || len(p.free[8<<10]) != 1 {
		t.Fatalf("cached %d, dropped %d, %d small and %d large free; want 16384, 2, 2, 1",
			p.cached, p.dropped, len(p.free[4<<10]), len(p.free[8<<10]))
	}
	// the two kept are the newest, and get returns the newest first
	if b := p.get(4 << 10); &b[0] != &small[3][0] {
		t.Error("get did not return the small buffer freed last")
	}
	if b := p.get(4 << 10); &b[0] != &small[2][0] {
		t.Error("the second small buffer kept is not the one freed third")
	}
	if b := p.get(8 << 10); &b[0] != &large[0] {
		t.Error("the large buffer was not kept")
	}
	p.put(make([]uint64, 4096)) // 32 KiB: more than the limit
	if p.cached != 0 || p.dropped != 3 {
		t.Errorf("a buffer larger than the limit: cached %d, dropped %d; want 0, 3", p.cached, p.dropped)
	}
}

func TestPoolLimitFromEnv(t *testing.T) {
	for _, c := range []struct {
		env  string
		want int64
	}{
		{"12345", 12345},
		{"0", 0},
		{"", 1 << 30},
		{"lots", 1 << 30},
		{"-5", 1 << 30},
		{"99999999999999999999", 1 << 30},
	} {
		t.Setenv(EnvCPUCacheLimit, c.env)
		if got := newCPUPool().limit.Load(); got != c.want {
			t.Errorf("%s=%q: limit %d, want %d", EnvCPUCacheLimit, c.env, got, c.want)
		}
	}
}
