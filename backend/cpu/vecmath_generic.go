//go:build !amd64 || noasm

package cpu

// asmImpls returns no kernel sets: this build has no assembly, and the
// vectorised functions run the pure-Go fallback.
func asmImpls() []vecImpl { return nil }
