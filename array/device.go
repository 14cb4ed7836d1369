package array

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
)

// DeviceType says which kind of processor a device is.
type DeviceType uint8

const (
	DeviceCPU DeviceType = iota
	DeviceGPU
)

// Device is a processor that arrays are computed on.
type Device struct {
	Type  DeviceType
	Index int
}

var (
	// CPU is the host processor.
	CPU = Device{Type: DeviceCPU}
	// GPU is the Metal GPU of an Apple silicon Mac.
	GPU = Device{Type: DeviceGPU}
)

func (d Device) String() string {
	name := "cpu"
	if d.Type == DeviceGPU {
		name = "gpu"
	}
	if d.Index != 0 {
		return fmt.Sprintf("%s(%d)", name, d.Index)
	}
	return name
}

// Stream is an ordered queue of work on one device. Every node records the
// stream it runs on.
type Stream struct {
	Index  int
	Device Device
}

func (s Stream) String() string { return fmt.Sprintf("Stream(%v, %d)", s.Device, s.Index) }

// Backend is what a device's kernel library tells the scheduler. The CPU
// needs none; the Metal backend registers itself.
type Backend interface {
	// Available returns nil when the device can run work, or an error that
	// says why not (platform, build).
	Available() error
	// Synchronize waits until all work queued on s has finished.
	Synchronize(s Stream) error
}

var (
	backendMu sync.RWMutex
	backends  = map[DeviceType]Backend{}
)

// RegisterBackend installs the backend for a device type. Backends call it
// from their init functions.
func RegisterBackend(t DeviceType, b Backend) {
	backendMu.Lock()
	backends[t] = b
	backendMu.Unlock()
}

func backendFor(t DeviceType) Backend {
	backendMu.RLock()
	defer backendMu.RUnlock()
	return backends[t]
}

// DeviceAvailable returns nil if work can run on d, or an error that says
// why it cannot.
func DeviceAvailable(d Device) error {
	if d.Type == DeviceCPU {
		return nil
	}
	b := backendFor(d.Type)
	if b == nil {
		why := "fathom's GPU backend needs macOS with Metal"
		if runtime.GOOS == "darwin" {
			why = "no GPU backend is linked into this program (import github.com/fathom-go/fathom/ops)"
		}
		return Errorf("array.DeviceAvailable", "Metal is unavailable on %s/%s: %s", runtime.GOOS, runtime.GOARCH, why)
	}
	if err := b.Available(); err != nil {
		return Errorf("array.DeviceAvailable", "Metal is unavailable on %s/%s: %v", runtime.GOOS, runtime.GOARCH, err)
	}
	return nil
}

var (
	deviceOnce    sync.Once
	defaultDevice atomic.Value // Device
	deviceErr     error        // from FATHOM_DEVICE; set once under deviceOnce
	nextStream    atomic.Int64
)

// EnvDevice is the environment variable that picks the default device.
const EnvDevice = "FATHOM_DEVICE"

func initDevice() {
	deviceOnce.Do(func() {
		v, set := os.LookupEnv(EnvDevice)
		d := CPU
		switch {
		case !set || v == "":
			if DeviceAvailable(GPU) == nil {
				d = GPU
			}
		case v == "cpu":
		case v == "gpu":
			d = GPU
			if err := DeviceAvailable(GPU); err != nil {
				deviceErr = Errorf("array", "%s=gpu: %s", EnvDevice, err.(*Error).Msg)
			}
		default:
			deviceErr = Errorf("array", "%s=%q is not a device; valid values are cpu and gpu", EnvDevice, v)
		}
		defaultDevice.Store(d)
	})
}

// DeviceError returns the error in FATHOM_DEVICE, if any: an unknown value,
// or gpu where Metal is unavailable. Every Eval returns it too, so a bad
// setting never falls back silently to another device.
func DeviceError() error {
	initDevice()
	return deviceErr
}

// DefaultDevice returns the device new operations run on: FATHOM_DEVICE if
// set, else the GPU where Metal is available and the CPU elsewhere.
func DefaultDevice() Device {
	initDevice()
	return defaultDevice.Load().(Device)
}

// SetDefaultDevice makes d the device new operations run on. It returns an
// error, and changes nothing, if d cannot run work here.
func SetDefaultDevice(d Device) error {
	initDevice()
	if err := DeviceAvailable(d); err != nil {
		return err
	}
	defaultDevice.Store(d)
	return nil
}

// DefaultStream returns the default stream of d (index 0).
func DefaultStream(d Device) Stream { return Stream{Device: d} }

// CurrentStream returns the default stream of the default device, where
// operations record their work unless told otherwise.
func CurrentStream() Stream { return DefaultStream(DefaultDevice()) }

// NewStream returns a new stream on d, distinct from every other.
func NewStream(d Device) Stream {
	return Stream{Index: int(nextStream.Add(1)), Device: d}
}
