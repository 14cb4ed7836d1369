module github.com/fathom-go/fathom/tools/darwincheck

go 1.26
