package main

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// The channel rows: pingpong, fanout, chan_single, chan_buffered and
// chan_unbuffered, payload_B, select_k and the fizzbuzz_pipeline rows, on Go's
// channels (a buffered channel of the catalogue's capacity unless the row
// says otherwise) and goroutines.

// pingpong: pinger and ponger goroutines over two capacity-1 channels.
func pingpong(n uint64) uint64 {
	ping := make(chan uint64, pingpongCapacity)
	pong := make(chan uint64, pingpongCapacity)
	go func() {
		for k := range ping {
			pong <- k
		}
		close(pong)
	}()
	return inGoroutine(func() uint64 {
		var sum uint64
		for k := range n {
			ping <- k
			sum += <-pong
		}
		close(ping)
		return sum
	})
}

// fanout: a producer goroutine, 100 worker goroutines on one channel of 1024.
func fanout(n uint64) uint64 {
	c := make(chan uint64, fanoutCapacity)
	sums := make(chan uint64, fanoutWorkers)
	for range fanoutWorkers {
		go func() {
			var sum uint64
			for v := range c {
				sum += v
			}
			sums <- sum
		}()
	}
	go func() {
		for v := uint64(1); v <= n; v++ {
			c <- v
		}
		close(c)
	}()
	var sum uint64
	for range fanoutWorkers {
		sum += <-sums
	}
	return sum
}

// chanSingle: one goroutine sends 1000 then receives 1000, repeated.
func chanSingle(n uint64) uint64 {
	c := make(chan uint64, chanCapacity)
	var sum, next uint64
	for next < n {
		end := min(next+chanCapacity, n)
		for v := next; v < end; v++ {
			c <- v
		}
		for range end - next {
			sum += <-c
		}
		next = end
	}
	return sum
}

// producerConsumer: a producer goroutine sends i for i in 0..n on a channel
// of capacity cp; a consumer goroutine sums what it receives.
func producerConsumer(n uint64, cp int) uint64 {
	c := make(chan uint64, cp)
	go func() {
		for i := range n {
			c <- i
		}
		close(c)
	}()
	return inGoroutine(func() uint64 {
		var sum uint64
		for v := range c {
			sum += v
		}
		return sum
	})
}

// payloadMsg is a payload_B message: B bytes sent by value.
type payloadMsg interface {
	[4]byte | [16]byte | [256]byte | [1024]byte
}

// payloadRow: chan_buffered with [B]byte messages by value. One
// instantiation per size (each array is its own GC shape), so the length is
// a constant and the fill and check inline into the two loops: the producer
// writes each message in place and the consumer reads it where it landed.
func payloadRow[M payloadMsg](n uint64) uint64 {
	c := make(chan M, chanCapacity)
	go func() {
		for i := range n {
			var m M
			fillPayload(bytesOf(&m), i)
			c <- m
		}
		close(c)
	}()
	return inGoroutine(func() uint64 {
		var sum uint64
		for m := range c {
			sum += payloadValue(bytesOf(&m))
		}
		return sum
	})
}

// bytesOf views a message as a slice. A type parameter over arrays of
// different lengths has no core type, so `m[:]` does not compile; the view
// covers exactly the array.
func bytesOf[M payloadMsg](m *M) []byte { return unsafe.Slice(&(*m)[0], len(*m)) }

// fillPayload writes index i as a little-endian u32 and fills the rest with
// byte(i). Go has no non-zero memset: small messages take a byte loop,
// larger ones double a filled prefix with copy, as bytes.Repeat does.
func fillPayload(m []byte, i uint64) {
	if len(m) <= 16 {
		for j := range m {
			m[j] = byte(i)
		}
	} else {
		m[0] = byte(i)
		for j := 1; j < len(m); j *= 2 {
			copy(m[j:], m[:j])
		}
	}
	binary.LittleEndian.PutUint32(m, uint32(i))
}

// payloadValue reads the index back, checking the last byte.
func payloadValue(m []byte) uint64 {
	i := binary.LittleEndian.Uint32(m)
	last := byte(i)
	if len(m) == 4 {
		last = byte(i >> 24) // the u32's top byte: no filler
	}
	if m[len(m)-1] != last {
		panic(fmt.Sprintf("payload %d: last byte corrupt", i))
	}
	return uint64(i)
}

// selectTally is select_k's consumer result: the sum and how many messages
// each arm delivered.
type selectTally struct {
	sum    uint64
	perArm []uint64
}

func (t *selectTally) record(arm int, v uint64) {
	t.sum += v
	t.perArm[arm]++
}

func (t selectTally) outcome(elapsed time.Duration) outcome {
	arms := make([]string, len(t.perArm))
	for i, c := range t.perArm {
		arms[i] = strconv.FormatUint(c, 10)
	}
	o := numeric(t.sum, elapsed)
	o.extra = append(o.extra, kv{"per_arm", strings.Join(arms, ",")})
	return o
}

