package main

import (
	"fmt"
	"math"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// run runs one workload with GOMAXPROCS = workers (1 for fork_inline), set
// before the clock starts.
func run(name string, n uint64, workers int) (outcome, error) {
	procs := workers
	if name == "fork_inline" {
		procs = 1
	}
	runtime.GOMAXPROCS(procs)
	switch name {
	case "skynet":
		return timed(func() uint64 {
			c := make(chan uint64, 1)
			go skynet(c, 0, n)
			return <-c
		}), nil
	case "pingpong":
		return timed(func() uint64 { return pingpong(n) }), nil
	case "fanout":
		return timed(func() uint64 { return fanout(n) }), nil
	case "fib":
		return timed(func() uint64 { return inGoroutine(func() uint64 { return fib(n) }) }), nil
	case "fib_par":
		return timed(func() uint64 { return fibPar(n) }), nil
	case "sum_squares":
		return timed(func() uint64 { return inGoroutine(func() uint64 { return sumSquares(n) }) }), nil
	case "primes":
		return timed(func() uint64 { return inGoroutine(func() uint64 { return countPrimes(n) }) }), nil
	case "chan_single":
		return timed(func() uint64 { return inGoroutine(func() uint64 { return chanSingle(n) }) }), nil
	case "chan_buffered":
		return timed(func() uint64 { return producerConsumer(n, chanCapacity) }), nil
	case "chan_unbuffered":
		return timed(func() uint64 { return producerConsumer(n, 0) }), nil
	case "async_trivial", "spawn_10k", "spawn_100k", "spawn_1m":
		return timed(func() uint64 { return spawnBatches(n, max(n, 1)) }), nil
	case "async_compute":
		return timed(func() uint64 { return asyncCompute(n) }), nil
	case "block_all":
		return timed(func() uint64 { return spawnBatches(n, blockAllBatch) }), nil
	case "spawn_nursery":
		return timed(func() uint64 { return spawnBatches(n, nurseryBatch) }), nil
	case "spawn_sequential", "fork_inline":
		return timed(func() uint64 { return forkSequential(n) }), nil
	case "blocking_pressure":
		return blockingPressure(n, workers), nil
	case "live_1m":
		alive.now.Store(0)
		alive.peak.Store(0)
		o := timed(func() uint64 { return live(n) })
		o.extra = append(o.extra, kv{"peak_alive", strconv.FormatUint(alive.peak.Load(), 10)})
		return o, nil
	case "sleep_1m":
		lateness.Store(math.MaxInt64)
		o := timed(func() uint64 { return sleepAll(n) })
		o.extra = append(o.extra, kv{"min_lateness_ns", strconv.FormatInt(lateness.Load(), 10)})
		return o, nil
	case "fizzbuzz_pipeline", "fizzbuzz_pipeline_zc":
		zc := name == "fizzbuzz_pipeline_zc"
		start := time.Now()
		r := fizzbuzz(n, zc)
		return outcome{result: r.String(), elapsed: time.Since(start)}, nil
	case "fork_pool":
		return timed(func() uint64 { return forkPool(n, workers) }), nil
	}
	if k := selectArity(name); k == 1 || k == 2 || k == 4 {
		start := time.Now()
		t := selectK(n, k)
		return t.outcome(time.Since(start)), nil
	}
	switch payloadBytes(name) {
	case 4:
		return timed(func() uint64 { return payloadRow[[4]byte](n) }), nil
	case 16:
		return timed(func() uint64 { return payloadRow[[16]byte](n) }), nil
	case 256:
		return timed(func() uint64 { return payloadRow[[256]byte](n) }), nil
	case 1024:
		return timed(func() uint64 { return payloadRow[[1024]byte](n) }), nil
	}
	if c, d, ok := pipelineShape(name); ok {
		return timed(func() uint64 { return pipeline(n, c, d) }), nil
	}
	if o, ok := runSyncRow(name, n, workers); ok {
		return o, nil
	}
	return outcome{}, fmt.Errorf("`%s` is not a workload of the catalogue", name)
}

// timed runs f on the monotonic clock: the timed region of every row.
func timed(f func() uint64) outcome {
	start := time.Now()
	r := f()
	return numeric(r, time.Since(start))
}

// inGoroutine runs f in one spawned goroutine and waits for its result.
func inGoroutine(f func() uint64) uint64 {
	c := make(chan uint64, 1)
	go func() { c <- f() }()
	return <-c
}

// skynet: a goroutine per node; a parent starts its 10 children and sums
// what they send on its channel; a leaf sends its id.
func skynet(out chan<- uint64, id, size uint64) {
	if size == 1 {
		out <- id
		return
	}
	child := size / skynetFanout
	c := make(chan uint64, skynetFanout)
	for i := range uint64(skynetFanout) {
		go skynet(c, id+i*child, child)
	}
	var sum uint64
	for range skynetFanout {
		sum += <-c
	}
	out <- sum
}

func fib(n uint64) uint64 {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

// fibPar: both halves in goroutines while n > 20, plain recursion below.
func fibPar(n uint64) uint64 {
	if n <= fibParCutoff {
		return fib(n)
	}
	var a, b uint64
	var wg sync.WaitGroup
	wg.Go(func() { a = fibPar(n - 1) })
	wg.Go(func() { b = fibPar(n - 2) })
	wg.Wait()
	return a + b
}

// sumSquares: 1² + … + n²; n is a run-time value, so the loop stays a loop.
func sumSquares(n uint64) uint64 {
	var sum uint64
	for i := uint64(1); i <= n; i++ {
		sum += i * i
	}
	return sum
}

// countPrimes counts the primes ≤ n by trial division.
func countPrimes(n uint64) uint64 {
	var count uint64
	for k := uint64(2); k <= n; k++ {
		prime := true
		for d := uint64(2); d*d <= k; d++ {
			if k%d == 0 {
				prime = false
				break
			}
		}
		if prime {
			count++
		}
	}
	return count
}

// spawnBatches: batches of goroutines (goroutine i stores i in its slot),
// each batch awaited with a WaitGroup before the next; the driver sums the
// slots. async_trivial and spawn_* are one batch of n.
func spawnBatches(n, batch uint64) uint64 {
	slots := make([]uint64, min(batch, n))
	var sum uint64
	for start := uint64(0); start < n; start += batch {
		part := slots[:min(batch, n-start)]
		var wg sync.WaitGroup
		for j := range part {
			wg.Go(func() { part[j] = start + uint64(j) })
		}
		wg.Wait()
		for _, v := range part {
			sum += v
		}
	}
	return sum
}

// asyncCompute: goroutine i sums i + j for j < 100, yielding once at j = 50.
func asyncCompute(n uint64) uint64 {
	slots := make([]uint64, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var sum uint64
			for j := range uint64(asyncComputeSteps) {
				if j == asyncComputeYieldAt {
					runtime.Gosched()
				}
				sum += i + j
			}
			slots[i] = sum
		})
	}
	wg.Wait()
	var sum uint64
	for _, v := range slots {
		sum += v
	}
	return sum
}

