// Command peer-go is the Go benchmark peer of spindle-bench: every workload
// of docs/bench-catalogue.md written with goroutines, channels, select and
// sync.WaitGroup, speaking the peer protocol of peers/common/src/lib.rs:
//
//	peer-go list
//	peer-go run <workload> --size N --workers W
//	peer-go serve-echo --workers W      (echo.go)
//	peer-go serve-http --workers W      (http.go)
//
// `run` prints exactly one line
//
//	SPINDLE-BENCH workload=<name> peer=go size=<N> workers=<W> result=<R> ops=<O> ns=<T> [key=value ...]
//
// and exits 0; an unknown workload or bad arguments exit 2, a row Go cannot
// express (`unsupported` in `list`) exits 3. GOMAXPROCS is set
// to W before the clock starts; the clock covers the workload alone.
package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

const peerName = "go"

type request struct {
	workload string
	size     uint64
	workers  int
}

// parseArgs mirrors the Rust peers' parser: `list`, or `run W --size N --workers W`.
func parseArgs(args []string) (list bool, req request, err error) {
	if len(args) == 0 {
		return false, req, errors.New("missing command")
	}
	switch args[0] {
	case "list":
		return true, req, nil
	case "run":
	default:
		return false, req, fmt.Errorf("unknown command `%s`", args[0])
	}
	if len(args) < 2 || strings.HasPrefix(args[1], "--") {
		return false, req, errors.New("`run` needs a workload name")
	}
	req.workload = args[1]
	var haveSize, haveWorkers bool
	rest := args[2:]
	for len(rest) > 0 {
		flag := rest[0]
		if len(rest) < 2 {
			return false, req, fmt.Errorf("flag `%s` needs a value", flag)
		}
		value := rest[1]
		rest = rest[2:]
		v, perr := strconv.ParseUint(value, 10, 64)
		if perr != nil {
			return false, req, fmt.Errorf("`%s %s`: not a non-negative integer", flag, value)
		}
		switch flag {
		case "--size":
			req.size, haveSize = v, true
		case "--workers":
			if v == 0 {
				return false, req, errors.New("`--workers 0`: need at least one")
			}
			req.workers, haveWorkers = int(v), true
		default:
			return false, req, fmt.Errorf("unknown flag `%s`", flag)
		}
	}
	if !haveSize {
		return false, req, errors.New("`run` needs --size")
	}
	if !haveWorkers {
		return false, req, errors.New("`run` needs --workers")
	}
	return false, req, nil
}

// resultLine formats the one result line of the protocol.
func resultLine(req request, o outcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "SPINDLE-BENCH workload=%s peer=%s size=%d workers=%d result=%s ops=%d ns=%d",
		req.workload, peerName, req.size, req.workers, o.result, ops(req.workload, req.size, req.workers),
		o.elapsed.Nanoseconds())
	for _, kv := range extra(req.workload, req.size) {
		fmt.Fprintf(&b, " %s=%s", kv.key, kv.value)
	}
	for _, kv := range o.extra {
		fmt.Fprintf(&b, " %s=%s", kv.key, kv.value)
	}
	return b.String()
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve-echo" {
		serveEcho(os.Args[1:])
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "serve-http" {
		serveHTTP(os.Args[1:])
		return
	}
	list, req, err := parseArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\nusage: <peer> list | <peer> run <workload> --size N --workers W\n", err)
		os.Exit(2)
	}
	if list {
		for _, w := range workloads {
			if why, no := unsupported[w]; no {
				fmt.Printf("unsupported %s %s\n", w, why)
			} else {
				fmt.Printf("workload %s\n", w)
			}
		}
		return
	}
	if why, no := unsupported[req.workload]; no {
		fmt.Fprintf(os.Stderr, "unsupported %s: %s\n", req.workload, why)
		os.Exit(3)
	}
	o, err := run(req.workload, req.size, req.workers)
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(2)
	}
	fmt.Println(resultLine(req, o))
}
