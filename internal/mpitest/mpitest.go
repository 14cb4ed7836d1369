//go:build unix

// Package mpitest runs a test binary as a job of several processes under
// Open MPI's mpirun on one machine, over loopback, for the tests of the
// packages that use package distributed: the test that launches the job
// and the tests its processes run live in the same binary.
package mpitest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// UnderMPI reports whether this process was started by mpirun.
func UnderMPI() bool { return os.Getenv("OMPI_COMM_WORLD_SIZE") != "" }

// Need returns mpirun's path for a test that launches a job. It skips the
// test in a process of a job (the job's launcher runs it) and where Open
// MPI is not installed, the one reason such tests may skip.
func Need(t testing.TB) string {
	t.Helper()
	if UnderMPI() {
		t.Skip("this process is a rank of a job; the job's launcher runs this test")
	}
	path, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skip("mpirun not found (Open MPI is not installed: apt-get install openmpi-bin)")
	}
	return path
}

// Args are mpirun's options for a job of np processes on this machine
// over loopback, which works in containers and as root. A process waiting
// in a collective yields its core rather than spin: with as many
// processes as cores, on a machine doing other work, spinning made jobs
// several times slower.
func Args(np int) []string {
	args := []string{"-np", strconv.Itoa(np), "--oversubscribe", "--bind-to", "none",
		"--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include", "lo", "--mca", "oob_tcp_if_include", "lo",
		"--mca", "mpi_yield_when_idle", "1"}
	if os.Geteuid() == 0 {
		args = append(args, "--allow-run-as-root")
	}
	return args
}

// Launch runs this test binary under mpirun with np processes, the
// environment extended by env and the given test flags, and kills the
// whole job if it outlasts timeout.
func Launch(mpirun string, np int, timeout time.Duration, env []string, flags ...string) (out string, err error, took time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	args := append(Args(np), os.Args[0])
	cmd := exec.CommandContext(ctx, mpirun, append(args, flags...)...)
	cmd.Env = append(os.Environ(), env...)
	// mpirun and its ranks share a process group, so a hung job dies whole.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	start := time.Now()
	b, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = fmt.Errorf("the job outlasted %v: %w", timeout, ctx.Err())
	}
	return string(b), err, time.Since(start)
}
