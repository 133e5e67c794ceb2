// Go's side of `cargo run --release -p spindle --example pingpong_phases`
// (docs/profiles.md, "pingpong's two speeds"): pingpong between two
// goroutines over two unbuffered channels with GOMAXPROCS=1, timed in
// phases; prints each phase's ns a round trip on one line. From the
// repository root: `go run scripts/pingpong-phases-go/main.go [phases [round trips a phase]]`.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

func arg(i int, what string, def uint64) uint64 {
	if len(os.Args) <= i {
		return def
	}
	v, err := strconv.ParseUint(os.Args[i], 10, 64)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: a number, not %q\n", what, os.Args[i])
		os.Exit(2)
	}
	return v
}

func main() {
	runtime.GOMAXPROCS(1)
	phases := arg(1, "phases", 40)
	perPhase := arg(2, "round trips a phase", 50000)
	n := phases * perPhase
	ping := make(chan uint64)
	pong := make(chan uint64)
	go func() {
		for k := range ping {
			pong <- k
		}
	}()
	times := make([]string, 0, phases)
	var sum uint64
	t := time.Now()
	for k := uint64(0); k < n; k++ {
		ping <- k
		sum += <-pong
		if (k+1)%perPhase == 0 {
			times = append(times, strconv.FormatInt(time.Since(t).Nanoseconds()/int64(perPhase), 10))
			t = time.Now()
		}
	}
	close(ping)
	if sum != n*(n-1)/2 {
		fmt.Fprintf(os.Stderr, "sum %d, want %d\n", sum, n*(n-1)/2)
		os.Exit(1)
	}
	fmt.Println("go:", strings.Join(times, " "))
}
