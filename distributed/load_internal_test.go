package distributed

import (
	"runtime"
	"strings"
	"testing"
)

// TestLoadMPIErrors: a library that is missing, or is not Open MPI, is an
// error that says so.
func TestLoadMPIErrors(t *testing.T) {
	if _, err := loadMPI("/nonexistent/libmpi.so"); err == nil || !strings.Contains(err.Error(), "no MPI library could be loaded") {
		t.Errorf("missing library: got %v", err)
	}
	if runtime.GOOS != "linux" {
		return
	}
	if _, err := loadMPI("libc.so.6"); err == nil || !strings.Contains(err.Error(), "is not Open MPI") {
		t.Errorf("libc: got %v", err)
	}
}
