//go:build !((linux || darwin) && (amd64 || arm64))

package distributed

import (
	"fmt"
	"runtime"
)

// Where purego cannot call C, no MPI library loads and the world has
// size 1.

func openLibrary(name string) (uintptr, error) {
	return 0, fmt.Errorf("%s: loading MPI is not supported on %s/%s", name, runtime.GOOS, runtime.GOARCH)
}

func symbol(uintptr, string) (uintptr, error) {
	return 0, fmt.Errorf("no symbols on %s/%s", runtime.GOOS, runtime.GOARCH)
}

func ccall(uintptr, ...uintptr) uintptr { panic("distributed: no MPI library is loaded") }