// selectK: k producer goroutines, producer p sending p·(n/k) + j on its own
// buffered(1000) channel and closing it; one consumer goroutine runs a
// k-case select over the k channels, setting a channel to nil once it is
// closed and drained (a nil channel's case never fires), until all are.
// Each k has its own select statement with exactly k cases: Go's compiler
// turns the one-case select into a plain receive, as it would for a user.
func selectK(n uint64, k int) selectTally {
	per := n / uint64(k)
	cs := make([]chan uint64, k)
	for p := range k {
		c := make(chan uint64, chanCapacity)
		cs[p] = c
		go func() {
			for j := range per {
				c <- uint64(p)*per + j
			}
			close(c)
		}()
	}
	done := make(chan selectTally, 1)
	go func() {
		t := selectTally{perArm: make([]uint64, k)}
		switch k {
		case 1:
			select1(cs[0], &t)
		case 2:
			select2(cs[0], cs[1], &t)
		case 4:
			select4(cs[0], cs[1], cs[2], cs[3], &t)
		default:
			panic(fmt.Sprintf("no select row over %d channels", k))
		}
		done <- t
	}()
	return <-done
}

func select1(a chan uint64, t *selectTally) {
	for a != nil {
		select {
		case v, ok := <-a:
			if !ok {
				a = nil
				continue
			}
			t.record(0, v)
		}
	}
}

func select2(a, b chan uint64, t *selectTally) {
	for a != nil || b != nil {
		select {
		case v, ok := <-a:
			if !ok {
				a = nil
				continue
			}
			t.record(0, v)
		case v, ok := <-b:
			if !ok {
				b = nil
				continue
			}
			t.record(1, v)
		}
	}
}

func select4(a, b, c, d chan uint64, t *selectTally) {
	for a != nil || b != nil || c != nil || d != nil {
		select {
		case v, ok := <-a:
			if !ok {
				a = nil
				continue
			}
			t.record(0, v)
		case v, ok := <-b:
			if !ok {
				b = nil
				continue
			}
			t.record(1, v)
		case v, ok := <-c:
			if !ok {
				c = nil
				continue
			}
			t.record(2, v)
		case v, ok := <-d:
			if !ok {
				d = nil
				continue
			}
			t.record(3, v)
		}
	}
}

// FizzBuzz classes.
const (
	classValue uint8 = iota
	classFizz
	classBuzz
	classFizzBuzz
)

// classOfRem15 is the class of each remainder mod 15 (0 is FizzBuzz,
// 3/6/9/12 Fizz, 5/10 Buzz): the same table lookup as the Rust peers' kernel.
var classOfRem15 = [15]uint8{
	classFizzBuzz, classValue, classValue, classFizz, classValue, classBuzz, classFizz, classValue,
	classValue, classFizz, classBuzz, classValue, classFizz, classValue, classValue,
}

func classify(v uint64) uint8 {
	return classOfRem15[v%15]
}

type fizzCounts [4]uint64

func (c fizzCounts) String() string {
	return fmt.Sprintf("F:%d,B:%d,FB:%d,V:%d", c[classFizz], c[classBuzz], c[classFizzBuzz], c[classValue])
}

// fizzbuzz: generator → worker → logger goroutines. Messages travel in
// batches of half a channel; each link is a channel of two batches (a full
// channel's worth) and buffers return upstream on recycle channels, so the
// hot path allocates nothing.
//   - copy (double buffer): the worker writes classes into a separate class
//     buffer and hands the value buffer back;
//   - zero-copy: the worker overwrites each value with its class in place and
//     forwards the same buffer.
func fizzbuzz(n uint64, zeroCopy bool) fizzCounts {
	const link = 2 // batches per link: the whole channel
	const pool = 4 // buffers per pool: two in the link, one at each end
	batch := fizzbuzzBatch(n)
	free := make(chan []uint64, pool)
	classFree := make(chan []uint8, pool)
	for range pool {
		free <- make([]uint64, 0, batch)
		if !zeroCopy {
			classFree <- make([]uint8, 0, batch)
		}
	}
	values := make(chan []uint64, link)
	go func() {
		for next := uint64(1); next <= n; {
			buf := (<-free)[:0]
			end := min(next+uint64(batch)-1, n)
			for v := next; v <= end; v++ {
				buf = append(buf, v)
			}
			next = end + 1
			values <- buf
		}
		close(values)
	}()
	counts := make(chan fizzCounts, 1)
	if zeroCopy {
		out := make(chan []uint64, link)
		go func() {
			for buf := range values {
				for i, v := range buf {
					buf[i] = uint64(classify(v))
				}
				out <- buf
			}
			close(out)
		}()
		go func() {
			var c fizzCounts
			for buf := range out {
				for _, cl := range buf {
					c[cl&3]++
				}
				free <- buf
			}
			counts <- c
		}()
	} else {
		out := make(chan []uint8, link)
		go func() {
			for vals := range values {
				classes := (<-classFree)[:0]
				for _, v := range vals {
					classes = append(classes, classify(v))
				}
				free <- vals
				out <- classes
			}
			close(out)
		}()
		go func() {
			var c fizzCounts
			for classes := range out {
				for _, cl := range classes {
					c[cl&3]++
				}
				classFree <- classes
			}
			counts <- c
		}()
	}
	return <-counts
}
