//! Go benchstat text format, so `benchstat -col /impl latest.benchstat.txt`
//! puts the peers side by side.
//!
//! A header of `key: value` configuration lines, then one line per counted
//! sample: `BenchmarkSkynet/impl=spindle-2  <ops>  <ns/op> ns/op`, where the
//! name is the workload in CamelCase, `impl` is the peer, `-2` the worker
//! count (Go's GOMAXPROCS suffix), the iteration count is the row's `ops` and
//! the value is the in-process time divided by it. Failed rows write nothing:
//! no time is ever shown for a wrong result.

use std::fmt::Write as _;

use super::json::LatestRun;

/// `chan_single` → `ChanSingle`, `pipeline_8x5` → `Pipeline8x5`.
pub fn camel(name: &str) -> String {
    name.split('_')
        .map(|part| {
            let mut c = part.chars();
            match c.next() {
                Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

/// One benchstat line.
pub fn line(workload: &str, peer: &str, workers: usize, ops: u64, ns: u64) -> String {
    let ops = ops.max(1);
    let per = ns as f64 / ops as f64;
    format!(
        "Benchmark{}/impl={}-{}\t{}\t{} ns/op",
        camel(workload),
        peer,
        workers,
        ops,
        fmt_per(per)
    )
}

fn fmt_per(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.3}")
    }
}

pub fn render(run: &LatestRun) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "goos: {}", std::env::consts::OS);
    // Go's names for the architectures, so the header reads like `go test`'s.
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        a => a,
    };
    let _ = writeln!(s, "goarch: {arch}");
    let _ = writeln!(s, "pkg: spindle-bench");
    let _ = writeln!(s, "cpu: {}", run.meta.machine.cpu_model);
    let _ = writeln!(s, "commit: {}", run.meta.git_commit);
    let _ = writeln!(s, "profile: {}", run.profile);
    for r in run.results.iter().filter(|r| r.ok) {
        let ops = r.ops.unwrap_or(1);
        for &ns in &r.samples_ns {
            let _ = writeln!(s, "{}", line(&r.workload, &r.peer, r.workers, ops, ns));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn benchstat_line_format() {
        assert_eq!(camel("skynet"), "Skynet");
        assert_eq!(camel("select_4"), "Select4");
        assert_eq!(camel("fizzbuzz_pipeline_zc"), "FizzbuzzPipelineZc");
        assert_eq!(
            line("skynet", "spindle", 2, 100_000, 25_000_000),
            "BenchmarkSkynet/impl=spindle-2\t100000\t250 ns/op"
        );
        assert_eq!(
            line("fib", "go", 4, 1, 1_500),
            "BenchmarkFib/impl=go-4\t1\t1500 ns/op"
        );
        assert_eq!(
            line("pingpong", "go", 2, 1000, 12_345),
            "BenchmarkPingpong/impl=go-2\t1000\t12.345 ns/op"
        );
    }
}
