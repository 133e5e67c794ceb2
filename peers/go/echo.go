package main

// The echo-server mode of the peer protocol (peers/common/src/echo.rs), for
// `spindle-bench echo`:
//
//	peer-go serve-echo --workers W
//
// binds 127.0.0.1:0, prints `SPINDLE-BENCH-ECHO port=<port>`, serves echo
// with a goroutine per connection (TCP_NODELAY is Go's default), and exits 0
// when stdin reaches end of file.

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
)

// echoBuf is each connection's read buffer, as in the Rust peers.
const echoBuf = 16 * 1024

// parseServeEcho returns the worker count of `serve-echo --workers W`.
func parseServeEcho(args []string) (int, error) {
	return parseServeMode(args, "serve-echo")
}

// parseServeMode returns the worker count of `<mode> --workers W`.
func parseServeMode(args []string, mode string) (int, error) {
	if len(args) != 3 || args[0] != mode || args[1] != "--workers" {
		return 0, fmt.Errorf("`%s` takes exactly `--workers W`", mode)
	}
	w, err := strconv.ParseUint(args[2], 10, 31)
	if err != nil || w == 0 {
		return 0, fmt.Errorf("`--workers %s`: not a positive integer", args[2])
	}
	return int(w), nil
}

// listenEcho binds the loopback listener and starts accepting.
func listenEcho() (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("could not bind 127.0.0.1:0: %w", err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				fmt.Fprintf(os.Stderr, "accept: %v\n", err)
				continue
			}
			go echoConn(c)
		}
	}()
	return ln, nil
}

func echoConn(c net.Conn) {
	defer c.Close()
	buf := make([]byte, echoBuf)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// serveEcho runs the mode: announce, serve, exit when stdin closes.
func serveEcho(args []string) {
	workers, err := parseServeEcho(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\nusage: <peer> serve-echo --workers W\n", err)
		os.Exit(2)
	}
	runtime.GOMAXPROCS(workers)
	ln, err := listenEcho()
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("SPINDLE-BENCH-ECHO port=%d\n", ln.Addr().(*net.TCPAddr).Port)
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}
