package ktrace

import (
	"bytes"
	"encoding/json"
	"sync"
	"testing"
	"time"
)

type event struct {
	Name string         `json:"name"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`
	Dur  float64        `json:"dur"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Args map[string]any `json:"args"`
}

func parse(t *testing.T, b []byte) []event {
	t.Helper()
	var evs []event
	if err := json.Unmarshal(b, &evs); err != nil {
		t.Fatalf("not a JSON array of events: %v\n%s", err, b)
	}
	return evs
}

// TestOverlappingEventsGoOnSeparateLanes records events of one row that
// overlap, out of order: those that overlap get different thread ids, the
// others share the first, and the extra lanes are named after the row.
func TestOverlappingEventsGoOnSeparateLanes(t *testing.T) {
	var buf bytes.Buffer
	if err := Start(&buf, nil); err != nil {
		t.Fatal(err)
	}
	s := Current()
	for _, iv := range [][2]int64{{0, 10_000}, {2_000, 9_000}, {10_000, 11_500}, {9_500, 9_800}, {3_000, 4_000}} {
		s.Record(Event{Process: "cpu", Thread: "stream 0", Name: "k", Cat: "cpu", Start: iv[0], End: iv[1]})
	}
	if err := Stop(); err != nil {
		t.Fatal(err)
	}
	evs := parse(t, buf.Bytes())
	var tids []int
	names := map[int]string{}
	for _, e := range evs {
		switch {
		case e.Ph == "X":
			tids = append(tids, e.Tid)
		case e.Name == "thread_name":
			names[e.Tid] = e.Args["name"].(string)
		}
	}
	// lane 0: [0,10], [10,11.5]; lane 1: [2,9], [9.5,9.8]; lane 2: [3,4]
	want := []int{1, 2, 1, 2, 3}
	if len(tids) != len(want) {
		t.Fatalf("tids %v, want %v", tids, want)
	}
	for i := range want {
		if tids[i] != want[i] {
			t.Fatalf("tids %v, want %v", tids, want)
		}
	}
	if names[1] != "stream 0" || names[2] != "stream 0 (2)" || names[3] != "stream 0 (3)" {
		t.Errorf("thread names %v", names)
	}
	if e := evs[len(evs)-1]; e.Ts != 3 || e.Dur != 1 {
		t.Errorf("last event at %v µs for %v µs, want 3 and 1", e.Ts, e.Dur)
	}
}

func TestStringsAreEscaped(t *testing.T) {
	var buf bytes.Buffer
	if err := Start(&buf, nil); err != nil {
		t.Fatal(err)
	}
	odd := "quote \" backslash \\ newline \n tab \t bell \a é \xff"
	Current().Record(Event{Process: "p\"", Thread: "t\n", Name: odd, Start: 5, End: 3, Args: []Arg{String("s", odd), Int("n", -7)}})
	if err := Stop(); err != nil {
		t.Fatal(err)
	}
	evs := parse(t, buf.Bytes())
	var x event
	for _, e := range evs {
		if e.Ph == "X" {
			x = e
		}
	}
	want := "quote \" backslash \\ newline \n tab \t bell \a é \ufffd"
	if x.Name != want || x.Args["s"] != want || x.Args["n"] != float64(-7) {
		t.Errorf("got name %q, args %v", x.Name, x.Args)
	}
	if x.Dur != 0 {
		t.Errorf("an event that ends before it starts has duration %v, want 0", x.Dur)
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestUnstoppedTraceIsWrittenSoon: events reach the writer within
// flushDelay without Stop, as a JSON array that lacks only its closing
// bracket; a large burst is written at once.
func TestUnstoppedTraceIsWrittenSoon(t *testing.T) {
	var w lockedBuffer
	if err := Start(&w, nil); err != nil {
		t.Fatal(err)
	}
	defer Stop()
	s := Current()
	s.Record(Event{Process: "cpu", Thread: "stream 0", Name: "first", End: 1})
	if got := w.String(); got != "[\n" {
		t.Fatalf("written at once: %q, want just the opening bracket", got)
	}
	deadline := time.Now().Add(flushDelay + 5*time.Second)
	for w.String() == "[\n" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	parse(t, []byte(w.String()+"]"))
	before := len(w.String())
	for i := 0; len(w.String()) == before && i < 10_000; i++ {
		s.Record(Event{Process: "cpu", Thread: "stream 0", Name: "burst", Start: int64(i), End: int64(i)})
	}
	if len(w.String()) == before {
		t.Fatal("10,000 events were not written before the timer")
	}
	if evs := parse(t, []byte(w.String()+"]")); len(evs) < 100 {
		t.Errorf("%d events written", len(evs))
	}
}

// TestTimesBeforeTheStart: an event converted from another clock may
// start before the session; its time is written as a negative number.
func TestTimesBeforeTheStart(t *testing.T) {
	var buf bytes.Buffer
	if err := Start(&buf, nil); err != nil {
		t.Fatal(err)
	}
	Current().Record(Event{Process: "gpu", Thread: "command buffers", Name: "early", Start: -1_500, End: 500})
	if err := Stop(); err != nil {
		t.Fatal(err)
	}
	for _, e := range parse(t, buf.Bytes()) {
		if e.Ph == "X" && (e.Ts != -1.5 || e.Dur != 2) {
			t.Errorf("event at %v µs for %v µs, want -1.5 and 2", e.Ts, e.Dur)
		}
	}
}