// forkSequential (spawn_sequential, fork_inline): start a goroutine that
// returns i on a channel, wait for it, repeat.
func forkSequential(n uint64) uint64 {
	c := make(chan uint64, 1)
	var sum uint64
	for i := range n {
		go func() { c <- i }()
		sum += <-c
	}
	return sum
}

// forkPool: W driver goroutines; driver d forks the children i ≡ d (mod W)
// one at a time.
func forkPool(n uint64, workers int) uint64 {
	sums := make(chan uint64, workers)
	for d := range uint64(workers) {
		go func() {
			c := make(chan uint64, 1)
			var sum uint64
			for i := d; i < n; i += uint64(workers) {
				go func() { c <- i }()
				sum += <-c
			}
			sums <- sum
		}()
	}
	var sum uint64
	for range workers {
		sum += <-sums
	}
	return sum
}

// live: n goroutines each parked on its own capacity-1 channel; once all
// have started the driver sends i to goroutine i; each stores what it got.
func live(n uint64) uint64 {
	chans := make([]chan uint64, n)
	slots := make([]uint64, n)
	var started, done sync.WaitGroup
	started.Add(int(n))
	for i := range n {
		c := make(chan uint64, 1)
		chans[i] = c
		done.Go(func() {
			alive.enter()
			started.Done()
			slots[i] = <-c
			alive.leave()
		})
	}
	started.Wait()
	for i, c := range chans {
		c <- uint64(i)
	}
	done.Wait()
	var sum uint64
	for _, v := range slots {
		sum += v
	}
	return sum
}

