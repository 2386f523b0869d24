// Command pqbench-go-worker is pqbench's stack worker for Go: it serves the standard
// library's cryptography (crypto/mlkem, crypto/ecdh, crypto/ed25519, crypto/ecdsa) and, where
// the standard library has no algorithm, a pinned Go library (filippo.io/mldsa for ML-DSA,
// Cloudflare's CIRCL for ML-KEM-512), over pqbench's stack worker protocol version 1
// (docs/stacks.md): one JSON object per line on stdin and stdout, a hello first, exactly
// one reply per request, exit 0 on quit or end of input. Nothing but protocol lines is
// written to stdout; diagnostics go to stderr.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
)

// protocolVersion is the version of the worker protocol this program speaks.
const protocolVersion = 1

// maxLine is the protocol's longest line, its newline included. A longer request is read
// to its end and refused.
const maxLine = 1 << 20

func init() {
	// Every request, timed ones included, runs on the main goroutine; locking it to its OS
	// thread makes CLOCK_THREAD_CPUTIME_ID the CPU time of the goroutine doing the work.
	runtime.LockOSThread()
}

func main() {
	w := newWorker()
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	send := func(reply any) {
		line, err := json.Marshal(reply)
		if err != nil {
			line, _ = json.Marshal(errorReply(fmt.Sprintf("cannot encode the reply: %v", err)))
		}
		out.Write(line)
		out.WriteByte('\n')
		if err := out.Flush(); err != nil {
			// The controller is gone: nobody is left to answer.
			os.Exit(0)
		}
	}
	send(w.hello())
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	for {
		line, err := readLine(in)
		if errors.Is(err, io.EOF) {
			return
		}
		var reply any
		if errors.Is(err, errLineTooLong) {
			reply = errorReply(fmt.Sprintf("request line longer than %d bytes", maxLine))
		} else if err != nil {
			fmt.Fprintf(os.Stderr, "pqbench-go-worker: reading stdin: %v\n", err)
			return
		} else {
			var quit bool
			reply, quit = w.handleLine(line)
			if quit {
				return
			}
		}
		send(reply)
	}
}

var errLineTooLong = errors.New("line too long")

// readLine returns the next line without its newline. A line longer than maxLine is read to
// its end (so the next request starts in the right place) and reported as errLineTooLong.
// A last line without a newline still counts; io.EOF means no line was left.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	tooLong := false
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > maxLine {
				tooLong = true
				line = nil
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case err == nil:
			if tooLong {
				return nil, errLineTooLong
			}
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if tooLong {
				return nil, errLineTooLong
			}
			if len(line) == 0 {
				return nil, io.EOF
			}
			return line, nil
		default:
			return nil, err
		}
	}
}

func errorReply(message string) map[string]any {
	return map[string]any{"type": "error", "message": message}
}

func notOffered(reason string) map[string]any {
	return map[string]any{"type": "problem", "kind": "not_offered", "reason": reason}
}
