package main

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// A sign or verify row rotates through messageCount distinct random messages of
// messageSize bytes.
const (
	messageCount = 64
	messageSize  = 32
)

// targetBatch: a batch shorter than this doubles, so the clock is read about once per half
// millisecond however fast the operation (pqbench's own loops do the same).
const targetBatch = 500 * time.Microsecond

// maxSeconds bounds one round (the protocol's 0 < S <= 600).
const maxSeconds = 600

// operation is one timed call. It returns a byte of its result, which the loop folds into
// a sink so the work cannot be elided, or an error that ends the round.
type operation func() (byte, error)

// row is a prepared operation: everything it needs was made outside the clock.
type row struct {
	name       json.RawMessage
	call       operation
	sizes      map[string]int
	attributes map[string]any
}

// sink receives the folded result bytes of every round.
var sink byte

func (w *worker) prepare(a *algorithm, req *request) (map[string]any, error) {
	name, err := rowName(req.Row)
	if err != nil {
		return nil, err
	}
	if req.Operation == nil {
		return nil, errors.New(`request has no "operation"`)
	}
	op := *req.Operation
	if !slices.Contains(operationsOf[a.kind], op) {
		for _, ops := range operationsOf {
			if slices.Contains(ops, op) {
				return nil, notOfferedf("%s has no %s operation", a.name, op)
			}
		}
		return nil, fmt.Errorf("unknown operation %s", quoted(op))
	}
	r, err := prepareRow(a, op)
	if err != nil {
		return nil, fmt.Errorf("preparing %s %s: %v", a.name, op, err)
	}
	r.name = name
	w.rows[string(name)] = r
	return map[string]any{"type": "prepared", "row": name, "sizes": r.sizes, "attributes": r.attributes}, nil
}

// rowName is the controller's row name, a JSON string or integer, compacted so that equal
// names are equal keys.
func rowName(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 {
		return nil, errors.New(`request has no "row"`)
	}
	var s string
	var n json.Number
	if json.Unmarshal(raw, &s) != nil && json.Unmarshal(raw, &n) != nil {
		return nil, errors.New(`"row" must be a string or a number`)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return nil, err
	}
	return compact.Bytes(), nil
}

// prepareRow makes the keys, ciphertext, messages and signatures of one operation and
// checks once, outside the clock, that the operation works on them.
func prepareRow(a *algorithm, op string) (*row, error) {
	r := &row{sizes: a.sizes, attributes: map[string]any{}}
	if op == "keygen" {
		r.attributes["key_form"] = "object" // the key the timed call makes
		r.call = func() (byte, error) {
			_, public, err := a.keygen(nil)
			if err != nil {
				return 0, err
			}
			return public[0], nil
		}
		return r, nil
	}
	key, public, err := a.keygen(nil)
	if err != nil {
		return nil, err
	}
	switch op {
	case "encaps":
		r.attributes["public_key_form"] = "encoded"
		r.call = func() (byte, error) {
			ct, shared, err := a.encaps(public, nil)
			if err != nil {
				return 0, err
			}
			return ct[0] ^ shared[0], nil
		}
	case "decaps":
		r.attributes["key_form"] = "object"
		ct, shared, err := a.encaps(public, nil)
		if err != nil {
			return nil, err
		}
		got, err := a.decaps(key, ct)
		if err != nil || !bytes.Equal(got, shared) {
			return nil, errors.New("decapsulation did not recover the encapsulated secret")
		}
		r.call = func() (byte, error) {
			shared, err := a.decaps(key, ct)
			if err != nil {
				return 0, err
			}
			return shared[0], nil
		}
	case "sign", "verify":
		r.attributes["signing"] = a.signing
		r.attributes["messages"] = messageCount
		r.sizes = maps.Clone(a.sizes)
		r.sizes["message"] = messageSize
		messages := make([][]byte, messageCount)
		signatures := make([][]byte, messageCount)
		for i := range messages {
			messages[i] = make([]byte, messageSize)
			if _, err := rand.Read(messages[i]); err != nil {
				return nil, err
			}
			if signatures[i], err = a.sign(key, messages[i], nil, false); err != nil {
				return nil, err
			}
			if ok, err := a.verify(public, messages[i], nil, signatures[i]); err != nil || !ok {
				return nil, errors.New("a fresh signature did not verify")
			}
		}
		i := 0
		if op == "sign" {
			r.attributes["key_form"] = "object"
			r.call = func() (byte, error) {
				sig, err := a.sign(key, messages[i], nil, false)
				i = (i + 1) % messageCount
				if err != nil {
					return 0, err
				}
				return sig[len(sig)-1], nil
			}
		} else {
			r.attributes["public_key_form"] = "encoded"
			r.call = func() (byte, error) {
				ok, err := a.verify(public, messages[i], nil, signatures[i])
				i = (i + 1) % messageCount
				if err != nil {
					return 0, err
				}
				if !ok {
					return 0, errors.New("a prepared signature did not verify")
				}
				return 1, nil
			}
		}
	case "derive":
		r.attributes["key_form"] = "object"
		r.attributes["public_key_form"] = "encoded"
		peerKey, peer, err := a.keygen(nil)
		if err != nil {
			return nil, err
		}
		ours, err1 := a.derive(key, peer)
		theirs, err2 := a.derive(peerKey, public)
		if err1 != nil || err2 != nil || !bytes.Equal(ours, theirs) {
			return nil, errors.New("the two sides did not derive the same secret")
		}
		r.call = func() (byte, error) {
			shared, err := a.derive(key, peer)
			if err != nil {
				return 0, err
			}
			return shared[0], nil
		}
	}
	return r, nil
}

