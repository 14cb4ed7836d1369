//go:build fathom_mslharness

package mslharness

import (
	"github.com/fathom-go/fathom/backend/metal"
	"github.com/fathom-go/fathom/backend/metal/internal/mslcpu"
)

// Install makes the GPU device (array.GPU) available, running every
// dispatch on the CPU through the MSL harness. Call it before the GPU is
// first used, typically from TestMain; it returns an error if clang++ is
// missing or the GPU was already opened.
func Install() error {
	if err := mslcpu.Available(); err != nil {
		return err
	}
	return metal.UseExecutorForTests(&mslcpu.Executor{})
}
