//! `make bench`: Quarry's credential detector beside detect-secrets (PyPI 1.5.0, in a bench-only
//! virtualenv) on the same shared folder (`quarry_tests::credentials`: credentials of many kinds,
//! also in other forms (attached, quoted, joined, encoded, archived), and their look-alikes),
//! recall and false positives side by side, Quarry judging each file as a sync does (its text,
//! and its original's bytes and members); then Quarry's detector over a real source tree (the
//! crates in `~/.cargo/registry/src`, whose test keys count as credentials held back, rightly),
//! its findings counted and listed by rule, and its time, and that of judging every original
//! file of the tree, beside keyword indexing of the same files in the same run.
//!
//! `QUARRY_SECRETS_BENCH` names the virtualenv (default `~/.cache/quarry/tools/secrets-bench`),
//! `QUARRY_SECRETS_TREE` the source tree, `QUARRY_SECRETS_TREE_FILES` how many of its files at
//! most (default 100,000).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod common;

use quarry_core::DocMeta;
use quarry_credentials::{Detector, FileScan, Findings, Scan, Subject, is_archive, judge_archive};
use quarry_tests::bench::env_or;
use quarry_tests::credentials::{SharedFolder, shared_folder};
use sha2::{Digest, Sha256};

const SEED: u64 = 0x5eed_c0ff_ee00_0032;
const BUDGET: Duration = Duration::from_secs(5);

fn main() {
    let folder = shared_folder(SEED);
    let dir = tempfile::tempdir().expect("temp dir");
    folder.write(dir.path());
    compare_with_detect_secrets(&folder, dir.path());
    let tree = std::env::var_os("QUARRY_SECRETS_TREE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo/registry/src")))
        .expect("a source tree: set QUARRY_SECRETS_TREE");
    source_tree(&tree, env_or("QUARRY_SECRETS_TREE_FILES", 100_000));
}

/// The text a sync would scan for a file of `bytes`: its text when it is text, else nothing
/// (a binary file is judged by its name).
fn text_of(bytes: &[u8]) -> String {
    if bytes.contains(&0) {
        return String::new();
    }
    String::from_utf8(bytes.to_vec()).unwrap_or_default()
}

fn scan(path: &str, text: &str) -> Scan {
    Detector::shared().scan(&Subject { path, text }, BUDGET)
}

/// Judges a file's original as a sync does: hashed, read a chunk of 1 MiB at a time, a chunk
/// that is byte for byte its judged `text` not scanned again, an archive's members opened.
fn judge_original(path: &str, bytes: &[u8], text: &str) -> Findings {
    let mut hasher = Sha256::new();
    let mut scan = FileScan::new(path);
    for (n, chunk) in bytes.chunks(1 << 20).enumerate() {
        hasher.update(chunk);
        let at = n << 20;
        let judged = text.as_bytes().get(at..at + chunk.len()) == Some(chunk);
        if scan.feed(chunk, judged).is_err() || scan.found() {
            break;
        }
    }
    std::hint::black_box(hasher.finalize());
    let findings = scan.findings();
    if is_archive(bytes) && findings.is_clear() {
        return judge_archive(std::io::Cursor::new(bytes), path);
    }
    findings
}

/// Whether a sync holds the file back: its text holds a credential, or its original does.
fn held_back(path: &str, bytes: &[u8]) -> bool {
    let text = text_of(bytes);
    !scan(path, &text).is_clear() || judge_original(path, bytes, &text).found()
}

