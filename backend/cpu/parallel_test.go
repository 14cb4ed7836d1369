package cpu

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
)

// TestParallelForWorkerPanicReachesCaller guards the process against a
// kernel that panics on a worker goroutine: no caller can recover such a
// panic, so it used to end the process. The panic must come back on the
// calling goroutine, where array.Eval recovers it, whichever chunk (and so
// whichever goroutine) it happens in.
func TestParallelForWorkerPanicReachesCaller(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	const n, grain = 1 << 12, 16
	for _, c := range []struct {
		name  string
		value any
	}{
		{"runtime error", nil}, // an index out of range, made below
		{"string", "boom"},
		{"*array.Error", array.Errorf("test.Kernel", "bad index 7")},
	} {
		for _, at := range []int{0, n / 2, n - 1} {
			t.Run(fmt.Sprintf("%s/at%d", c.name, at), func(t *testing.T) {
				var short []int
				r := func() (r any) {
					defer func() { r = recover() }()
					ParallelFor(n, grain, func(lo, hi int) {
						if lo <= at && at < hi {
							if c.value == nil {
								_ = short[at] // index out of range
							}
							panic(c.value)
						}
					})
					return nil
				}()
				if r == nil {
					t.Fatal("ParallelFor returned normally after its body panicked")
				}
				if e, ok := c.value.(*array.Error); ok {
					if r != e {
						t.Errorf("recovered %v; want the *array.Error itself", r)
					}
					return
				}
				p, ok := r.(*workerPanic)
				if !ok {
					t.Fatalf("recovered %T %v; want a *workerPanic", r, r)
				}
				want := "boom"
				if c.value == nil {
					want = "index out of range"
				}
				if !strings.Contains(fmt.Sprint(p), want) || !strings.Contains(string(p.PanicStack()), "parallel_test.go") {
					t.Errorf("recovered %q with stack\n%s\nwant %q and the stack of the panic", fmt.Sprint(p), p.PanicStack(), want)
				}
				var re runtime.Error
				if c.value == nil && !errors.As(asError(p.value), &re) {
					t.Errorf("the panic value %T is not the runtime error", p.value)
				}
			})
		}
	}
}

func asError(v any) error {
	err, _ := v.(error)
	return err
}
