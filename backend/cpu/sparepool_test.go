package cpu

import (
	"runtime"
	"sync"
	"testing"
)

// TestSparePoolOutlivesCollections checks that up to spares values come
// back after garbage collections have emptied the sync.Pool, which is
// what keeps a program's second step from packing into fresh pages, and
// that the pool serves them first while it has them.
func TestSparePoolOutlivesCollections(t *testing.T) {
	var p bufPool[float32]
	const n = 30000 // 120 KB, a worker's B̃
	put := map[*[]float32]bool{}
	var bufs []*[]float32
	for range spares + 2 {
		b := p.get(n)
		put[b] = true
		bufs = append(bufs, b)
	}
	for _, b := range bufs {
		p.put(b)
	}
	runtime.GC()
	runtime.GC()
	got := map[*[]float32]bool{}
	back := 0
	for range spares + 2 {
		b := p.get(n)
		if got[b] {
			t.Fatalf("buffer %p handed out twice", b)
		}
		got[b] = true
		if put[b] {
			back++
		}
	}
	if back != spares {
		t.Fatalf("after two collections, %d of %d buffers came back, want %d", back, spares+2, spares)
	}
}

// TestSparePoolOneOwner checks that a value reachable through the
// sync.Pool and a spare slot at once goes to one owner at a time.
func TestSparePoolOneOwner(t *testing.T) {
	var p sparePool[int]
	a := p.fresh(1)
	p.put(a) // in the pool and in a slot
	if got := p.get(); got != a {
		t.Fatalf("get = %p, want the value put back, %p", got, a)
	}
	if got := p.get(); got != nil {
		t.Fatalf("get = %p while %p is held, want nil: the slot's value is taken", got, a)
	}
	p.put(a)
	runtime.GC()
	runtime.GC()
	if got := p.get(); got != a {
		t.Fatalf("after two collections get = %p, want the slot's value %p", got, a)
	}
	if got := p.get(); got != nil {
		t.Fatalf("get = %p while %p is held, want nil", got, a)
	}
	p.put(a)
	p.clearSpares()
	runtime.GC()
	runtime.GC()
	if got := p.get(); got != nil {
		t.Fatalf("after clearSpares and two collections get = %p, want nil", got)
	}
}

// TestSparePoolOwnership checks that a value reachable through the
// sync.Pool and a spare slot at once goes to one owner at a time: many
// goroutines take values, mark them as theirs, and check nobody else
// did, with collections emptying the sync.Pool meanwhile.
func TestSparePoolOwnership(t *testing.T) {
	type cell struct{ owner int }
	var p sparePool[cell]
	var wg sync.WaitGroup
	for g := 1; g <= 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				c := p.get()
				if c == nil {
					c = p.fresh(cell{})
				}
				if c.owner != 0 {
					t.Errorf("goroutine %d got a value goroutine %d holds", g, c.owner)
					return
				}
				c.owner = g
				if i%500 == 0 {
					runtime.GC()
				}
				runtime.Gosched()
				c.owner = 0
				p.put(c)
			}
		}()
	}
	wg.Wait()
}
