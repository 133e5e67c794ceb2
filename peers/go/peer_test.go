package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tri is T(n) = n(n-1)/2, the sum of 0..n.
func tri(n uint64) uint64 { return n * (n - 1) / 2 }

// expected is the catalogue's result for a row (docs/bench-catalogue.md),
// computed from its closed form (primes by a sieve), never by the peer's code.
func expected(name string, n uint64, workers int) string {
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	switch name {
	case "fanout":
		return u(n * (n + 1) / 2)
	case "fib", "fib_par":
		a, b := uint64(0), uint64(1)
		for range n {
			a, b = b, a+b
		}
		return u(a)
	case "sum_squares":
		return u(n * (n + 1) * (2*n + 1) / 6)
	case "primes":
		composite := make([]bool, n+1)
		var count uint64
		for i := uint64(2); i <= n; i++ {
			if !composite[i] {
				count++
				for j := i * i; j <= n; j += i {
					composite[j] = true
				}
			}
		}
		return u(count)
	case "async_compute":
		return u(100*tri(n) + 4950*n)
	case "blocking_pressure":
		return u(uint64(4*workers) * n)
	case "watch_fanout":
		return u(100 * n)
	case "fizzbuzz_pipeline", "fizzbuzz_pipeline_zc":
		fb := n / 15
		f, b := n/3-fb, n/5-fb
		return "F:" + u(f) + ",B:" + u(b) + ",FB:" + u(fb) + ",V:" + u(n-f-b-fb)
	}
	if _, d, ok := pipelineShape(name); ok {
		return u(n * d)
	}
	return u(tri(n))
}

// tinySize is the small size each row runs at here: milliseconds of work,
// but several batches, chains and tree levels (the Rust peers' tests use
// the same sizes, from peers/common/src/catalogue.rs).
func tinySize(name string) uint64 {
	switch name {
	case "fib":
		return 20
	case "fib_par":
		return 23
	case "blocking_pressure":
		return 3
	case "spawn_nursery":
		return 2500
	case "fizzbuzz_pipeline", "fizzbuzz_pipeline_zc":
		return 1<<12 + 7
	case "chan_single", "chan_buffered":
		return 10000
	case "watch_fanout":
		return 200
	}
	if _, _, ok := pipelineShape(name); ok {
		return 170
	}
	return 1000
}

func TestCatalogueFigures(t *testing.T) {
	for _, c := range []struct {
		name string
		n    uint64
		want string
	}{
		{"skynet", 1000000, "499999500000"},
		{"fib", 40, "102334155"},
		{"sum_squares", 1000000, "333333833333500000"},
		{"primes", 100000, "9592"},
		{"primes", 10000, "1229"},
		{"sleep_1m", 1000000, "499999500000"},
	} {
		if got := expected(c.name, c.n, 2); got != c.want {
			t.Errorf("expected(%s, %d) = %s, want %s", c.name, c.n, got, c.want)
		}
	}
	for i, want := range map[uint64]time.Duration{0: time.Millisecond, 99: 100 * time.Millisecond, 100: time.Millisecond} {
		if got := sleepDuration(i); got != want {
			t.Errorf("sleepDuration(%d) = %v, want %v", i, got, want)
		}
	}
}

func TestEveryRowAtTinySize(t *testing.T) {
	const workers = 2
	seen := map[string]bool{}
	for _, name := range workloads {
		if seen[name] {
			t.Fatalf("%s listed twice", name)
		}
		seen[name] = true
		if _, no := unsupported[name]; no {
			continue
		}
		n := tinySize(name)
		o, err := run(name, n, workers)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if want := expected(name, n, workers); o.result != want {
			t.Errorf("%s size %d: result %s, want %s", name, n, o.result, want)
		}
		if o.elapsed <= 0 {
			t.Errorf("%s: elapsed %v", name, o.elapsed)
		}
		if name == "blocking_pressure" && len(o.extra) != 2 {
			t.Errorf("%s: extra %v, want beats and due", name, o.extra)
		}
		if err := checkWitness(name, n, o.extra); err != nil {
			t.Errorf("%s size %d: %v", name, n, err)
		}
	}
	if len(workloads) != 48 {
		t.Errorf("%d workloads, the catalogue has 48", len(workloads))
	}
	if _, err := run("nonesuch", 1, 1); err == nil {
		t.Error("unknown workload accepted")
	}
}

