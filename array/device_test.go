package array_test

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/fathom-go/fathom/array"
)

// The default device is resolved once per process, from FATHOM_DEVICE, so
// the tests of that variable run this test binary again in a subprocess:
// runDeviceChild runs TestDeviceChild there with FATHOM_DEVICE=value, and
// TestDeviceChild reports what the child saw on its output.

const childEnv = "FATHOM_TEST_DEVICE_CHILD"

func runDeviceChild(t *testing.T, value string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDeviceChild$", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"=1", array.EnvDevice+"="+value,
		// under -race, a child would otherwise wait a second before exiting
		"GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child with %s=%s: %v\n%s", array.EnvDevice, value, err, out)
	}
	return string(out)
}

// TestDeviceChild is the subprocess side of the FATHOM_DEVICE tests.
func TestDeviceChild(t *testing.T) {
	if os.Getenv(childEnv) != "1" {
		t.Skip("runs only as a subprocess of the FATHOM_DEVICE tests")
	}
	a := array.FromSlice([]float32{1, 2})
	t.Logf("device=%v", array.DefaultDevice())
	t.Logf("DeviceError=%v", array.DeviceError())
	t.Logf("Eval=%v", a.Eval())
	_, err := array.ToSlice[float32](a)
	t.Logf("ToSlice=%v", err)
}

// childLine returns the value the child logged for key.
func childLine(t *testing.T, out, key string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if _, v, ok := strings.Cut(l, key+"="); ok {
			return v
		}
	}
	t.Fatalf("child output has no %s:\n%s", key, out)
	return ""
}

func TestDeviceEnvCPU(t *testing.T) {
	out := runDeviceChild(t, "cpu")
	if d := childLine(t, out, "device"); d != "cpu" {
		t.Errorf("FATHOM_DEVICE=cpu: default device %s", d)
	}
	for _, k := range []string{"DeviceError", "Eval", "ToSlice"} {
		if v := childLine(t, out, k); v != "<nil>" {
			t.Errorf("FATHOM_DEVICE=cpu: %s = %s", k, v)
		}
	}
}

func TestDeviceEnvGPUWithoutMetal(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("Metal may be present on darwin")
	}
	out := runDeviceChild(t, "gpu")
	for _, k := range []string{"DeviceError", "Eval", "ToSlice"} {
		v := childLine(t, out, k)
		for _, want := range []string{"FATHOM_DEVICE=gpu", "Metal is unavailable", runtime.GOOS + "/" + runtime.GOARCH} {
			if !strings.Contains(v, want) {
				t.Errorf("FATHOM_DEVICE=gpu on %s: %s = %q, which does not say %q", runtime.GOOS, k, v, want)
			}
		}
	}
}

func TestDeviceEnvUnknown(t *testing.T) {
	out := runDeviceChild(t, "bogus")
	for _, k := range []string{"DeviceError", "Eval", "ToSlice"} {
		v := childLine(t, out, k)
		for _, want := range []string{`"bogus"`, "cpu", "gpu", "FATHOM_DEVICE"} {
			if !strings.Contains(v, want) {
				t.Errorf("FATHOM_DEVICE=bogus: %s = %q, which does not mention %s", k, v, want)
			}
		}
	}
	if d := childLine(t, out, "device"); d != "cpu" {
		t.Errorf("FATHOM_DEVICE=bogus: default device %s, want cpu (and every Eval failing)", d)
	}
}

func TestDefaultDeviceIsCPUWithoutMetal(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("Metal may be present on darwin")
	}
	if v := os.Getenv(array.EnvDevice); v != "" && v != "cpu" {
		t.Skipf("%s=%s in the environment", array.EnvDevice, v)
	}
	if d := array.DefaultDevice(); d != array.CPU {
		t.Errorf("DefaultDevice() = %v on %s, want cpu", d, runtime.GOOS)
	}
	if s := array.CurrentStream(); s != array.DefaultStream(array.CPU) {
		t.Errorf("CurrentStream() = %v", s)
	}
	if s := array.FromSlice([]int32{1}).Stream(); s.Device != array.CPU {
		t.Errorf("a new array records stream %v", s)
	}
	if err := array.DeviceAvailable(array.CPU); err != nil {
		t.Errorf("DeviceAvailable(cpu): %v", err)
	}
	// the empty value means "choose", like an unset variable
	if d := childLine(t, runDeviceChild(t, ""), "device"); d != "cpu" {
		t.Errorf("FATHOM_DEVICE= (empty): default device %s", d)
	}
}

func TestSetDefaultDeviceGPUWithoutMetal(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("Metal may be present on darwin")
	}
	before := array.DefaultDevice()
	err := array.SetDefaultDevice(array.GPU)
	wantError(t, err, "array.DeviceAvailable", "Metal is unavailable", runtime.GOOS)
	if d := array.DefaultDevice(); d != before {
		t.Errorf("a failed SetDefaultDevice changed the default to %v", d)
	}
	if err := array.SetDefaultDevice(array.CPU); err != nil {
		t.Errorf("SetDefaultDevice(cpu): %v", err)
	}
}

func TestDeviceAndStreamStrings(t *testing.T) {
	for _, c := range []struct {
		got  string
		want string
	}{
		{array.CPU.String(), "cpu"},
		{array.GPU.String(), "gpu"},
		{array.Device{Type: array.DeviceGPU, Index: 1}.String(), "gpu(1)"},
		{array.DefaultStream(array.CPU).String(), "Stream(cpu, 0)"},
		{array.Stream{Index: 3, Device: array.GPU}.String(), "Stream(gpu, 3)"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestNewStreamDistinct(t *testing.T) {
	const goroutines, each = 16, 50
	var mu sync.Mutex
	seen := map[array.Stream]bool{array.DefaultStream(array.CPU): true}
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				s := array.NewStream(array.CPU)
				mu.Lock()
				if seen[s] {
					t.Errorf("NewStream returned %v twice (or the default stream)", s)
				}
				seen[s] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != goroutines*each+1 {
		t.Errorf("%d distinct streams, want %d", len(seen)-1, goroutines*each)
	}
	if s := array.NewStream(array.GPU); s.Device != array.GPU || s == array.DefaultStream(array.GPU) {
		t.Errorf("NewStream(gpu) = %v", s)
	}
}
