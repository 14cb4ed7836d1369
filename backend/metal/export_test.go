package metal

// SetMaxGridDim lowers the largest grid dimension plans use, so tests reach
// the 2-D grids of arrays with more than 2^32 elements; it returns a
// function that restores the limit.
func SetMaxGridDim(n int) (restore func()) {
	old := maxGridDim.Swap(int64(n))
	return func() { maxGridDim.Store(old) }
}

// Libraries and LibrarySource give the tests of package metal_test the
// embedded libraries, which the harness runs from their sources.
var (
	Libraries     = libraryNames
	LibrarySource = librarySource
)
