package metal

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fathom-go/fathom/array"
)

// These tests reach the fake GPU through array.Eval, as ops does through
// the package's functions: a failed command buffer must reach every Eval
// that waited for its work, whichever synchronized first.

// useFakeHost makes the package's GPU (what Alloc, Run, Synchronize and
// array.Eval reach) a host over a fake GPU for the test.
func useFakeHost(t *testing.T, cfg config) (*host, *fakeGPU) {
	t.Helper()
	h, g := newFakeHost(t, cfg)
	getHost() // so that hostOnce does not overwrite what the test installs
	oldHost, oldErr := theHost, hostErr
	theHost, hostErr = h, nil
	t.Cleanup(func() {
		if err := h.synchronize(); err != nil {
			t.Logf("left-over failure: %v", err)
		}
		theHost, hostErr = oldHost, oldErr
	})
	return h, g
}

// addOne is a GPU primitive over the fake GPU: out = in + 1, float32, for
// row-major inputs.
type addOne struct{}

func (addOne) Name() string { return "AddOne" }

func (addOne) Eval(s array.Stream, in, out []*array.Array) error {
	st, err := Alloc(4 * out[0].Size())
	if err != nil {
		return err
	}
	out[0].SetRowMajorData(st)
	return Run(s, []Launch{kernelLaunch("add1", out[0].Size(), rd(in[0].Storage()), wr(st))})
}

func plusOne(x *array.Array) *array.Array {
	return array.New(array.DefaultStream(array.GPU), x.Shape(), array.Float32, addOne{}, x)
}

// pause is a GPU view (its output shares its input's memory) whose Eval
// says it has been reached and waits to be let go, so a test can stop an
// Eval between encoding its kernels and waiting for them.
type pause struct{ reached, release chan struct{} }

func (p *pause) Name() string { return "Pause" }

func (p *pause) Eval(_ array.Stream, in, out []*array.Array) error {
	close(p.reached)
	<-p.release
	out[0].SetData(in[0].Storage(), in[0].Strides(), in[0].Offset())
	return nil
}

func newPause() *pause { return &pause{reached: make(chan struct{}), release: make(chan struct{})} }

func (p *pause) after(x *array.Array) *array.Array {
	return array.New(array.DefaultStream(array.GPU), x.Shape(), array.Float32, p, x)
}

// gpuArray is an evaluated float32 array in device memory.
func gpuArray(t *testing.T, h *host, vals ...float32) *array.Array {
	t.Helper()
	return array.FromStorage(array.DefaultStream(array.GPU), []int{len(vals)}, array.Float32, devF32(t, h, vals...), []int{1}, 0)
}

func wantFailure(t *testing.T, what string, err error, msg string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), msg) {
		t.Errorf("%s: error %v, want the command buffer's failure %q", what, err, msg)
	}
}

