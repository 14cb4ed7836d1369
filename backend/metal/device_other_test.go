//go:build !darwin || !cgo

package metal

import (
	"runtime"
	"testing"

	"github.com/fathom-go/fathom/array"
)

// Without Metal every entry point of the package says why, and the
// scheduler sees the same reason once, prefixed by array.DeviceAvailable.
func TestUnavailable(t *testing.T) {
	want := "Metal is unavailable on " + runtime.GOOS + "/" + runtime.GOARCH + ": fathom's GPU backend needs "
	gpu := array.DefaultStream(array.GPU)
	_, errAlloc := Alloc(16)
	_, errExec := newExecutor(gpu)
	for name, err := range map[string]error{
		"Available":   Available(),
		"Run":         Run(gpu, nil),
		"Alloc":       errAlloc,
		"Synchronize": Synchronize(gpu),
		"newExecutor": errExec,
	} {
		wantErr(t, err, want)
		if e, ok := err.(*array.Error); ok && e.Op != "metal" {
			t.Errorf("%s: op %q, want metal", name, e.Op)
		}
	}
	if runtime.GOOS != "darwin" {
		wantErr(t, Available(), "macOS on Apple silicon (darwin, cgo)")
	}
	err := array.DeviceAvailable(array.GPU)
	if err == nil || err.Error() != "array.DeviceAvailable: "+Available().(*array.Error).Msg {
		t.Errorf("array.DeviceAvailable(GPU) = %v, want the package's reason once", err)
	}
	if err := array.SetDefaultDevice(array.GPU); err == nil {
		t.Error("SetDefaultDevice(GPU) succeeded without Metal")
	}
	if s := stats(); s != (memStats{}) {
		t.Errorf("stats() = %+v without a device", s)
	}
	clearCache()
	wantErr(t, Run(array.DefaultStream(array.CPU), nil), "metal.Run", "not on the GPU")
}
