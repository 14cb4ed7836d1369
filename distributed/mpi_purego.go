//go:build (linux || darwin) && (amd64 || arm64)

package distributed

import "github.com/ebitengine/purego"

// openLibrary loads a shared library with its symbols global: Open MPI
// loads plugins of its own that look for libmpi's symbols.
func openLibrary(name string) (uintptr, error) {
	return purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
}

func symbol(lib uintptr, name string) (uintptr, error) { return purego.Dlsym(lib, name) }

// ccall calls the C function fn. Pointers passed as uintptr(unsafe.Pointer(p))
// in the call's arguments stay valid until it returns (uintptrescapes).
//
//go:uintptrescapes
func ccall(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}
