package metal

// SetGridGroups lowers the most threadgroups the line-wise plans launch
// (reductions, softmax, scans, gathers), so that tests reach their
// kernels' grid-stride loops; it returns a function that restores it.
func SetGridGroups(n int) (restore func()) {
	old := gridGroups.Swap(int64(n))
	return func() { gridGroups.Store(old) }
}
