//! Hostile files in a granted folder, against real components: FIFOs, sockets and devices never
//! block a call (opens are non-blocking and the opened object is checked), and Quarry's own
//! folders are out of reach wherever they sit inside a grant.

mod common;

use std::fs;
use std::os::unix::fs::symlink;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{folder_session, list_all, load, quick_limits, settings};
use quarry_core::DocId;
use quarry_runtime::{
    GuestError, Limits, Runtime, RuntimeConfig, RuntimeError, RuntimeErrorKind, Session,
};
use rustix::fs::{CWD, FileType, Mode, mknodat};

/// A runtime that protects `protected` (as the server protects its data folder and caches).
fn runtime_protecting(protected: &[PathBuf]) -> Runtime {
    Runtime::new(RuntimeConfig {
        cache_dir: Some(quarry_tests::component_cache()),
        protected: protected.to_vec(),
        ..RuntimeConfig::default()
    })
    .expect("runtime starts")
}

fn mkfifo(path: &Path) {
    mknodat(CWD, path, FileType::Fifo, Mode::RUSR | Mode::WUSR, 0).expect("mkfifo");
}

/// A device node that blocks on read: the terminal side of a new pseudo-terminal, made with
/// mknod (root only; `None` otherwise). The returned master keeps it open and silent.
fn blocking_device(path: &Path) -> Option<std::os::fd::OwnedFd> {
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).ok()?;
    grantpt(&master).ok()?;
    unlockpt(&master).ok()?;
    let name = ptsname(&master, Vec::new()).ok()?;
    let terminal = rustix::fs::stat(name.as_c_str()).ok()?;
    mknodat(
        CWD,
        path,
        FileType::CharacterDevice,
        Mode::RUSR | Mode::WUSR,
        terminal.st_rdev,
    )
    .ok()?;
    Some(master)
}

/// The hostile plugin reading every entry of `folder` (and `probe` first, if given).
fn read_all(runtime: &Runtime, folder: &Path, probe: Option<&str>) -> (String, Duration) {
    let plugin = load(runtime, "hostile", quick_limits());
    let folder = folder.to_string_lossy().into_owned();
    let mut pairs = vec![("mode", "read-all"), ("folder", folder.as_str())];
    if let Some(probe) = probe {
        pairs.push(("probe", probe));
    }
    let (values, grant) = settings(&plugin, &pairs);
    let mut session: Session = plugin.session(&values, &grant, None).expect("session");
    let id = DocId::parse("probe").expect("id");
    let started = Instant::now();
    let text = session
        .fetch_content(&id, "probe")
        .expect("the plugin reports what it read")
        .text;
    (text, started.elapsed())
}

fn line<'a>(report: &'a str, name: &str) -> &'a str {
    report
        .lines()
        .find(|l| {
            l.split_once(' ')
                .is_some_and(|(_, rest)| rest.starts_with(&format!("{name}:")))
        })
        .unwrap_or_else(|| panic!("no line for {name} in:\n{report}"))
}

/// The line of `report` on what the host's bulk reads did with `name`.
fn bulk_line<'a>(report: &'a str, name: &str) -> &'a str {
    report
        .lines()
        .find(|l| {
            l.strip_prefix("BULK ")
                .and_then(|rest| rest.split_once(' '))
                .is_some_and(|(_, rest)| rest.starts_with(&format!("{name}:")))
        })
        .unwrap_or_else(|| panic!("no bulk line for {name} in:\n{report}"))
}

#[test]
fn fifos_sockets_and_devices_in_a_granted_folder_never_block_a_call() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    fs::write(dir.join("plain.txt"), "plain text").expect("write");
    mkfifo(&dir.join("fifo"));
    // A FIFO with a writer that never writes: opening it would not block, reading it would.
    mkfifo(&dir.join("fifo-with-writer"));
    let _writer = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(dir.join("fifo-with-writer"))
        .expect("hold the FIFO open");
    let _socket = UnixListener::bind(dir.join("socket")).expect("bind a socket");
    let _terminal = blocking_device(&dir.join("terminal"));

    let (report, took) = read_all(&common::runtime(), dir, None);
    assert!(
        took < Duration::from_secs(1),
        "nothing waited (the deadline is 2 s): {took:?}\n{report}"
    );
    assert_eq!(line(&report, "plain.txt"), "READ plain.txt: 10 bytes");
    let mut specials = vec!["fifo", "fifo-with-writer", "socket"];
    if _terminal.is_some() {
        specials.push("terminal");
    }
    for name in specials {
        assert!(
            line(&report, name).starts_with("DENIED"),
            "{name} must be refused:\n{report}"
        );
        assert!(
            bulk_line(&report, name).starts_with(&format!("BULK DENIED {name}:")),
            "{report}"
        );
    }
    assert_eq!(
        bulk_line(&report, "plain.txt"),
        "BULK READ plain.txt: plain text (10 bytes)"
    );
}