// aliveCount is live_1m's witness: the goroutines alive now and at most.
type aliveCount struct{ now, peak atomic.Uint64 }

var alive aliveCount

func (a *aliveCount) enter() {
	now := a.now.Add(1)
	for p := a.peak.Load(); now > p && !a.peak.CompareAndSwap(p, now); p = a.peak.Load() {
	}
}

func (a *aliveCount) leave() { a.now.Add(^uint64(0)) }

// lateness is sleep_1m's witness: the earliest wake relative to its
// deadline, in ns (negative: a sleep returned early).
var lateness atomic.Int64

func observeWake(due time.Time) {
	late := int64(time.Since(due))
	for m := lateness.Load(); late < m && !lateness.CompareAndSwap(m, late); m = lateness.Load() {
	}
}

// sleepAll: n goroutines, goroutine i sleeps 1 + (i mod 100) ms on the
// runtime's timers (time.Sleep parks the goroutine), notes its wake and
// stores i in its slot; the driver waits on a WaitGroup and sums the slots.
func sleepAll(n uint64) uint64 {
	slots := make([]uint64, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			d := sleepDuration(i)
			due := time.Now().Add(d)
			time.Sleep(d)
			observeWake(due)
			slots[i] = i
		})
	}
	wg.Wait()
	var sum uint64
	for _, v := range slots {
		sum += v
	}
	return sum
}

// nanosleep makes one real blocking 1 ms nanosleep(2) call, resuming after EINTR.
func nanosleep() {
	ts := syscall.NsecToTimespec(int64(blockingSleep))
	for {
		var rem syscall.Timespec
		if err := syscall.Nanosleep(&ts, &rem); err != syscall.EINTR {
			return
		}
		ts = rem
	}
}

// blockingPressure: 4·W goroutines each make n blocking 1 ms nanosleep
// syscalls (time.Sleep would park the goroutine, not block); a heartbeat
// goroutine sleeps 1 ms with time.Sleep in a loop and counts its ticks until
// the blockers are done.
func blockingPressure(n uint64, workers int) outcome {
	start := time.Now()
	var done atomic.Bool
	beats := make(chan uint64, 1)
	go func() {
		// A 1 ms ticker: a slow receiver drops ticks (the channel holds one).
		t := time.NewTicker(blockingSleep)
		defer t.Stop()
		var b uint64
		for !done.Load() {
			<-t.C
			b++
		}
		beats <- b
	}()
	calls := make(chan uint64, blockers(workers))
	for range blockers(workers) {
		go func() {
			var c uint64
			for range n {
				nanosleep()
				c++
			}
			calls <- c
		}()
	}
	var total uint64
	for range blockers(workers) {
		total += <-calls
	}
	done.Store(true)
	b := <-beats
	elapsed := time.Since(start)
	o := numeric(total, elapsed)
	o.extra = []kv{{"beats", strconv.FormatUint(b, 10)}, {"due", strconv.FormatInt(elapsed.Milliseconds(), 10)}}
	return o
}

// pipeline: C chain goroutines run their share of the n executions one after
// another; an execution starts D stage goroutines, stage k holding stage
// k−1's result channel (its handle), waiting on it and sending its value + 1.
func pipeline(n, chains, depth uint64) uint64 {
	sums := make(chan uint64, chains)
	for c := range chains {
		runs := chainShare(n, chains, c)
		go func() {
			var sum uint64
			for range runs {
				first := make(chan uint64, 1)
				go func() { first <- 1 }()
				stage := first
				for range depth - 1 {
					prev, next := stage, make(chan uint64, 1)
					go func() { next <- <-prev + 1 }()
					stage = next
				}
				sum += <-stage
			}
			sums <- sum
		}()
	}
	var sum uint64
	for range chains {
		sum += <-sums
	}
	return sum
}
