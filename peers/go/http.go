package main

// The HTTP-server mode of the peer protocol (peers/common/src/http.rs), for
// `spindle-bench http`:
//
//	peer-go serve-http --workers W
//
// binds 127.0.0.1:0, prints `SPINDLE-BENCH-HTTP port=<port>`, serves
// TechEmpower's plaintext and json tests with net/http as Go programs do
// (a ServeMux, encoding/json per request; keep-alive, TCP_NODELAY and the
// Date header are net/http's defaults), and exits 0 when stdin reaches end
// of file.

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
)

var helloBody = []byte("Hello, World!")

type message struct {
	Message string `json:"message"`
}

// httpHandler routes the two tests; anything else is net/http's 404.
func httpHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /plaintext", func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Server", "spindle-bench")
		h.Set("Content-Type", "text/plain")
		_, _ = w.Write(helloBody)
	})
	mux.HandleFunc("GET /json", func(w http.ResponseWriter, r *http.Request) {
		body, err := json.Marshal(&message{Message: "Hello, World!"})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Server", "spindle-bench")
		h.Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
	return mux
}

// serveHTTP runs the mode: announce, serve, exit when stdin closes.
func serveHTTP(args []string) {
	workers, err := parseServeMode(args, "serve-http")
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\nusage: <peer> serve-http --workers W\n", err)
		os.Exit(2)
	}
	runtime.GOMAXPROCS(workers)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: could not bind 127.0.0.1:0: %v\n", err)
		os.Exit(1)
	}
	go func() {
		if err := http.Serve(ln, httpHandler()); err != nil {
			fmt.Fprintf(os.Stderr, "serve: %v\n", err)
		}
	}()
	fmt.Printf("SPINDLE-BENCH-HTTP port=%d\n", ln.Addr().(*net.TCPAddr).Port)
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}
