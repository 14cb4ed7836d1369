module github.com/fathom-go/fathom

go 1.26
