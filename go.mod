module github.com/fathom-go/fathom

go 1.26

require (
	github.com/google/go-cmp v0.7.0
	github.com/mmcloughlin/avo v0.5.0
	github.com/progrium/darwinkit v0.5.0
	golang.org/x/sys v0.30.0
	gonum.org/v1/gonum v0.17.0
)

require (
	golang.org/x/mod v0.23.0 // indirect
	golang.org/x/sync v0.12.0 // indirect
	golang.org/x/tools v0.30.0 // indirect
)
