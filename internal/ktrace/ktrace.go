// Package ktrace records kernel launches as Chrome trace events (the JSON
// array form of the Trace Event Format, which Perfetto and
// chrome://tracing open). Package array starts and stops the one session
// of the process (array.StartTrace, FATHOM_TRACE) and records every
// primitive it runs; the Metal backend adds the GPU's own times of its
// command buffers. When no session is open the only cost to a caller is
// Current, one atomic load.
package ktrace

import (
	"errors"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

var cur atomic.Pointer[Session]

// Current returns the open session, nil if none.
func Current() *Session { return cur.Load() }

// flushBytes bounds the events held in memory between writes; flushDelay
// bounds how long an event waits to be written, so a program that never
// stops its trace loses at most the last moment of it.
const (
	flushBytes = 64 << 10
	flushDelay = time.Second
)

// Session is one trace being written. Its methods are safe for concurrent
// use.
type Session struct {
	start time.Time

	mu      sync.Mutex
	w       io.Writer
	c       io.Closer
	buf     []byte
	events  int // events written after the opening bracket
	err     error
	stopped bool
	timer   *time.Timer
	armed   bool // timer will write the buffer
	pids    map[string]int
	tracks  map[trackKey]*track
	nextTID int
}

type trackKey struct{ process, thread string }

// track is a named row of the trace split into lanes: events that overlap
// in time (kernels run by concurrent Evals) go on separate lanes, since a
// viewer draws the events of one thread id as a stack that must nest.
type track struct {
	pid   int
	lanes []lane
}

type lane struct {
	tid int
	end int64 // end of its last event, ns
}

// Start opens the session of the process, writing to w; c, if not nil, is
// closed when the session stops. It fails if a session is open.
func Start(w io.Writer, c io.Closer) error {
	s := &Session{start: time.Now(), w: w, c: c, pids: map[string]int{}, tracks: map[trackKey]*track{}}
	s.buf = append(s.buf, "[\n"...)
	if !cur.CompareAndSwap(nil, s) {
		return errors.New("a kernel trace is already running")
	}
	s.mu.Lock()
	s.flushLocked()
	err := s.err
	s.mu.Unlock()
	if err != nil {
		cur.CompareAndSwap(s, nil)
		return err
	}
	return nil
}

// Stop closes the open session: it writes what is buffered and the
// closing bracket, closes the session's closer, and returns the first
// error met while writing. Without an open session it does nothing.
func Stop() error {
	s := cur.Swap(nil)
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	if s.timer != nil {
		s.timer.Stop()
	}
	s.buf = append(s.buf, "\n]\n"...)
	s.flushLocked()
	if s.c != nil {
		if err := s.c.Close(); err != nil && s.err == nil {
			s.err = err
		}
	}
	return s.err
}

// Now returns the time since the session started, in nanoseconds: the
// clock of every event's Start and End.
func (s *Session) Now() int64 { return int64(time.Since(s.start)) }

// Arg is one entry of an event's args: a string or an integer.
type Arg struct {
	Key   string
	Str   string
	Int   int64
	IsInt bool
}

// String returns a string Arg.
func String(key, v string) Arg { return Arg{Key: key, Str: v} }

// Int returns an integer Arg.
func Int(key string, v int64) Arg { return Arg{Key: key, Int: v, IsInt: true} }

// Event is one complete ("X") event. Process and Thread name the row it
// is drawn on ("cpu", "stream 0"); Start and End are on the session's
// clock (Now).
type Event struct {
	Process, Thread string
	Name, Cat       string
	Start, End      int64
	Args            []Arg
}

// Record adds an event to the trace. Events that arrive after the session
// stopped are dropped.
func (s *Session) Record(e Event) {
	if e.End < e.Start {
		e.End = e.Start
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || s.err != nil {
		return
	}
	pid, tid := s.laneLocked(e.Process, e.Thread, e.Start, e.End)
	b := s.sepLocked()
	b = append(b, `{"name":`...)
	b = appendString(b, e.Name)
	b = append(b, `,"cat":`...)
	b = appendString(b, e.Cat)
	b = append(b, `,"ph":"X","ts":`...)
	b = appendMicros(b, e.Start)
	b = append(b, `,"dur":`...)
	b = appendMicros(b, e.End-e.Start)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(pid), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, int64(tid), 10)
	if len(e.Args) > 0 {
		b = appendArgs(b, e.Args...)
	}
	s.buf = append(b, '}')
	s.scheduleLocked()
}

// appendArgs writes `,"args":{...}`.
func appendArgs(b []byte, args ...Arg) []byte {
	b = append(b, `,"args":{`...)
	for i, a := range args {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, a.Key)
		b = append(b, ':')
		if a.IsInt {
			b = strconv.AppendInt(b, a.Int, 10)
		} else {
			b = appendString(b, a.Str)
		}
	}
	return append(b, '}')
}