/// Recall on the credentials and false positives on the look-alikes, Quarry beside
/// detect-secrets.
fn compare_with_detect_secrets(folder: &SharedFolder, dir: &Path) {
    let quarry: BTreeSet<String> = folder
        .files
        .iter()
        .filter(|f| held_back(&f.path, &f.bytes))
        .map(|f| f.path.clone())
        .collect();
    let detect_secrets = run_detect_secrets(dir);
    let credentials: Vec<&str> = folder.credentials.iter().map(|c| c.path.as_str()).collect();
    let look_alikes: Vec<&str> = folder.look_alikes.iter().map(|l| l.path.as_str()).collect();
    let found =
        |set: &BTreeSet<String>, paths: &[&str]| paths.iter().filter(|p| set.contains(**p)).count();
    println!(
        "credentials: {} files of {} kinds, look-alikes: {} files",
        credentials.len(),
        folder.kinds(),
        look_alikes.len()
    );
    println!(
        "{:<16} {:>16} {:>18}",
        "detector", "recall", "false positives"
    );
    let mut recalls = Vec::new();
    for (name, set) in [("quarry", &quarry), ("detect-secrets", &detect_secrets)] {
        let hits = found(set, &credentials);
        let recall = hits as f64 / credentials.len() as f64;
        recalls.push(recall);
        println!(
            "{name:<16} {:>9} ({recall:.3}) {:>12}/{}",
            format!("{hits}/{}", credentials.len()),
            found(set, &look_alikes),
            look_alikes.len()
        );
    }
    for (name, set) in [("quarry", &quarry), ("detect-secrets", &detect_secrets)] {
        let missed: Vec<&str> = folder
            .credentials
            .iter()
            .filter(|c| !set.contains(&c.path))
            .map(|c| c.kind)
            .collect();
        let wrong: Vec<&str> = look_alikes
            .iter()
            .copied()
            .filter(|p| set.contains(*p))
            .collect();
        println!("  {name} missed: {}", list(&missed));
        println!("  {name} flagged look-alikes: {}", list(&wrong));
    }
    assert!(
        recalls[0] >= recalls[1],
        "Quarry's recall {:.3} is below detect-secrets' {:.3}",
        recalls[0],
        recalls[1]
    );
}

fn list(items: &[&str]) -> String {
    if items.is_empty() {
        "none".to_owned()
    } else {
        items.join(", ")
    }
}

