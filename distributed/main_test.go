//go:build unix

package distributed_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fathom-go/fathom/distributed"
	"github.com/fathom-go/fathom/internal/mpitest"
)

// world is the group the tests run on: size 1 under plain go test, the
// whole job when TestMPI runs this binary under mpirun. The TestRanks
// tests work out what each process must see from its rank and the size,
// so the same tests check both.
var world *distributed.Group

func TestMain(m *testing.M) {
	g, err := distributed.Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	world = g
	if dir := os.Getenv("FATHOM_TEST_KILL_DIR"); dir != "" && mpitest.UnderMPI() {
		killChild(dir)
	}
	code := m.Run()
	if err := distributed.Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

// TestMPI runs the TestRanks tests in jobs of 2 and 3 processes.
func TestMPI(t *testing.T) {
	mpirun := mpitest.Need(t)
	for _, np := range []int{2, 3} {
		t.Run(fmt.Sprintf("np=%d", np), func(t *testing.T) {
			out, err, took := mpitest.Launch(mpirun, np, 3*time.Minute, nil, "-test.run=^Test(Ranks|Strict)", "-test.v")
			if err != nil || !strings.Contains(out, "--- PASS: TestRanks") {
				t.Fatalf("mpirun -np %d: %v after %v\n%s", np, err, took, out)
			}
			t.Logf("mpirun -np %d: the TestRanks tests passed on every rank in %v", np, took.Round(time.Millisecond))
		})
	}
}

// TestMPIWithoutLibrary: under mpirun, a missing MPI library is an error
// on every rank of a job of two (a rank alone would compute something
// else), and a job of one falls back to the group of size 1.
func TestMPIWithoutLibrary(t *testing.T) {
	mpirun := mpitest.Need(t)
	env := []string{"FATHOM_MPI_LIBRARY=/nonexistent/libmpi.so"}
	out, err, _ := mpitest.Launch(mpirun, 2, time.Minute, env, "-test.run=^TestRanksSplit$")
	if err == nil || !strings.Contains(out, "MPI cannot start: no MPI library could be loaded") {
		t.Errorf("two ranks without the library: %v\n%s", err, out)
	}
	out, err, _ = mpitest.Launch(mpirun, 1, time.Minute, env, "-test.run=^TestRanksSplit$", "-test.v")
	if err != nil || !strings.Contains(out, "--- PASS: TestRanksSplit") {
		t.Errorf("one rank without the library: %v\n%s", err, out)
	}
}

// TestKillEndsJob is the fault test: one rank of three kills itself while
// the others wait in a collective for it. mpirun must end the job, with a
// non-zero status, within seconds, and no rank may outlive it.
func TestKillEndsJob(t *testing.T) {
	mpirun := mpitest.Need(t)
	dir := t.TempDir()
	out, err, took := mpitest.Launch(mpirun, 3, time.Minute, []string{"FATHOM_TEST_KILL_DIR=" + dir})
	if err == nil {
		t.Fatalf("the job exited with status 0 after a rank was killed\n%s", out)
	}
	if took > 30*time.Second {
		t.Errorf("the job took %v to end after a rank was killed", took)
	}
	t.Logf("the job ended in %v: %v", took.Round(time.Millisecond), err)
	for r := range 3 {
		b, err := os.ReadFile(fmt.Sprintf("%s/%d", dir, r))
		if err != nil {
			t.Fatalf("rank %d did not reach the collective: %v\n%s", r, err, out)
		}
		pid, _ := strconv.Atoi(string(b))
		deadline := time.Now().Add(10 * time.Second)
		for syscall.Kill(pid, 0) == nil {
			if time.Now().After(deadline) {
				t.Fatalf("rank %d (pid %d) outlived the job", r, pid)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// killChild is a rank of TestKillEndsJob's job: it records its pid, and
// rank 1 kills itself while the others wait for it in a collective.
func killChild(dir string) {
	must := func(err error) {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	must(os.WriteFile(fmt.Sprintf("%s/%d", dir, world.Rank()), []byte(strconv.Itoa(os.Getpid())), 0o644))
	// Every rank has written its pid once this sum is done.
	must(distributed.AllSum(ones(4), world).Eval())
	if world.Rank() == 1 {
		must(syscall.Kill(os.Getpid(), syscall.SIGKILL))
	}
	err := distributed.AllSum(ones(1<<20), world).Eval()
	fmt.Fprintf(os.Stderr, "the collective returned (%v) though rank 1 is dead\n", err)
	os.Exit(0)
}

// TestStrict: outside mpirun Strict says what is missing; under it, it
// returns the world.
func TestStrict(t *testing.T) {
	g, err := distributed.Init(distributed.Strict())
	if mpitest.UnderMPI() {
		if err != nil || g != world {
			t.Fatalf("under mpirun: %v, %v", g, err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), "not started by mpirun") {
		t.Fatalf("outside mpirun: got %v, %v; want an error naming mpirun", g, err)
	}
	if world.Size() != 1 || world.Rank() != 0 {
		t.Fatalf("the world outside mpirun has rank %d of %d", world.Rank(), world.Size())
	}
}
