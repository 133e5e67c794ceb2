package main

import (
	"runtime"
	"strconv"
	"sync"
)

// The synchronisation rows. Go's primitives for them: sync.Mutex and
// sync.RWMutex (goroutines block on them, the runtime parks and hands
// over), a buffered channel of 8 as the counting semaphore (Go's idiom; the
// x/sync Weighted semaphore is for weighted acquires), a buffered channel
// of 1 with a non-blocking send as the notification (a send with a full
// buffer is a notification already pending, as Tokio's stored permit), and
// a results channel for "the next task to finish" (Go has no JoinSet),
// and for watch_fanout a value under a sync.Mutex with a sync.Cond whose
// Broadcast wakes the watchers (Go's latest-value idiom; it has no watch
// channel).

// The shape constants of the sync rows.
const (
	semaphoreTasks   = 1000
	semaphorePermits = 8
	rwWriteEvery     = 20
	watchers         = 100
)

// contenders is mutex_contended's and rwlock_read_heavy's goroutine count, 4·W.
func contenders(workers int) uint64 { return uint64(4 * workers) }

// holders is semaphore_limit's witness: the permits held now and at most.
var holders aliveCount

// runSyncRow runs one of the sync rows; ok=false for any other name.
func runSyncRow(name string, n uint64, workers int) (o outcome, ok bool) {
	switch name {
	case "mutex_uncontended":
		return timed(func() uint64 { return inGoroutine(func() uint64 { return mutexUncontended(n) }) }), true
	case "mutex_contended":
		return timed(func() uint64 { return mutexContended(n, contenders(workers)) }), true
	case "rwlock_read_heavy":
		return timed(func() uint64 { return rwlockReadHeavy(n, contenders(workers)) }), true
	case "semaphore_limit":
		holders.now.Store(0)
		holders.peak.Store(0)
		o := timed(func() uint64 { return semaphoreLimit(n) })
		o.extra = append(o.extra, kv{"peak_holders", strconv.FormatUint(holders.peak.Load(), 10)})
		return o, true
	case "notify_pingpong":
		return timed(func() uint64 { return notifyPingpong(n) }), true
	case "watch_fanout":
		return timed(func() uint64 { return watchFanout(n) }), true
	case "joinset_drain":
		return timed(func() uint64 { return joinsetDrain(n) }), true
	}
	return outcome{}, false
}

// sumGoroutines runs body(t) for t in 0..tasks, each in its own goroutine,
// and sums what they return.
func sumGoroutines(tasks uint64, body func(t uint64) uint64) uint64 {
	sums := make([]uint64, tasks)
	var wg sync.WaitGroup
	for t := range tasks {
		wg.Go(func() { sums[t] = body(t) })
	}
	wg.Wait()
	var total uint64
	for _, s := range sums {
		total += s
	}
	return total
}

// mutexUncontended: one goroutine, n lock–add–unlock rounds.
func mutexUncontended(n uint64) uint64 {
	var mu sync.Mutex
	var v uint64
	for i := range n {
		mu.Lock()
		v += i
		mu.Unlock()
	}
	return v
}

// mutexContended: 4·W goroutines add their indices i ≡ t (mod 4·W) under
// one mutex, yielding after each unlock.
func mutexContended(n, tasks uint64) uint64 {
	var mu sync.Mutex
	var v uint64
	sumGoroutines(tasks, func(t uint64) uint64 {
		for i := t; i < n; i += tasks {
			mu.Lock()
			v += i
			mu.Unlock()
			runtime.Gosched()
		}
		return 0
	})
	return v
}

// rwlockReadHeavy: index i writes (adds i to both halves) when i%20 == 0,
// else reads, checks the halves agree and adds i to its goroutine's sum.
func rwlockReadHeavy(n, tasks uint64) uint64 {
	var mu sync.RWMutex
	var a, b uint64
	reads := sumGoroutines(tasks, func(t uint64) uint64 {
		var seen uint64
		for i := t; i < n; i += tasks {
			if i%rwWriteEvery == 0 {
				mu.Lock()
				a += i
				b += i
				mu.Unlock()
			} else {
				mu.RLock()
				if a != b {
					panic("a reader saw half a write")
				}
				mu.RUnlock()
				seen += i
			}
			runtime.Gosched()
		}
		return seen
	})
	return reads + a
}

// semaphoreLimit: 1000 goroutines share 8 permits (a buffered channel);
// each holds its permit across one yield, counted in holders.
func semaphoreLimit(n uint64) uint64 {
	permits := make(chan struct{}, semaphorePermits)
	return sumGoroutines(semaphoreTasks, func(t uint64) uint64 {
		var sum uint64
		for i := t; i < n; i += semaphoreTasks {
			permits <- struct{}{}
			holders.enter()
			runtime.Gosched()
			holders.leave()
			<-permits
			sum += i
		}
		return sum
	})
}

// notify sends a notification unless one is already pending.
func notify(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// notifyPingpong: two goroutines wake each other in turn, n times.
func notifyPingpong(n uint64) uint64 {
	ping, pong := make(chan struct{}, 1), make(chan struct{}, 1)
	go func() {
		for range n {
			<-ping
			notify(pong)
		}
	}()
	return inGoroutine(func() uint64 {
		var sum uint64
		for i := range n {
			notify(ping)
			<-pong
			sum += i
		}
		return sum
	})
}

// joinsetDrain: n goroutines each send their index on one results channel
// (buffered for all n, as a JoinSet holds every output until drained); the
// driver receives n results in finish order.
func joinsetDrain(n uint64) uint64 {
	results := make(chan uint64, n)
	for i := range n {
		go func() { results <- i }()
	}
	var sum uint64
	for range n {
		sum += <-results
	}
	return sum
}

// watchFanout: one goroutine publishes 1..=n (value and version under a
// mutex, Broadcast after each, then a yield); 100 watchers each wait for a
// version newer than the one they saw and take the latest value, until it
// is n.
func watchFanout(n uint64) uint64 {
	var mu sync.Mutex
	changed := sync.NewCond(&mu)
	var value, version uint64
	total := sumGoroutines(watchers+1, func(t uint64) uint64 {
		if t == watchers { // the sender
			for v := uint64(1); v <= n; v++ {
				mu.Lock()
				value, version = v, version+1
				mu.Unlock()
				changed.Broadcast()
				runtime.Gosched()
			}
			return 0
		}
		var seen uint64
		mu.Lock()
		defer mu.Unlock()
		for value != n {
			for version == seen {
				changed.Wait()
			}
			seen = version
		}
		return value
	})
	return total
}
