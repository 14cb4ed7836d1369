// Package mslharness lets tests outside backend/metal run the GPU device
// on the CPU, through the MSL harness (backend/metal/internal/mslcpu,
// which needs clang++). Its API exists only in builds with the
// fathom_mslharness tag, so programs built without it carry none of it:
//
//	go test -tags fathom_mslharness ./ops/...
package mslharness
