package ops

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEveryCPUKernelHasAGPUKernel reads the package's source and checks
// that every primitive with a CPU kernel (evalCPU) has a GPU one (evalGPU),
// so no operation is left without a Metal path.
func TestEveryCPUKernelHasAGPUKernel(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	methods := map[string][]string{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil {
				continue
			}
			typ := fn.Recv.List[0].Type
			if st, ok := typ.(*ast.StarExpr); ok {
				typ = st.X
			}
			if id, ok := typ.(*ast.Ident); ok {
				methods[fn.Name.Name] = append(methods[fn.Name.Name], id.Name)
			}
		}
	}
	if len(methods["evalCPU"]) == 0 {
		t.Fatal("found no evalCPU methods")
	}
	for _, typ := range methods["evalCPU"] {
		if !slices.Contains(methods["evalGPU"], typ) {
			t.Errorf("%s has a CPU kernel but no GPU kernel", typ)
		}
	}
}
