module github.com/fathom-go/fathom

go 1.26

require gonum.org/v1/gonum v0.17.0

require (
	github.com/mmcloughlin/avo v0.5.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