func (w *worker) run(req *request) (map[string]any, error) {
	name, err := rowName(req.Row)
	if err != nil {
		return nil, err
	}
	r, ok := w.rows[string(name)]
	if !ok {
		return nil, fmt.Errorf("no prepared row %s", name)
	}
	if req.Seconds == nil {
		return nil, errors.New(`request has no "seconds"`)
	}
	seconds := *req.Seconds
	if !(seconds > 0 && seconds <= maxSeconds) {
		return nil, fmt.Errorf(`"seconds" must be above 0 and at most %d`, maxSeconds)
	}
	ops, wall, thread, process, err := timeRound(r.call, seconds)
	if err != nil {
		return nil, fmt.Errorf("the operation failed while timed: %v", err)
	}
	return map[string]any{"type": "round", "row": r.name, "ops": ops, "wall_ns": wall,
		"thread_cpu_ns": thread, "process_cpu_ns": process}, nil
}

// timeRound calls op for at least `seconds` of monotonic wall time, in batches that double
// until one lasts targetBatch, reading the clock once per batch. The CPU clocks are read
// just outside the wall window, nested (process, thread, wall ... wall, thread, process), so
// the process window contains the thread window: thread_cpu_ns never exceeds process_cpu_ns.
func timeRound(op operation, seconds float64) (ops, wall, thread, process int64, err error) {
	budget := max(time.Duration(seconds*1e9), 1)
	var folded byte
	batch := int64(1)
	processStart := cpuClock(unix.CLOCK_PROCESS_CPUTIME_ID)
	threadStart := cpuClock(unix.CLOCK_THREAD_CPUTIME_ID)
	start := time.Now()
	now := start
	for now.Sub(start) < budget {
		batchStart := now
		for range batch {
			b, err := op()
			if err != nil {
				return 0, 0, 0, 0, err
			}
			folded ^= b
		}
		ops += batch
		now = time.Now()
		if now.Sub(batchStart) < targetBatch {
			batch *= 2
		}
	}
	wall = now.Sub(start).Nanoseconds()
	thread = cpuClock(unix.CLOCK_THREAD_CPUTIME_ID) - threadStart
	process = cpuClock(unix.CLOCK_PROCESS_CPUTIME_ID) - processStart
	sink ^= folded
	return ops, wall, thread, process, nil
}

// cpuClock reads a CPU-time clock in nanoseconds (clock_gettime(2)).
func cpuClock(id int32) int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(id, &ts); err != nil {
		panic(fmt.Sprintf("clock_gettime(%d): %v", id, err))
	}
	return ts.Nano()
}
