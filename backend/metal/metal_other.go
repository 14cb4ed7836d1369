//go:build !darwin || !cgo

package metal

import (
	"errors"
	"runtime"
)

// openHost reports why there is no Metal device in this build.
func openHost() (*host, error) {
	if runtime.GOOS == "darwin" {
		return nil, errors.New("fathom's GPU backend needs cgo, and this program was built with CGO_ENABLED=0")
	}
	return nil, errors.New("fathom's GPU backend needs macOS on Apple silicon (darwin, cgo)")
}
