// Go's side of `cargo run --release -p spindle --example hidden_wait`
// (docs/sleep-wake.md): how long a goroutine woken (or started) by one
// that then spins waits for its first run while the other P idles, with
// GOMAXPROCS=2. From the repository root: `go run scripts/hidden-wait-go/main.go [trials]`.
package main

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"sync/atomic"
	"time"
)

const limit = 200 * time.Millisecond

// trial: goroutine a wakes (or starts) b, then spins until b has run or
// limit passed; the wait b saw.
func trial(started bool) time.Duration {
	var ran atomic.Bool
	waited := make(chan time.Duration)
	spin := func(start time.Time) {
		for !ran.Load() && time.Since(start) < limit {
		}
		waited <- time.Since(start)
	}
	if started {
		go func() {
			start := time.Now()
			go func() { ran.Store(true) }()
			spin(start)
		}()
	} else {
		c := make(chan struct{}, 1)
		go func() { <-c; ran.Store(true) }()
		time.Sleep(2 * time.Millisecond) // let b park on its receive first
		go func() {
			start := time.Now()
			c <- struct{}{}
			spin(start)
		}()
	}
	return <-waited
}

func main() {
	trials := 40
	if len(os.Args) > 1 {
		n, err := strconv.Atoi(os.Args[1])
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "trials: a whole number above 0, not %q\n", os.Args[1])
			os.Exit(2)
		}
		trials = n
	}
	runtime.GOMAXPROCS(2)
	for _, started := range []bool{false, true} {
		waits := make([]time.Duration, trials)
		for i := range waits {
			time.Sleep(5 * time.Millisecond) // let the other P fall idle first
			waits[i] = trial(started)
		}
		sort.Slice(waits, func(i, j int) bool { return waits[i] < waits[j] })
		q := func(p int) time.Duration { return waits[(trials-1)*p/100] }
		name := "woken"
		if started {
			name = "spawned"
		}
		fmt.Printf("%-8s median %v  p90 %v  max %v\n", name, q(50), q(90), q(100))
	}
}