#[test]
fn the_folder_connector_skips_special_files_and_finds_a_file_swapped_for_a_fifo_gone() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    fs::write(dir.join("a.txt"), "first").expect("write");
    fs::write(dir.join("b.txt"), "second").expect("write");
    mkfifo(&dir.join("pipe"));
    let runtime = common::runtime();
    let folder = load(&runtime, "folder", quick_limits());
    let mut session = folder_session(&folder, dir);
    let (docs, _) = list_all(&mut session).expect("lists");
    let listed: Vec<&str> = docs.iter().map(|d| d.locator.as_str()).collect();
    assert_eq!(listed, ["a.txt", "b.txt"]);

    // Between listing and reading, a.txt becomes a FIFO nobody writes to.
    fs::remove_file(dir.join("a.txt")).expect("remove");
    mkfifo(&dir.join("a.txt"));
    let a = &docs[0];
    let started = Instant::now();
    let content = session.fetch_content(&a.id, &a.locator);
    let chunk = session.read_file(&a.id, &a.locator, 0, 1024);
    assert!(started.elapsed() < Duration::from_secs(1));
    for outcome in [content.map(|_| ()), chunk.map(|_| ())] {
        match outcome {
            Err(RuntimeError {
                kind:
                    RuntimeErrorKind::Guest {
                        error: GuestError::NotFound(message),
                    },
                ..
            }) => assert!(message.contains("no longer a regular file"), "{message}"),
            other => panic!("expected not-found, got {other:?}"),
        }
    }
    // The session is unharmed.
    let b = &docs[1];
    assert_eq!(
        session.fetch_content(&b.id, &b.locator).expect("b").text,
        "second"
    );
}

#[test]
fn quarrys_own_folders_inside_a_grant_are_out_of_reach() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let share = tmp.path().join("share");
    let own = share.join("q");
    fs::create_dir_all(own.join("index")).expect("mkdir");
    fs::write(share.join("notes.txt"), "my notes").expect("write");
    fs::write(own.join("admin-token"), "secret-token").expect("write");
    fs::write(own.join("index/segment"), "index bytes").expect("write");
    symlink("q/admin-token", share.join("link-to-token")).expect("symlink");
    symlink("q", share.join("link-to-own")).expect("symlink");
    let runtime = runtime_protecting(std::slice::from_ref(&own));

    let (report, _) = read_all(&runtime, &share, Some("q/admin-token"));
    assert!(!report.contains("secret-token"), "{report}");
    for denied in ["q", "link-to-token", "link-to-own", "stat q/admin-token"] {
        let line = report
            .lines()
            .find(|l| l.starts_with(&format!("DENIED {denied}:")))
            .unwrap_or_else(|| panic!("{denied} must be refused:\n{report}"));
        assert!(line.contains("ermission denied"), "{line}");
    }
    assert!(report.contains("DENIED q/admin-token:"), "{report}");
    assert_eq!(line(&report, "notes.txt"), "READ notes.txt: 8 bytes");
    // The host's bulk reads refuse the same (links, even inside, are left to WASI's checks).
    for denied in ["q", "link-to-token", "link-to-own", "q/admin-token"] {
        assert_eq!(
            bulk_line(&report, denied),
            format!("BULK DENIED {denied}: refused"),
            "{report}"
        );
    }
    assert_eq!(
        bulk_line(&report, "notes.txt"),
        "BULK READ notes.txt: my notes (8 bytes)"
    );

    // The same when the granted path is a link to the folder: plain paths below a granted folder
    // are checked against the folder's real path, not the name it was granted under.
    let alias = tmp.path().join("share-alias");
    symlink(&share, &alias).expect("symlink");
    let (report, _) = read_all(&runtime, &alias, Some("q/admin-token"));
    assert!(!report.contains("secret-token"), "{report}");
    assert!(report.contains("DENIED q/admin-token:"), "{report}");
    assert!(report.contains("DENIED q:"), "{report}");
    for denied in ["q", "q/admin-token"] {
        assert!(
            bulk_line(&report, denied).starts_with("BULK DENIED"),
            "{report}"
        );
    }
    assert_eq!(line(&report, "notes.txt"), "READ notes.txt: 8 bytes");

    // The folder connector lists what is the user's, and nothing of Quarry's.
    let folder = load(&runtime, "folder", Limits::default());
    let mut session = folder_session(&folder, &share);
    let (docs, _) = list_all(&mut session).expect("lists");
    let listed: Vec<&str> = docs.iter().map(|d| d.locator.as_str()).collect();
    assert_eq!(listed, ["notes.txt"]);

    // A grant of the protected folder itself (or of a folder inside it) is refused outright.
    for inside in [own.clone(), own.join("index")] {
        let path = inside.to_string_lossy().into_owned();
        let (values, grant) = settings(&folder, &[("folder", &path)]);
        let err = folder
            .session(&values, &grant, None)
            .err()
            .expect("refused");
        assert!(
            err.to_string().contains("one of Quarry's own folders"),
            "{err}"
        );
    }
}