// checkWitness is this peer's copy of the witness rules (the harness has
// its own): select_k's per_arm counts, sleep_1m's min_lateness_ns,
// live_1m's peak_alive, semaphore_limit's peak_holders.
func checkWitness(name string, n uint64, extra []kv) error {
	field := func(key string) (string, error) {
		for _, e := range extra {
			if e.key == key {
				return e.value, nil
			}
		}
		return "", fmt.Errorf("no %s field in %v", key, extra)
	}
	if k := selectArity(name); k > 0 {
		v, err := field("per_arm")
		if err != nil {
			return err
		}
		share := strconv.FormatUint(n/uint64(k), 10)
		if want := strings.TrimSuffix(strings.Repeat(share+",", k), ","); v != want {
			return fmt.Errorf("per_arm=%s, want %s", v, want)
		}
	}
	switch name {
	case "sleep_1m":
		v, err := field("min_lateness_ns")
		if err != nil {
			return err
		}
		if late, perr := strconv.ParseInt(v, 10, 64); perr != nil || late < 0 {
			return fmt.Errorf("min_lateness_ns=%s: a sleep woke before its deadline", v)
		}
	case "live_1m":
		v, err := field("peak_alive")
		if err != nil {
			return err
		}
		if v != strconv.FormatUint(n, 10) {
			return fmt.Errorf("peak_alive=%s, want %d", v, n)
		}
	case "semaphore_limit":
		v, err := field("peak_holders")
		if err != nil {
			return err
		}
		if want := strconv.FormatUint(min(semaphorePermits, n), 10); v != want {
			return fmt.Errorf("peak_holders=%s, want %s", v, want)
		}
	}
	return nil
}

func TestArgsAndLine(t *testing.T) {
	list, req, err := parseArgs(strings.Fields("run payload_16 --size 10 --workers 2"))
	if err != nil || list || req != (request{"payload_16", 10, 2}) {
		t.Fatalf("parse: %v %v %v", list, req, err)
	}
	line := resultLine(req, outcome{result: "45", elapsed: 5, extra: []kv{{"x", "1"}}})
	want := "SPINDLE-BENCH workload=payload_16 peer=go size=10 workers=2 result=45 ops=10 ns=5 bytes=160 x=1"
	if line != want {
		t.Errorf("line\n got %s\nwant %s", line, want)
	}
	for _, bad := range []string{"", "fly", "run --size 1", "run x --size -1 --workers 2",
		"run x --size 1 --workers 0", "run x --size 1 --bogus 3 --workers 1", "run x --workers 1"} {
		if _, _, err := parseArgs(strings.Fields(bad)); err == nil {
			t.Errorf("parse %q: accepted", bad)
		}
	}
}

func TestServeEchoArgs(t *testing.T) {
	if w, err := parseServeEcho([]string{"serve-echo", "--workers", "2"}); err != nil || w != 2 {
		t.Fatalf("got %d, %v", w, err)
	}
	for _, bad := range [][]string{{"serve-echo"}, {"serve-echo", "--workers", "0"}, {"serve-echo", "--workers", "x"}} {
		if _, err := parseServeEcho(bad); err == nil {
			t.Errorf("%v: expected an error", bad)
		}
	}
}

func TestEchoServerEchoesOverLoopback(t *testing.T) {
	ln, err := listenEcho()
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msg := bytes.Repeat([]byte("echo "), 1000)
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	back := make([]byte, len(msg))
	if _, err := io.ReadFull(c, back); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back, msg) {
		t.Fatal("echo differs from what was sent")
	}
}

func TestHTTPHandlerServesBothTestsAnd404(t *testing.T) {
	h := httpHandler()
	for _, c := range []struct {
		path, ctype, body string
		status            int
	}{
		{"/plaintext", "text/plain", "Hello, World!", 200},
		{"/json", "application/json", `{"message":"Hello, World!"}`, 200},
		{"/nope", "", "", 404},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", c.path, nil))
		if rec.Code != c.status {
			t.Errorf("%s: status %d, want %d", c.path, rec.Code, c.status)
		}
		if c.status == 200 && (rec.Header().Get("Content-Type") != c.ctype || rec.Body.String() != c.body) {
			t.Errorf("%s: %q %q", c.path, rec.Header().Get("Content-Type"), rec.Body.String())
		}
	}
	if _, err := parseServeMode([]string{"serve-http", "--workers"}, "serve-http"); err == nil {
		t.Error("serve-http without a worker count: expected an error")
	}
}
