package metal

import (
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
)

// recycleEarly frees st as compile does a transient value once its last
// reader has run: st becomes transient and its only holder drops it.
func recycleEarly(t *testing.T, st *array.Storage) *array.Array {
	t.Helper()
	a := array.FromStorage(array.DefaultStream(array.GPU), []int{len(st.Bytes()) / 4}, array.Float32, st, []int{1}, 0)
	if !array.DonateStorage(a) {
		t.Fatal("a GPU buffer cannot be freed early: its storage is not pooled")
	}
	array.DropTransient(a)
	return a
}

// TestRecycledBufferWaitsForTheGPU: a buffer that compile frees while a
// queued command buffer still reads it stays out of the cache until that
// command buffer has completed, so a buffer taken meanwhile is another
// one and what the host writes into it cannot reach the queued kernel.
// Once the GPU is done, the buffer is in the cache and the next buffer of
// its class is it; a buffer no queued work uses goes back at once. The
// counts are exact.
func TestRecycledBufferWaitsForTheGPU(t *testing.T) {
	h, g := newFakeHost(t, testConfig())
	const class = 256 // the smallest: every buffer here
	x, y := devF32(t, h, 1, 2, 3), devZeros(t, h, 3)
	xb := deviceBuf(x)
	mustRun(t, h, kernelLaunch("add1", 3, rd(x), wr(y)))
	before := h.cache.stats()
	xa := recycleEarly(t, x)
	if s := h.cache.stats(); s != before {
		t.Errorf("freed while a queued command buffer reads it: %+v, want it still active as %+v", s, before)
	}
	z := devF32(t, h, 100, 100, 100)
	if deviceBuf(z) == xb {
		t.Fatal("a buffer queued work reads was handed out again")
	}
	mustSync(t, h)
	wantF32(t, "y", y, 2, 3, 4)
	want := memStats{Active: before.Active, Cached: class, Peak: before.Active + class, Buffers: 3}
	if s := h.cache.stats(); s != want {
		t.Errorf("after the GPU ran: %+v, want %+v (x's buffer cached, z's active)", s, want)
	}
	w, err := h.alloc(12)
	if err != nil {
		t.Fatal(err)
	}
	if deviceBuf(w) != xb {
		t.Error("the next buffer of x's class is not x's, which waited in the cache")
	}
	recycleEarly(t, w)
	if s := h.cache.stats(); s.Cached != class {
		t.Errorf("a buffer no queued work uses: %d bytes cached, want %d at once", s.Cached, class)
	}
	if err := xa.Eval(); err == nil || !strings.Contains(err.Error(), "donated") {
		t.Errorf("reading a freed array: %v, want an error that says it was given up", err)
	}
	if n := g.freedCount(); n != 0 {
		t.Errorf("%d buffers released to Metal, want 0", n)
	}
}

// TestRecycledBufferReturnsWhenPolled: with the GPU finishing work as the
// queue goes, a buffer freed early comes back when a later commit finds
// the command buffer that read it complete, before any synchronize, and
// the work encoded next reuses it.
func TestRecycledBufferReturnsWhenPolled(t *testing.T) {
	cfg := testConfig()
	cfg.commitOps = 1
	h, g := newFakeHost(t, cfg)
	g.autoComplete = true
	x, y := devF32(t, h, 1), devZeros(t, h, 1)
	xb := deviceBuf(x)
	mustRun(t, h, kernelLaunch("add1", 1, rd(x), wr(y)))
	recycleEarly(t, x)
	if s := h.cache.stats(); s.Cached != 256 {
		t.Errorf("%d bytes cached after the command buffer that read x completed, want 256", s.Cached)
	}
	z := devZeros(t, h, 1)
	if deviceBuf(z) != xb {
		t.Error("the next buffer is not x's")
	}
	mustRun(t, h, kernelLaunch("add1", 1, rd(y), wr(z)))
	mustSync(t, h)
	wantF32(t, "z", z, 3)
}
