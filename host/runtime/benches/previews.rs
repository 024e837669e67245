//! How fast a page preview is drawn (docs/api.md, "Page previews"): Quarry's page renderer in
//! its sandbox, a new instance per page as the API runs it, beside poppler's `pdftoppm` (Debian
//! poppler-utils; `make setup` installs it) drawing the same pages of the same PDF at the same
//! width as PNG, one process per page as a per-request server would (and, for its floor, every
//! page in one process), in the same run. The PDF:
//! `QUARRY_BENCH_PAGES` pages (default 20) of 45 lines of text each, Flate-compressed; 800
//! pixels wide. Neither side caches a page (the API's cache would answer a page asked again).
//!
//! Run with `make bench` (or `cargo bench -p quarry-runtime --bench previews`).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use quarry_runtime::{Runtime, RuntimeConfig, renderer_limits};
use quarry_tests::bench::{env_or, percentile_ms};

/// The width every page is drawn at.
const WIDTH: u32 = 800;

fn main() {
    let count: usize = env_or("QUARRY_BENCH_PAGES", 20);
    let tmp = tempfile::tempdir().expect("temp dir");
    let lines: Vec<Vec<String>> = (0..count)
        .map(|p| {
            (0..45)
                .map(|l| format!("Page {p} line {l}: the quarterly review of the harbour works and its costs."))
                .collect()
        })
        .collect();
    let pages: Vec<Vec<&str>> = lines
        .iter()
        .map(|page| page.iter().map(String::as_str).collect())
        .collect();
    let page_refs: Vec<&[&str]> = pages.iter().map(Vec::as_slice).collect();
    let pdf = quarry_tests::pdf::pdf("Bench", &page_refs, true);
    let file = tmp.path().join("bench.pdf");
    std::fs::write(&file, &pdf).expect("write the PDF");

    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: Some(quarry_tests::component_cache()),
        ..RuntimeConfig::default()
    })
    .expect("runtime");
    let renderer = runtime
        .load_renderer(&quarry_tests::renderer_component(), renderer_limits())
        .expect("the renderer loads");
    let ours = |page: usize| {
        let started = Instant::now();
        let drawn = renderer
            .render(&pdf, "application/pdf", page as u32, WIDTH, false)
            .expect("no sandbox failure")
            .expect("drawn");
        assert_eq!(drawn.width, WIDTH);
        started.elapsed()
    };
    let theirs = |page: usize| {
        let started = Instant::now();
        pdftoppm(&file, Some(page), &tmp.path().join(format!("p{page}")));
        started.elapsed()
    };
    // Warm both (the component compiled and mapped, pdftoppm's files in the page cache).
    ours(1);
    theirs(1);
    let mut quarry = Vec::new();
    let mut poppler = Vec::new();
    for page in 1..=count {
        quarry.push(ours(page));
        poppler.push(theirs(page));
    }
    // And pdftoppm drawing every page in one process: its start-up paid once.
    let started = Instant::now();
    pdftoppm(&file, None, &tmp.path().join("all"));
    let one_process = started.elapsed() / u32::try_from(count.max(1)).unwrap_or(1);
    report(count, &quarry, &poppler, one_process);
}

/// Runs `pdftoppm` on `file`, `WIDTH` pixels wide, as PNG to `out`: one `page`, or all.
fn pdftoppm(file: &Path, page: Option<usize>, out: &Path) {
    let mut command = Command::new("pdftoppm");
    if let Some(page) = page {
        let page = page.to_string();
        command.args(["-f", &page, "-l", &page, "-singlefile"]);
    }
    let status = command
        .args([
            "-scale-to-x",
            &WIDTH.to_string(),
            "-scale-to-y",
            "-1",
            "-png",
        ])
        .arg(file)
        .arg(out)
        .status()
        .expect("pdftoppm runs (make setup installs poppler-utils)");
    assert!(
        status.success(),
        "pdftoppm drew {page:?} of {}",
        file.display()
    );
}

fn report(count: usize, quarry: &[Duration], poppler: &[Duration], one_process: Duration) {
    println!(
        "{:<52} {:>8} {:>8} {:>8}",
        format!("previews: {count} PDF pages, {WIDTH} px wide"),
        "p50 ms",
        "p95 ms",
        "max ms"
    );
    for (name, times) in [
        (
            "Quarry's renderer (sandboxed, a new instance a page)",
            quarry,
        ),
        ("pdftoppm -png (a process a page, baseline)", poppler),
    ] {
        println!(
            "{name:<52} {:>8.1} {:>8.1} {:>8.1}",
            percentile_ms(times, 0.5),
            percentile_ms(times, 0.95),
            percentile_ms(times, 1.0)
        );
    }
    println!(
        "{:<52} {:>8.1}",
        "pdftoppm -png, every page in one process (mean)",
        one_process.as_secs_f64() * 1e3
    );
    let median = percentile_ms(quarry, 0.5);
    println!(
        "median per page: {:.2}x pdftoppm's a process a page, {:.2}x its mean in one process",
        median / percentile_ms(poppler, 0.5).max(0.01),
        median / (one_process.as_secs_f64() * 1e3).max(0.01)
    );
}
