package metal

import (
	"embed"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/fathom-go/fathom/array"
)

// The kernel sources. common.h is the prelude of every library: Metal
// compiles a library from one string and cannot include project files.
//
//go:embed kernels/*.metal kernels/common.h
var kernelFS embed.FS

var libraries = sync.OnceValues(func() (map[string]string, string) {
	common, err := kernelFS.ReadFile("kernels/common.h")
	if err != nil {
		panic(err) // the file is embedded: cannot happen
	}
	pre := "#line 1 \"common.h\"\n" + string(common)
	entries, err := kernelFS.ReadDir("kernels")
	if err != nil {
		panic(err)
	}
	libs := make(map[string]string)
	for _, e := range entries {
		name := e.Name()
		if path.Ext(name) != ".metal" {
			continue
		}
		src, err := kernelFS.ReadFile("kernels/" + name)
		if err != nil {
			panic(err)
		}
		libs[name] = withPrelude(pre, name, string(src))
	}
	return libs, pre
})

// withPrelude joins the prelude and a library body; #line keeps compiler
// messages pointing at the body's own file and line.
func withPrelude(pre, name, body string) string {
	var b strings.Builder
	b.Grow(len(pre) + len(body) + len(name) + 16)
	b.WriteString(pre)
	b.WriteString("#line 1 \"")
	b.WriteString(name)
	b.WriteString("\"\n")
	b.WriteString(body)
	return b.String()
}

// libraryNames returns the names of the embedded kernel libraries
// ("copy.metal", "unary.metal", ...), sorted.
func libraryNames() []string {
	libs, _ := libraries()
	names := make([]string, 0, len(libs))
	for n := range libs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// librarySource returns the MSL source of the whole embedded library
// name: the common prelude followed by the file. The host compiles it a
// unit at a time (libraryUnit); the harness and the tests take it whole.
func librarySource(name string) (string, error) {
	libs, _ := libraries()
	src, ok := libs[name]
	if !ok {
		return "", array.Errorf("metal.librarySource", "no embedded library %q", name)
	}
	return src, nil
}
