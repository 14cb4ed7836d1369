//go:build fathom_mslharness

package mslharness

import (
	"fmt"
	"os"
	"testing"

	"github.com/fathom-go/fathom/array"
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

// Main is a package's TestMain under the harness: it installs it, keeps
// the CPU the default device (the tests that mean the GPU choose it), runs
// the tests and exits with their status. A harness that cannot be
// installed fails the run rather than skipping the GPU's tests.
func Main(m *testing.M) {
	if err := Install(); err != nil {
		fmt.Fprintln(os.Stderr, "installing the MSL harness:", err)
		os.Exit(1)
	}
	if err := array.SetDefaultDevice(array.CPU); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