func wantValues(t *testing.T, what string, a *array.Array, want ...float32) {
	t.Helper()
	got, err := array.ToSlice[float32](a)
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

const timeout = "GPU command buffer failed: Caused GPU Timeout Error"

// TestFailureReachesEveryEval: Eval A encodes z = x+1 and y1 = z+1, then
// stops before it waits; Eval B finds z queued, encodes y2 = z+1 into the
// same command buffer, and synchronizes first. The command buffer fails:
// B gets the failure, and so does A, whose synchronize then finds nothing
// left to wait for (before, A saw success and published garbage). Every
// later read of z, y1 or y2 fails the same way, and the GPU runs new work.
func TestFailureReachesEveryEval(t *testing.T) {
	h, g := useFakeHost(t, testConfig())
	x := gpuArray(t, h, 1, 2, 3)
	z := plusOne(x)
	p := newPause()
	y1 := p.after(plusOne(z))
	y2 := plusOne(z)
	g.setFailNext(timeout)
	errA := make(chan error)
	go func() { errA <- array.Eval(y1) }()
	<-p.reached
	wantFailure(t, "Eval B", array.Eval(y2), timeout)
	close(p.release)
	wantFailure(t, "Eval A", <-errA, timeout)
	for name, a := range map[string]*array.Array{"z": z, "y1": y1, "y2": y2} {
		wantFailure(t, "a later Eval of "+name, a.Eval(), timeout)
		_, err := array.ToSlice[float32](a)
		wantFailure(t, "ToSlice of "+name, err, timeout)
		wantFailure(t, "an op on "+name, plusOne(a).Eval(), timeout)
	}
	wantValues(t, "x, which the failed work only read", x, 1, 2, 3)
	wantValues(t, "x+1 after the failure", plusOne(x), 2, 3, 4)
}

// TestFailureSparesOtherWork: a command buffer fails while Eval A waits
// to synchronize; Eval B's work, in a later command buffer that does not
// read what failed, synchronizes first and succeeds (before, B was handed
// A's failure), and A gets the failure.
func TestFailureSparesOtherWork(t *testing.T) {
	cfg := testConfig()
	cfg.commitOps = 1 // a command buffer per launch, committed at once
	h, g := useFakeHost(t, cfg)
	x, w := gpuArray(t, h, 1, 2), gpuArray(t, h, 10, 20)
	z := plusOne(x)
	p := newPause()
	y := p.after(z)
	g.setFailNext(timeout)
	errA := make(chan error)
	go func() { errA <- array.Eval(y) }()
	<-p.reached
	v := plusOne(w)
	if err := v.Eval(); err != nil {
		t.Errorf("Eval B, which does not read the failed work: %v", err)
	}
	wantValues(t, "w+1", v, 11, 21)
	close(p.release)
	wantFailure(t, "Eval A", <-errA, timeout)
}

// TestFailureFollowsReaders: a command buffer in flight with one that
// failed, reading what that one wrote, computed from garbage: what it
// wrote is marked failed too, though it ran; one that did not read it is
// not.
func TestFailureFollowsReaders(t *testing.T) {
	cfg := testConfig()
	cfg.commitOps = 1
	h, g := newFakeHost(t, cfg)
	x, z, y, w := devF32(t, h, 1), devZeros(t, h, 1), devZeros(t, h, 1), devZeros(t, h, 1)
	g.setFailNext(timeout)
	mustRun(t, h, kernelLaunch("add1", 1, rd(x), wr(z)), kernelLaunch("add1", 1, rd(z), wr(y)), kernelLaunch("add1", 1, rd(x), wr(w)))
	wantFailure(t, "synchronize", h.synchronize(), timeout)
	if n := len(g.cbs); n != 3 || g.cbs[0].fail == nil || g.cbs[1].fail != nil || g.cbs[2].fail != nil {
		t.Fatalf("%d command buffers, want three of which only the first fails", n)
	}
	wantFailure(t, "z, written by the failed command buffer", z.Err(), timeout)
	wantFailure(t, "y, computed from z", y.Err(), timeout)
	if err := w.Err(); err != nil {
		t.Errorf("w, computed from x alone, has failure %v", err)
	}
	wantF32(t, "w", w, 2)
}

// TestConcurrentEvalsShareFailure: rounds of two goroutines evaluating
// z+1 and z+2 at once, on a z whose command buffer fails every other
// round: both get the failure in a failing round, both the values in the
// others.
func TestConcurrentEvalsShareFailure(t *testing.T) {
	h, g := useFakeHost(t, testConfig())
	x := gpuArray(t, h, 1, 2, 3, 4)
	for round := range 40 {
		fail := round%2 == 0
		if fail {
			g.setFailNext(timeout)
		}
		z := plusOne(x)
		ys := []*array.Array{plusOne(z), plusOne(plusOne(z))}
		var wg sync.WaitGroup
		errs := make([]error, len(ys))
		start := make(chan struct{})
		for i, y := range ys {
			wg.Go(func() {
				<-start
				errs[i] = y.Eval()
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if fail {
				wantFailure(t, "a failing round's Eval", err, timeout)
				continue
			}
			if err != nil {
				t.Fatalf("round %d, Eval %d: %v", round, i, err)
			}
			wantValues(t, "x+1+1", ys[0], 3, 4, 5, 6)
			wantValues(t, "x+1+2", ys[1], 4, 5, 6, 7)
		}
	}
}
