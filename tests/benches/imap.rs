//! The IMAP connector against a real Dovecot on loopback: the first sync of a mailbox of
//! `QUARRY_BENCH_IMAP_MESSAGES` messages (default 20,000), from adding the connector to a
//! running server until every message is searchable (fetched over TLS, text extracted and
//! indexed, keyword only), beside mbsync (Debian's isync) fetching the same mailbox over the
//! same TLS to a Maildir in the same run; then the time from an APPEND to the message's first
//! appearance in search, over 20 appends; then the time from an EXPUNGE to the message's last
//! appearance, over 5 expunges (each a listing of every message's headers: no QRESYNC).
//!
//! `make bench` runs it (release build). Goals: at least 0.8x mbsync's messages per second;
//! APPEND-to-searchable p50 under 2 s.

use std::process::Command;
use std::time::{Duration, Instant};

use quarry_tests::bench::{env_or, percentile_ms};
use quarry_tests::dovecot::{Dovecot, PASSWORD, USER};
use quarry_tests::generated::english;
use quarry_tests::mail::Mail;
use quarry_tests::quarry::Quarry;
use quarry_tests::rng::Rng;
use serde_json::json;

/// Appends timed.
const APPENDS: usize = 20;
/// Expunges timed.
const EXPUNGES: usize = 5;

fn main() {
    let messages = env_or("QUARRY_BENCH_IMAP_MESSAGES", 20_000);
    let dovecot = Dovecot::start();
    fill(&dovecot, messages);
    let mbsync = mbsync_seconds(&dovecot);
    let (quarry, latencies, gone) = quarry_seconds(&dovecot, messages);
    let rate = |seconds: f64| messages as f64 / seconds;
    println!(
        "{:>9} {:>10} {:>12} {:>10} {:>12} {:>8} {:>11} {:>11} {:>12} {:>12}",
        "messages",
        "mbsync s",
        "mbsync msg/s",
        "quarry s",
        "quarry msg/s",
        "ratio",
        "append p50",
        "append max",
        "expunge p50",
        "expunge max"
    );
    println!(
        "{:>9} {:>10.1} {:>12.0} {:>10.1} {:>12.0} {:>7.2}x {:>9.0}ms {:>9.0}ms {:>10.0}ms {:>10.0}ms",
        messages,
        mbsync,
        rate(mbsync),
        quarry,
        rate(quarry),
        rate(quarry) / rate(mbsync),
        percentile_ms(&latencies, 0.5),
        percentile_ms(&latencies, 1.0),
        percentile_ms(&gone, 0.5),
        percentile_ms(&gone, 1.0),
    );
    println!(
        "ratio: Quarry's messages/s (fetched over TLS, text extracted, indexed, searchable) over\n\
         mbsync's (fetched over TLS to a Maildir). append: ms from an APPEND's answer to the\n\
         message's first appearance in search (IDLE), over {APPENDS} appends. expunge: ms from an\n\
         EXPUNGE's answer to the message's last appearance, over {EXPUNGES} expunges."
    );
}

/// Puts `messages` messages of generated English (a few paragraphs each) in INBOX and two
/// other folders.
fn fill(dovecot: &Dovecot, messages: usize) {
    let mut client = dovecot.client();
    for folder in ["Archive", "Lists"] {
        client.create(folder);
    }
    let mut rng = Rng(52);
    let started = Instant::now();
    for n in 0..messages {
        let folder = ["INBOX", "Archive", "Lists"][n % 3];
        let body = english(&mut rng, 120 + n % 400);
        let mail = Mail::new(
            "Sender <sender@example.org>",
            &format!("Message {n} {}", english(&mut rng, 4)),
            &format!("bench-{n}@example.org"),
            &body,
        );
        client.append(folder, &mail.bytes());
    }
    eprintln!(
        "appended {messages} messages in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// Seconds mbsync takes to fetch every folder to a fresh Maildir.
fn mbsync_seconds(dovecot: &Dovecot) -> f64 {
    let dir = tempfile::tempdir().expect("tempdir");
    let maildir = dir.path().join("mail");
    std::fs::create_dir(&maildir).expect("mkdir");
    let config = dir.path().join("mbsyncrc");
    std::fs::write(
        &config,
        format!(
            "IMAPAccount bench\nHost localhost\nPort {}\nUser {USER}\nPass {PASSWORD}\n\
             SSLType IMAPS\nCertificateFile {}\n\n\
             IMAPStore far\nAccount bench\n\n\
             MaildirStore near\nPath {}/\nInbox {}/INBOX\nSubFolders Verbatim\n\n\
             Channel bench\nFar :far:\nNear :near:\nPatterns *\nCreate Near\nSync Pull\nSyncState *\n",
            dovecot.imaps_port,
            dovecot.ca_file().display(),
            maildir.display(),
            maildir.display()
        ),
    )
    .expect("write mbsyncrc");
    let started = Instant::now();
    let out = Command::new("mbsync")
        .arg("-c")
        .arg(&config)
        .arg("-a")
        .output()
        .expect("mbsync runs (`make setup` installs isync)");
    let seconds = started.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "mbsync failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    seconds
}

/// Seconds from adding the connector to a running server until all `messages` are indexed,
/// and the APPEND-to-searchable times.
/// The first sync's seconds, then the APPEND and EXPUNGE latencies.
fn quarry_seconds(dovecot: &Dovecot, messages: usize) -> (f64, Vec<Duration>, Vec<Duration>) {
    let mut q = Quarry::new();
    q.without_model();
    q.start();
    let key = q.integration("bench", "all", &[]);
    let started = Instant::now();
    let args = dovecot.connector_add_args(&dovecot.imaps_url());
    q.cli_ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let until = Instant::now() + Duration::from_secs(3600);
    loop {
        let connectors = q.connectors();
        if connectors[0]["doc_count"].as_u64() == Some(messages as u64)
            && connectors[0]["status"] == "idle"
        {
            break;
        }
        assert!(
            Instant::now() < until,
            "the first sync did not end: {connectors:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let seconds = started.elapsed().as_secs_f64();
    let mut client = dovecot.client();
    let mut latencies = Vec::new();
    let mut appended_uids = Vec::new();
    for n in 0..APPENDS {
        let word = format!("appendedword{n}");
        let uid = client.append(
            "INBOX",
            &Mail::new(
                "New <new@example.org>",
                "New mail",
                &format!("append-{n}@example.org"),
                &word,
            )
            .bytes(),
        );
        appended_uids.push((uid, word.clone()));
        latencies.push(until_found(&q, &key, &word, 1));
    }
    let mut gone = Vec::new();
    for (uid, word) in appended_uids.into_iter().take(EXPUNGES) {
        client.expunge("INBOX", uid);
        gone.push(until_found(&q, &key, &word, 0));
    }
    (seconds, latencies, gone)
}

/// How long until a search for `word` finds `total` documents.
fn until_found(q: &Quarry, key: &str, word: &str, total: u64) -> Duration {
    let asked = Instant::now();
    loop {
        let found = q.search_ok(
            key,
            json!({"query": word, "semantic_search": false, "limit": 1}),
        );
        if found["total"] == total {
            return asked.elapsed();
        }
        assert!(
            asked.elapsed() < Duration::from_secs(120),
            "{word} never had {total} results"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
