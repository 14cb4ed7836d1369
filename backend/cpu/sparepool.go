package cpu

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// sparePool is a sync.Pool whose values are not all lost to a garbage
// collection. A collection empties a sync.Pool, and a program's first
// step makes several (its heap grows from nothing), so its second step
// allocated its kernels' scratch again and touched fresh pages (about
// 2.2 µs a 4 KiB page) while the hundredth did not.
//
// Each value put back is also remembered in one of a few spare slots,
// if one is free. The slots are a second way to the same values, not a
// second store: the sync.Pool still serves every get it can, handing a
// core back the memory still in its cache, and a get turns to the slots
// only when the pool is empty, as after a collection. A value can then
// be reachable both ways at once, so each carries a busy flag, and only
// the get that sets it owns the value.
type sparePool[T any] struct {
	pool  sync.Pool // *spared[T]
	spare [spares]atomic.Pointer[spared[T]]
}

// spares is how many values of each pool outlive a collection: one for
// each worker of a kernel on a machine of up to that many cores.
const spares = 4

// spared is a pooled value and its owner flag. v comes first: get hands
// out &v, which put turns back into the spared[T] around it.
type spared[T any] struct {
	v    T
	busy atomic.Bool
}

// get returns a value of the pool's, or nil.
func (p *sparePool[T]) get() *T {
	for {
		s, _ := p.pool.Get().(*spared[T])
		if s == nil {
			break
		}
		if s.busy.CompareAndSwap(false, true) {
			return &s.v
		}
		// Taken through a slot while the pool still held it: its owner
		// will put it back.
	}
	for i := range p.spare {
		if s := p.spare[i].Load(); s != nil && s.busy.CompareAndSwap(false, true) {
			return &s.v
		}
	}
	return nil
}

// fresh returns a new value of the pool's, owned by the caller, to be
// put back like one from get.
func (p *sparePool[T]) fresh(v T) *T {
	s := &spared[T]{v: v}
	s.busy.Store(true)
	return &s.v
}

// put gives back x, which get or fresh of p returned.
func (p *sparePool[T]) put(x *T) {
	s := (*spared[T])(unsafe.Pointer(x))
	s.busy.Store(false)
	known, free := false, -1
	for i := range p.spare {
		switch p.spare[i].Load() {
		case s:
			known = true
		case nil:
			if free < 0 {
				free = i
			}
		}
	}
	if !known && free >= 0 {
		p.spare[free].CompareAndSwap(nil, s)
	}
	p.pool.Put(s)
}

// clearSpares forgets the slots' values, which the next collections then
// take.
func (p *sparePool[T]) clearSpares() {
	for i := range p.spare {
		p.spare[i].Store(nil)
	}
}
