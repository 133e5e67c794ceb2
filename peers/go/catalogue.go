package main

import (
	"strconv"
	"strings"
	"time"
)

// workloads lists every row of docs/bench-catalogue.md, in its order.
var workloads = []string{
	"skynet", "pingpong", "fanout", "fib", "fib_par", "sum_squares", "primes",
	"chan_single", "chan_buffered", "chan_unbuffered", "async_trivial", "async_compute",
	"block_all", "select_1", "select_2", "select_4",
	"payload_4", "payload_16", "payload_256", "payload_1024", "blocking_pressure",
	"spawn_nursery", "spawn_sequential", "spawn_10k", "spawn_100k", "spawn_1m", "live_1m",
	"sleep_1m", "fizzbuzz_pipeline", "fizzbuzz_pipeline_zc",
	"fizzbuzz_distributed_ipc", "fizzbuzz_distributed_udp", "fork_inline", "fork_pool", "skynet_fork",
	"pipeline_1x5", "pipeline_4x10", "pipeline_8x5", "pipeline_8x10", "pipeline_16x10", "pipeline_8x20",
	"mutex_uncontended", "mutex_contended", "rwlock_read_heavy", "semaphore_limit",
	"notify_pingpong", "watch_fanout", "joinset_drain",
}

// noAeronPods is why a peer without Aeron pods skips the rows across two
// processes (the same words as the Rust peers').
const noAeronPods = "the suite has Aeron pods for spindle-actor only (peer spindle-aeron): this runtime has none here yet"

// unsupported gives, for the rows Go cannot express, why.
var unsupported = map[string]string{
	"skynet_fork":              "Go has no fork-join API whose join runs the child inline: every goroutine runs concurrently (the skynet row)",
	"fizzbuzz_distributed_ipc": noAeronPods,
	"fizzbuzz_distributed_udp": noAeronPods,
}

// The shape constants the catalogue fixes.
const (
	skynetFanout        = 10
	pingpongCapacity    = 1
	fanoutWorkers       = 100
	fanoutCapacity      = 1024
	chanCapacity        = 1000
	fibParCutoff        = 20
	asyncComputeSteps   = 100
	asyncComputeYieldAt = 50
	blockAllBatch       = 10
	nurseryBatch        = 1000
	blockingSleep       = time.Millisecond
	sleepSpreadMs       = 100
)

// sleepDuration is how long sleep_1m's goroutine i sleeps: 1 + (i mod 100) ms.
func sleepDuration(i uint64) time.Duration {
	return time.Duration(1+i%sleepSpreadMs) * time.Millisecond
}

type kv struct{ key, value string }

// outcome is what one run hands back: the result computed from the work
// done, the time around the workload alone, and row-specific extras.
type outcome struct {
	result  string
	elapsed time.Duration
	extra   []kv
}

func numeric(r uint64, elapsed time.Duration) outcome {
	return outcome{result: strconv.FormatUint(r, 10), elapsed: elapsed}
}

// suffixInt parses the number after prefix (select_4 → 4), or -1.
func suffixInt(name, prefix string) int {
	s, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return -1
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return v
}

func selectArity(name string) int  { return suffixInt(name, "select_") }
func payloadBytes(name string) int { return suffixInt(name, "payload_") }

// pipelineShape gives (chains, depth) of pipeline_CxD, ok=false otherwise.
func pipelineShape(name string) (chains, depth uint64, ok bool) {
	s, found := strings.CutPrefix(name, "pipeline_")
	if !found {
		return 0, 0, false
	}
	c, d, found := strings.Cut(s, "x")
	if !found {
		return 0, 0, false
	}
	ci, err1 := strconv.ParseUint(c, 10, 64)
	di, err2 := strconv.ParseUint(d, 10, 64)
	return ci, di, err1 == nil && err2 == nil
}

// chainShare: how many of the n executions chain c of chains runs (n/C
// each, the remainder spread over the first chains).
func chainShare(n, chains, c uint64) uint64 {
	share := n / chains
	if c < n%chains {
		share++
	}
	return share
}

// blockers is blocking_pressure's task count, 4·W.
func blockers(workers int) int { return 4 * workers }

// fizzbuzzBatch is half a channel; the channel is n/64 messages (1<<20 at
// the full size, 1<<16 at the quick one), clamped.
func fizzbuzzBatch(n uint64) int {
	c := min(max(n/64, 2), 1<<20)
	return int(c / 2)
}

// ops is what the catalogue's last column counts.
func ops(name string, n uint64, workers int) uint64 {
	switch name {
	case "fib", "fib_par":
		return 1
	case "blocking_pressure":
		return uint64(blockers(workers)) * n
	}
	return n
}

// extra gives the key=value pairs fixed by the size alone (payload bytes).
func extra(name string, n uint64) []kv {
	if b := payloadBytes(name); b > 0 {
		return []kv{{"bytes", strconv.FormatUint(n*uint64(b), 10)}}
	}
	return nil
}
