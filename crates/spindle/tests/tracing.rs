//! The `tracing` feature: each task runs in a `task` span naming its spawn
//! site (and its name, given through `task::Builder`), and spindle's
//! reports become `tracing` events.

use std::io::Write;
use std::sync::{Arc, Mutex};

/// A writer into a shared buffer, for `tracing_subscriber::fmt`.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn tasks_run_in_spans_and_reports_are_events() {
    let out = Captured::default();
    let writer = out.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::set_global_default(subscriber).unwrap();

    let rt = spindle::Runtime::new().unwrap();
    let spawn_line = rt.block_on(async {
        let spawn_line = line!() + 1;
        let task = spindle::spawn(async { tracing::info!("inside a task") });
        let id = task.id();
        task.await.unwrap();
        spindle::report::warn(spindle::report::Kind::Telemetry, format_args!("a report"));
        let named_line = line!() + 3;
        spindle::task::Builder::new()
            .name("flusher")
            .spawn(async { tracing::info!("inside a named task") })
            .await
            .unwrap();
        (spawn_line, named_line, id)
    });
    let (spawn_line, named_line, id) = spawn_line;
    let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
    let event = text
        .lines()
        .find(|l| l.contains("inside a task"))
        .unwrap_or_else(|| panic!("no task event in:\n{text}"));
    assert!(
        event.contains(&format!("task.id={id}")),
        "the span's id is the task's: {event}"
    );
    let site = format!("spawn.location=crates/spindle/tests/tracing.rs:{spawn_line}:");
    assert!(event.contains(&site), "{event}");
    let named = text
        .lines()
        .find(|l| l.contains("inside a named task"))
        .unwrap_or_else(|| panic!("no named task event in:\n{text}"));
    assert!(
        named.contains("task.name=\"flusher\"") || named.contains("task.name=flusher"),
        "{named}"
    );
    let site = format!("spawn.location=crates/spindle/tests/tracing.rs:{named_line}:");
    assert!(
        named.contains(&site),
        "the builder keeps the caller's spawn site: {named}"
    );
    assert!(
        !event.contains("task.name"),
        "an unnamed task has no name field: {event}"
    );
    let report = text
        .lines()
        .find(|l| l.contains("a report"))
        .unwrap_or_else(|| panic!("no report event in:\n{text}"));
    assert!(
        report.contains("WARN") && report.contains("kind=Telemetry"),
        "{report}"
    );
}
