package mslcpu

// syntax.go: the syntax-only compile of MSL libraries, in which device,
// constant and threadgroup are distinct clang address spaces (see
// msl_compat.h, MSL_SYNTAX_ONLY). The runtime mode erases address spaces,
// so a device pointer passed where a constant one is expected compiles and
// runs there; Metal rejects it, and so does this mode.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// syntaxFlags are the flags of the syntax-only compile. -fno-exceptions
// and -fno-rtti because Metal has neither; -Werror=vla-extension (and
// -Werror=vla, which newer clang also needs) because Metal has no
// variable-length arrays; half is clang's __fp16 where the
// compiler has no _Float16, which needs half arguments and returns
// allowed (older clang only: the probe drops the flag if unknown).
var syntaxFlags = sync.OnceValue(func() []string {
	flags := []string{"-std=c++17", "-fsyntax-only", "-fno-exceptions", "-fno-rtti", "-Werror=vla-extension", "-Werror=vla",
		"-flax-vector-conversions=none", "-Wno-unused-function", "-DMSL_SYNTAX_ONLY=1"}
	half := []string{"-Xclang", "-fallow-half-arguments-and-returns"}
	cmd := exec.Command(cxx, append(append([]string{"-x", "c++"}, half...), "-fsyntax-only", "-")...)
	cmd.Stdin = strings.NewReader("typedef __fp16 h;\nh f(h x) { return x; }\n")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "unknown argument") {
		flags = append(flags, half...)
	}
	return flags
})

// syntaxDriver compiles the libraries of libs.inc in the syntax-only mode;
// double is poisoned after the header, so any use of it in a library is
// an error.
const syntaxDriver = `#include "msl_compat.h"
#pragma GCC poison double
#include "libs.inc"
#include "msl_end.h"
`

// writeLibs writes libs and their libs.inc (each library in its own
// namespace, its file named after it) into dir.
func writeLibs(dir string, libs []Library) error {
	var inc strings.Builder
	for i, l := range libs {
		// The file is named after the library, so compiler messages say
		// "unary.metal:12:3" (the sources carry #line directives too).
		name := fmt.Sprintf("%d-%s", i, unsafeName.ReplaceAllString(l.Name, "_"))
		if !strings.HasSuffix(name, ".metal") {
			name += ".metal"
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(l.Source), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(&inc, "namespace mslcpu_lib%d {\nconstexpr int msl_lib_id = %d;\n#include %q\n}\n", i, i, name)
	}
	return os.WriteFile(filepath.Join(dir, "libs.inc"), []byte(inc.String()), 0o644)
}

// syntaxCheck runs the syntax-only compile over the libraries written to
// dir by writeLibs.
func syntaxCheck(rt, dir string, libs []Library) error {
	if err := os.WriteFile(filepath.Join(dir, "syntax.cpp"), []byte(syntaxDriver), 0o644); err != nil {
		return err
	}
	args := append(append([]string{}, syntaxFlags()...), "-I", filepath.Join(rt, "include"), "-I", rt, "-I", dir,
		filepath.Join(dir, "syntax.cpp"))
	var stderr bytes.Buffer
	cmd := exec.Command(cxx, args...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		names := make([]string, len(libs))
		for i, l := range libs {
			names[i] = l.Name
		}
		return fmt.Errorf("mslcpu: %s would not compile on Metal (syntax-only compile: Metal's address spaces, no double, no variable-length arrays, no 64-bit min or max): %v\n%s",
			strings.Join(names, ", "), err, firstLines(stderr.String(), 40))
	}
	return nil
}

// SyntaxCheck compiles libs together in msl_compat.h's syntax-only mode:
// device, constant and threadgroup are distinct address spaces, double is
// an error, and so are variable-length arrays. The result is cached (in
// MSL_CACHE_DIR) by the libraries' sources. Prepare and Run check every
// library they compile this way too.
func SyntaxCheck(libs ...Library) error {
	if err := Available(); err != nil {
		return err
	}
	rt, err := runtimeDir()
	if err != nil {
		return err
	}
	h := sha256.New()
	fmt.Fprintf(h, "syntax\x00%s\x00%q\x00%s\x00", cxx, syntaxFlags(), runtimeHash())
	for _, l := range libs {
		fmt.Fprintf(h, "%d:%s\x00%d:%s\x00", len(l.Name), l.Name, len(l.Source), l.Source)
	}
	ok := filepath.Join(cacheDir(), "syntax-"+hex.EncodeToString(h.Sum(nil)[:12])+".ok")
	if _, err := os.Stat(ok); err == nil {
		return nil
	}
	tmp, err := os.MkdirTemp(cacheDir(), "syntax-tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := writeLibs(tmp, libs); err != nil {
		return err
	}
	if err := syntaxCheck(rt, tmp, libs); err != nil {
		return err
	}
	return os.WriteFile(ok, nil, 0o644)
}