/// The files (relative paths) detect-secrets reports a secret in.
fn run_detect_secrets(dir: &Path) -> BTreeSet<String> {
    let venv = std::env::var_os("QUARRY_SECRETS_BENCH")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .map(|h| PathBuf::from(h).join(".cache/quarry/tools/secrets-bench"))
        })
        .expect("a virtualenv");
    let program = venv.join("bin/detect-secrets");
    assert!(
        program.is_file(),
        "no detect-secrets in {}: `make bench` installs it",
        venv.display()
    );
    let started = Instant::now();
    let output = std::process::Command::new(program)
        .args(["scan", "--all-files", "."])
        .current_dir(dir)
        .output()
        .expect("detect-secrets runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("detect-secrets prints JSON");
    println!(
        "detect-secrets 1.5.0 (default plugins) scanned the folder in {:.2} s",
        started.elapsed().as_secs_f64()
    );
    report["results"]
        .as_object()
        .map(|results| {
            results
                .iter()
                .filter(|(_, found)| found.as_array().is_some_and(|f| !f.is_empty()))
                .map(|(path, _)| path.trim_start_matches("./").to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Text files of `root` (sorted, at most `max`, each at most 1 MiB), as (relative path, text).
fn text_files(root: &Path, max: usize) -> Vec<(String, String)> {
    let mut paths = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                pending.push(entry.path());
            } else if kind.is_file() {
                paths.push(entry.path());
            }
        }
    }
    paths.sort();
    let mut files = Vec::new();
    for path in paths {
        if files.len() >= max {
            break;
        }
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if meta.len() > 1 << 20 {
            continue;
        }
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        let text = text_of(&bytes);
        if text.is_empty() {
            continue;
        }
        let rel = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .to_string_lossy()
            .into_owned();
        files.push((rel, text));
    }
    files
}

/// Quarry's findings on a real source tree, by rule, and the detector's time beside keyword
/// indexing of the same files.
fn source_tree(root: &Path, max: usize) {
    let files = text_files(root, max);
    let bytes: usize = files.iter().map(|(_, t)| t.len()).sum();
    println!(
        "\nsource tree {}: {} text files, {:.1} MiB",
        root.display(),
        files.len(),
        bytes as f64 / 1048576.0
    );
    let started = Instant::now();
    let scans: Vec<Scan> = files.iter().map(|(path, text)| scan(path, text)).collect();
    let detecting = started.elapsed();
    let originals = judge_originals(root, max);
    let indexing = index_all(&files);
    let mut by_rule: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut flagged = 0;
    let mut incomplete = 0;
    for ((path, _), found) in files.iter().zip(&scans) {
        if found.is_clear() {
            continue;
        }
        flagged += 1;
        incomplete += usize::from(!found.complete);
        let mut rules: BTreeSet<&str> = found.secrets.iter().map(|s| s.rule.id).collect();
        rules.extend(found.credential_file.map(|r| r.id));
        for rule in rules {
            by_rule.entry(rule).or_default().push(path);
        }
    }
    println!(
        "held back: {flagged} files ({:.2}%), {incomplete} of them for running out of time",
        100.0 * flagged as f64 / files.len().max(1) as f64
    );
    let mut rules: Vec<(&str, Vec<&str>)> = by_rule.into_iter().collect();
    rules.sort_by_key(|(_, paths)| std::cmp::Reverse(paths.len()));
    for (rule, paths) in &rules {
        println!("  {rule:<28} {:>5} file(s)", paths.len());
        for path in paths.iter().take(10) {
            println!("      {path}");
        }
        if paths.len() > 10 {
            println!("      and {} more", paths.len() - 10);
        }
    }
    let ratio = detecting.as_secs_f64() / indexing.as_secs_f64();
    println!(
        "detection {:.2} s ({:.0} MiB/s) beside keyword indexing {:.2} s: {:.1}% of indexing time (target: at most 10%)",
        detecting.as_secs_f64(),
        bytes as f64 / 1048576.0 / detecting.as_secs_f64(),
        indexing.as_secs_f64(),
        ratio * 100.0
    );
    let both = (detecting + originals).as_secs_f64() / indexing.as_secs_f64();
    println!(
        "judging every original {:.2} s; text and originals together: {:.1}% of keyword indexing time (target: at most 10%)",
        originals.as_secs_f64(),
        both * 100.0
    );
}

/// Judges every file of `root` (at most `max`, each at most 8 MiB, binary files too) as a sync
/// judges originals; prints what it found and could not judge; the time taken.
fn judge_originals(root: &Path, max: usize) -> Duration {
    let paths = all_files(root, max);
    let mut bytes_read = 0usize;
    let mut elapsed = Duration::ZERO;
    let mut found = 0;
    let mut unread: BTreeMap<String, usize> = BTreeMap::new();
    let mut archives = 0;
    for path in &paths {
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        let rel = path.strip_prefix(root).unwrap_or(path).to_string_lossy();
        // The text a sync judged first (a text file's own bytes).
        let text = text_of(&bytes);
        bytes_read += bytes.len();
        archives += usize::from(is_archive(&bytes));
        let started = Instant::now();
        let findings = judge_original(&rel, &bytes, &text);
        elapsed += started.elapsed();
        let holds = findings.found();
        found += usize::from(holds);
        if let Some(why) = findings.unread.filter(|_| !holds) {
            let reason = why
                .split(['(', ':'])
                .next()
                .unwrap_or(&why)
                .trim()
                .to_owned();
            *unread.entry(reason).or_default() += 1;
        }
    }
    println!(
        "originals: {} files ({archives} archives), {:.1} MiB judged in {:.2} s; {found} hold a credential",
        paths.len(),
        bytes_read as f64 / 1048576.0,
        elapsed.as_secs_f64()
    );
    for (reason, count) in &unread {
        println!("  not judged, {count} file(s): {reason}");
    }
    elapsed
}

/// Every file of `root` (sorted, at most `max`, each at most 8 MiB).
fn all_files(root: &Path, max: usize) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => pending.push(entry.path()),
                Ok(kind)
                    if kind.is_file() && entry.metadata().is_ok_and(|m| m.len() <= 8 << 20) =>
                {
                    paths.push(entry.path());
                }
                _ => {}
            }
        }
    }
    paths.sort();
    paths.truncate(max);
    paths
}

/// Indexes `files` (path, text) as the folder connector's documents; the time taken.
fn index_all(files: &[(String, String)]) -> Duration {
    common::index_all(
        files
            .iter()
            .map(|(path, text)| {
                let meta = DocMeta {
                    title: path.rsplit('/').next().unwrap_or(path).to_owned(),
                    path: Some(path.clone()),
                    url: None,
                    mime_type: "text/plain".into(),
                    size_bytes: text.len() as u64,
                    update_time_ms: 0,
                };
                (meta, text.clone())
            })
            .collect(),
    )
}