// laneLocked returns the pid and tid of the first lane of the track that
// is free from start on, adding a lane (and naming it in the trace) when
// none is. A lane's end only grows, and an event joins it only if it
// starts at or after that end, so no two events of a lane overlap
// whatever order they are recorded in.
func (s *Session) laneLocked(process, thread string, start, end int64) (int, int) {
	k := trackKey{process, thread}
	t := s.tracks[k]
	if t == nil {
		pid, ok := s.pids[process]
		if !ok {
			pid = len(s.pids) + 1
			s.pids[process] = pid
			s.metaLocked("process_name", pid, 0, String("name", process))
			s.metaLocked("process_sort_index", pid, 0, Int("sort_index", int64(pid)))
		}
		t = &track{pid: pid}
		s.tracks[k] = t
	}
	for i := range t.lanes {
		if t.lanes[i].end <= start {
			t.lanes[i].end = end
			return t.pid, t.lanes[i].tid
		}
	}
	s.nextTID++
	tid := s.nextTID
	name := thread
	if len(t.lanes) > 0 {
		name += " (" + strconv.Itoa(len(t.lanes)+1) + ")"
	}
	s.metaLocked("thread_name", t.pid, tid, String("name", name))
	s.metaLocked("thread_sort_index", t.pid, tid, Int("sort_index", int64(tid)))
	t.lanes = append(t.lanes, lane{tid: tid, end: end})
	return t.pid, tid
}

// metaLocked writes a metadata event of a process or thread: its name
// ("process_name", "thread_name") or the order of the rows
// ("process_sort_index", "thread_sort_index").
func (s *Session) metaLocked(kind string, pid, tid int, arg Arg) {
	b := s.sepLocked()
	b = append(b, `{"name":"`...)
	b = append(b, kind...)
	b = append(b, `","ph":"M","pid":`...)
	b = strconv.AppendInt(b, int64(pid), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, int64(tid), 10)
	b = appendArgs(b, arg)
	s.buf = append(b, '}')
}

// sepLocked returns the buffer with the separator before a new event.
// Events are separated, not terminated, by commas, so that a file whose
// writer never stopped lacks only the closing bracket, which the Trace
// Event Format allows.
func (s *Session) sepLocked() []byte {
	if s.events > 0 {
		s.buf = append(s.buf, ",\n"...)
	}
	s.events++
	return s.buf
}

// scheduleLocked writes the buffer once it is large, and otherwise makes
// sure it is written within flushDelay.
func (s *Session) scheduleLocked() {
	if len(s.buf) >= flushBytes {
		s.flushLocked()
		return
	}
	if s.armed {
		return
	}
	s.armed = true
	if s.timer == nil {
		s.timer = time.AfterFunc(flushDelay, s.flush)
		return
	}
	s.timer.Reset(flushDelay)
}

func (s *Session) flush() {
	s.mu.Lock()
	s.armed = false
	if !s.stopped {
		s.flushLocked()
	}
	s.mu.Unlock()
}

func (s *Session) flushLocked() {
	if len(s.buf) == 0 || s.err != nil {
		s.buf = s.buf[:0]
		return
	}
	if _, err := s.w.Write(s.buf); err != nil {
		s.err = err
	}
	s.buf = s.buf[:0]
}

// appendMicros writes ns as microseconds with nanosecond resolution.
func appendMicros(b []byte, ns int64) []byte {
	// GPU times converted from another clock may fall just before the
	// session's start.
	if ns < 0 {
		b = append(b, '-')
		ns = -ns
	}
	b = strconv.AppendInt(b, ns/1000, 10)
	frac := ns % 1000
	b = append(b, '.')
	b = append(b, byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
	return b
}

// appendString writes v as a JSON string.
func appendString(b []byte, v string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(v); {
		c := v[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
			i++
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
			i++
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, n := utf8.DecodeRuneInString(v[i:])
			if r == utf8.RuneError && n == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, v[i:i+n]...)
			}
			i += n
		}
	}
	return append(b, '"')
}
