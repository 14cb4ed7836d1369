package array

import (
	"runtime"
	"testing"
	"time"
	"weak"
)

// copyPrim copies its input's bytes into a new buffer.
type copyPrim struct{}

func (copyPrim) Name() string { return "asyncCopy" }
func (copyPrim) Eval(_ Stream, in, out []*Array) error {
	st := AllocCPU(len(in[0].Storage().Bytes()))
	copy(st.Bytes(), in[0].Storage().Bytes())
	out[0].SetData(st, in[0].Strides(), 0)
	return nil
}

// asyncIdle waits until the AsyncEval worker has left, and reports
// whether it did within a few seconds.
func asyncIdle() bool {
	for range 500 {
		asyncQueue.mu.Lock()
		idle := !asyncQueue.running && asyncQueue.pending == 0 && asyncQueue.jobs == nil
		asyncQueue.mu.Unlock()
		if idle {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// unreadAsync starts evaluating a 1 MiB copy and drops it, returning weak
// pointers to the result and its input.
//
//go:noinline
func unreadAsync() (weak.Pointer[Array], weak.Pointer[Array]) {
	x := FromSlice(make([]float32, 1<<18))
	y := New(x.Stream(), x.Shape(), Float32, copyPrim{}, x)
	AsyncEval(y)
	return weak.Make(y), weak.Make(x)
}

// TestAsyncEvalLeaksNothing: arrays dropped unread are collected once
// their evaluation is done, and the worker goroutine exits when its queue
// is empty.
func TestAsyncEvalLeaksNothing(t *testing.T) {
	wy, wx := unreadAsync()
	if !asyncIdle() {
		t.Fatal("the AsyncEval worker is still running five seconds after its only call")
	}
	for range 10 {
		runtime.GC()
		if wy.Value() == nil && wx.Value() == nil {
			return
		}
	}
	t.Errorf("after the evaluation, result collected %v, input collected %v; want both", wy.Value() == nil, wx.Value() == nil)
}
