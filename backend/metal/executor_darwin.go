//go:build darwin && cgo

package metal

// The per-dispatch path: the command queue (cmdqueue.go) decides batching,
// barriers and lifetimes on every platform; here each of its requests is
// one call into the Objective-C shim. A dispatch is one C call that binds
// the pipeline, buffers and parameters and dispatches the grid, instead of
// a darwinkit message (reflection and libffi) per argument.

func (m *mtlDriver) newCommandBuffer() (cmdBuf, error) {
	cb, err := shimNewCommandBuffer(m.queue.Ptr())
	if err != nil {
		return cmdBuf{}, err
	}
	return cb, nil
}

func (m *mtlDriver) encode(cb cmdBuf, d *dispatch) { shimEncode(cb.enc, d) }

func (m *mtlDriver) commit(cb cmdBuf) { shimCommit(cb) }

func (m *mtlDriver) wait(cb cmdBuf) error { return shimWait(cb) }

func (m *mtlDriver) poll(cb cmdBuf) (bool, error) { return shimPoll(cb) }

func (m *mtlDriver) release(cb cmdBuf) { releaseHandle(cb.cb) }

func (m *mtlDriver) gpuTimes(cb cmdBuf) (start, end, now int64, ok bool) {
	return shimCommandBufferTimes(cb)
}