/// What one entry of the granted folder is, for the table below.
enum Entry {
    File(&'static str),
    Folder,
    Fifo,
    Socket,
    Symlink(&'static str),
    HardLink(&'static str),
    DataFolderCopy,
}

/// One table of what a granted folder may hold, each read by the plugin through WASI (`open-at`)
/// and through the host's bulk reads (`read-file-start`, `read-folder`): both go through the one
/// guarded open, so each entry is read by both or refused by both.
#[test]
fn wasi_opens_and_bulk_reads_refuse_the_same_entries() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let share = tmp.path().join("share");
    let own = share.join("q");
    fs::create_dir_all(&own).expect("mkdir");
    fs::write(own.join("admin-token"), "secret-token").expect("write");
    fs::write(tmp.path().join("outside.txt"), "outside").expect("write");
    let table: [(&str, Entry, bool); 11] = [
        ("notes.txt", Entry::File("my notes"), true),
        ("folder", Entry::Folder, true),
        ("q", Entry::Folder, false),
        ("fifo", Entry::Fifo, false),
        ("socket", Entry::Socket, false),
        ("link-to-token", Entry::Symlink("q/admin-token"), false),
        ("link-to-own", Entry::Symlink("q"), false),
        ("link-out", Entry::Symlink("../outside.txt"), false),
        ("link-up", Entry::Symlink(".."), false),
        ("token-hard-link", Entry::HardLink("q/admin-token"), false),
        ("backup", Entry::DataFolderCopy, false),
    ];
    let mut keep = Vec::new();
    for (name, entry, _) in &table {
        let path = share.join(name);
        match entry {
            Entry::File(text) => fs::write(&path, text).expect("write"),
            Entry::Folder if *name == "q" => {}
            Entry::Folder => {
                fs::create_dir(&path).expect("mkdir");
                fs::write(path.join("inside.txt"), "inside").expect("write");
            }
            Entry::Fifo => mkfifo(&path),
            Entry::Socket => keep.push(UnixListener::bind(&path).expect("bind a socket")),
            Entry::Symlink(target) => symlink(target, &path).expect("symlink"),
            Entry::HardLink(target) => fs::hard_link(share.join(target), &path).expect("link"),
            Entry::DataFolderCopy => {
                fs::create_dir_all(path.join("index")).expect("mkdir");
                fs::write(path.join("quarry.db"), "db").expect("write");
                fs::write(path.join("index/quarry-format"), "9").expect("write");
            }
        }
    }
    let runtime = runtime_protecting(std::slice::from_ref(&own));

    let (report, took) = read_all(&runtime, &share, None);
    assert!(took < Duration::from_secs(1), "nothing waited: {took:?}");
    assert!(!report.contains("secret-token"), "{report}");
    assert!(!report.contains("outside"), "{report}");
    for (name, _, readable) in &table {
        let (wasi, bulk) = (line(&report, name), bulk_line(&report, name));
        if *readable {
            assert!(
                wasi.starts_with(&format!("READ {name}:")),
                "{wasi}\n{report}"
            );
            assert!(
                bulk.starts_with(&format!("BULK READ {name}:")),
                "{bulk}\n{report}"
            );
        } else {
            assert!(
                wasi.starts_with(&format!("DENIED {name}:")),
                "{wasi}\n{report}"
            );
            assert_eq!(bulk, format!("BULK DENIED {name}: refused"), "{report}");
        }
    }
}
