//! The real folder component, run by the runtime over real folders.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::fs::symlink;
use std::path::Path;

use common::{folder_session, list_all, load, runtime, text_of};
use quarry_core::SourceDoc;
use quarry_runtime::Limits;
use sha2::{Digest, Sha256};

const BIG_FILE_BYTES: u64 = 100 << 20;

/// Writes the mixed folder; returns the relative paths the listing must show.
fn mixed_folder(root: &Path, outside: &Path) -> BTreeSet<String> {
    let write = |rel: &str, bytes: &[u8]| {
        let path = root.join(rel);
        fs::create_dir_all(path.parent().expect("has parent")).expect("mkdir");
        fs::write(path, bytes).expect("write fixture");
    };
    write(
        "notes.txt",
        "Plain notes about sandboxes.\nSecond line, café.".as_bytes(),
    );
    write("readme.md", b"# Quarry\n\nSome *markdown* text.\n");
    write(
        "page.html",
        b"<html><head><title>Web &amp; Page</title><style>b{}</style></head>\
          <body><h1>Hello</h1><p>World <i>wide</i>.</p><script>var hidden = 1;</script></body></html>",
    );
    write(
        "report.pdf",
        &quarry_tests::pdf::pdf(
            "Quarterly Report",
            &[
                &["Page one text", "revenue grew"],
                &["Page two text"],
                &["Page three text", "costs fell"],
            ],
            true,
        ),
    );
    write(
        "letter.docx",
        &quarry_tests::docx::docx(
            "A Letter",
            &["Dear reader,", "Second\tparagraph & more."],
            "A footnote.",
        ),
    );
    write(
        "data.json",
        br#"{"name": "Quarry", "tags": ["search", "local"]}"#,
    );
    write(
        "table.csv",
        b"city,country\nParis,France\n\"Rome, old\",Italy\n",
    );
    write("photo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR binary");
    write("Makefile", b"all:\n\techo build\n");
    write("blob", b"\x00\x01\x02\x03 not text \x00");
    write("sub/dir/deep.txt", b"deep inside");
    write(".hidden.txt", b"hidden");
    write(".git/config", b"[core]");
    write("node_modules/pkg/index.js", b"module.exports = 1;");
    write(".gitignore", b"ignored.txt\n*.bak\n!keep.bak\n");
    write("ignored.txt", b"ignored");
    write("old.bak", b"old backup");
    write("keep.bak", b"kept backup");
    write("sub/.gitignore", b"local.txt\n");
    write("sub/local.txt", b"ignored below sub");
    write("local.txt", b"kept at the root");

    // A 100 MB file with markers at the start, the middle and the end.
    let mut big = fs::File::create(root.join("big.log")).expect("create big file");
    big.set_len(BIG_FILE_BYTES).expect("size big file");
    for (offset, marker) in [
        (0, &b"START"[..]),
        (BIG_FILE_BYTES / 2, b"MIDDLE"),
        (BIG_FILE_BYTES - 3, b"END"),
    ] {
        big.seek(SeekFrom::Start(offset)).expect("seek");
        big.write_all(marker).expect("write marker");
    }

    fs::write(outside.join("secret.txt"), b"TOP SECRET").expect("write secret");
    symlink("notes.txt", root.join("link-in.txt")).expect("symlink");
    symlink(outside.join("secret.txt"), root.join("link-out.txt")).expect("symlink");
    symlink("../outside/secret.txt", root.join("rel-link-out.txt")).expect("symlink");
    symlink(outside, root.join("link-dir-out")).expect("symlink");
    symlink("sub", root.join("link-dir-in")).expect("symlink");
    let fifo = std::process::Command::new("mkfifo")
        .arg(root.join("pipe"))
        .status()
        .expect("mkfifo runs");
    assert!(fifo.success());

    [
        "notes.txt",
        "readme.md",
        "page.html",
        "report.pdf",
        "letter.docx",
        "data.json",
        "table.csv",
        "photo.png",
        "Makefile",
        "blob",
        "big.log",
        "sub/dir/deep.txt",
        "keep.bak",
        "local.txt",
        "link-in.txt",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect()
}

#[test]
fn lists_and_extracts_a_mixed_folder() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("root");
    let outside = tmp.path().join("outside");
    fs::create_dir_all(&root).expect("mkdir");
    fs::create_dir_all(&outside).expect("mkdir");
    let expected = mixed_folder(&root, &outside);

    let runtime = runtime();
    let plugin = load(&runtime, "folder", Limits::default());
    let mut session = folder_session(&plugin, &root);
    let (docs, _) = list_all(&mut session).expect("listing succeeds");
    let by_path: BTreeMap<String, SourceDoc> = docs
        .into_iter()
        .map(|d| (d.meta.path.clone().expect("folder docs have paths"), d))
        .collect();
    let listed: BTreeSet<String> = by_path.keys().cloned().collect();
    assert_eq!(listed, expected, "listing shows exactly the expected files");

    let doc = |p: &str| by_path.get(p).unwrap_or_else(|| panic!("{p} listed"));
    let mut text = |p: &str| text_of(&mut session, doc(p));

    assert_eq!(doc("notes.txt").meta.mime_type, "text/plain");
    assert_eq!(doc("notes.txt").meta.title, "notes.txt");
    assert_eq!(
        text("notes.txt").text,
        "Plain notes about sandboxes.\nSecond line, café."
    );
    assert_eq!(text("link-in.txt").text, text("notes.txt").text);
    assert_eq!(
        text("readme.md").text,
        "# Quarry\n\nSome *markdown* text.\n"
    );
    assert_eq!(doc("readme.md").meta.mime_type, "text/markdown");

    let html = text("page.html");
    assert_eq!(html.text, "Hello\n\nWorld wide.");
    assert!(
        html.metadata
            .contains(&("title".into(), "Web & Page".into()))
    );

    let pdf = text("report.pdf");
    assert_eq!(pdf.page_starts.len(), 3, "three pages: {:?}", pdf.text);
    let pages = pdf.pages();
    assert!(
        pages[0].contains("Page one text") && pages[0].contains("revenue grew"),
        "{pages:?}"
    );
    assert!(
        pages[1].contains("Page two text") && !pages[1].contains("one"),
        "{pages:?}"
    );
    assert!(
        pages[2].contains("Page three text") && pages[2].contains("costs fell"),
        "{pages:?}"
    );
    assert!(pdf.metadata.contains(&("page_count".into(), "3".into())));
    assert!(
        pdf.metadata
            .contains(&("title".into(), "Quarterly Report".into()))
    );
    assert_eq!(doc("report.pdf").meta.mime_type, "application/pdf");

    let docx = text("letter.docx");
    assert_eq!(
        docx.text,
        "Dear reader,\n\nSecond\tparagraph & more.\n\nA footnote."
    );
    assert!(docx.metadata.contains(&("title".into(), "A Letter".into())));

    assert_eq!(
        text("data.json").text,
        "name: Quarry\ntags: search\ntags: local\n"
    );
    assert_eq!(
        text("table.csv").text,
        "city\tcountry\nParis\tFrance\nRome, old\tItaly\n"
    );
    assert_eq!(text("Makefile").text, "all:\n\techo build\n");
    assert_eq!(text("keep.bak").text, "kept backup");
    assert_eq!(text("sub/dir/deep.txt").text, "deep inside");

    for binary in ["photo.png", "blob"] {
        assert!(!doc(binary).has_text, "{binary} is metadata only");
    }
    let big = doc("big.log");
    assert!(!big.has_text, "a file over the size limit is metadata only");
    assert_eq!(big.meta.size_bytes, BIG_FILE_BYTES);
    assert!(text("notes.txt").page_starts.is_empty());
}

#[test]
fn streams_a_big_file_in_chunks_under_a_small_memory_cap() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("root");
    let outside = tmp.path().join("outside");
    fs::create_dir_all(&root).expect("mkdir");
    fs::create_dir_all(&outside).expect("mkdir");
    mixed_folder(&root, &outside);

    let runtime = runtime();
    // 32 MiB of memory for a 100 MB file: it cannot be held whole.
    let limits = Limits {
        memory_bytes: 32 << 20,
        ..Limits::default()
    };
    let plugin = load(&runtime, "folder", limits);
    let mut session = folder_session(&plugin, &root);
    let (docs, _) = list_all(&mut session).expect("listing succeeds");
    let big = docs
        .iter()
        .find(|d| d.locator == "big.log")
        .expect("big.log listed");

    let mut hasher = Sha256::new();
    let mut offset = 0u64;
    loop {
        let chunk = session
            .read_file(&big.id, &big.locator, offset, 1 << 20)
            .expect("chunk reads");
        assert_eq!(chunk.total_size, BIG_FILE_BYTES);
        if chunk.data.is_empty() {
            break;
        }
        offset += chunk.data.len() as u64;
        hasher.update(&chunk.data);
    }
    assert_eq!(offset, BIG_FILE_BYTES);
    let on_disk = Sha256::digest(fs::read(root.join("big.log")).expect("read big file"));
    assert_eq!(hasher.finalize(), on_disk, "streamed bytes equal the file");

    let middle = session
        .read_file(&big.id, &big.locator, BIG_FILE_BYTES / 2, 6)
        .expect("ranged read");
    assert_eq!(middle.data, b"MIDDLE");
    let past_end = session
        .read_file(&big.id, &big.locator, BIG_FILE_BYTES + 10, 6)
        .expect("read past the end");
    assert!(past_end.data.is_empty());
}

#[test]
fn text_files_of_every_size_around_the_reads_are_extracted_whole() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // The connector's first read asks for 64 KiB (a smaller file is read whole by it), and one
    // host read answers at most 1 MiB: sizes on each side of both, and 2.5 MiB (several reads).
    let line = "every line of this file is the same, but for the last one\n";
    let sizes = [
        0,
        1,
        (64 << 10) - 1,
        64 << 10,
        (64 << 10) + 1,
        1 << 20,
        5 << 19,
    ];
    let mut written = BTreeMap::new();
    for size in sizes {
        let mut text = line.repeat(size / line.len() + 1);
        text.truncate(size.saturating_sub(8));
        text.push_str(&"zanzibar"[..size.min(8)]);
        assert_eq!(text.len(), size);
        let name = format!("size-{size}.txt");
        fs::write(tmp.path().join(&name), &text).expect("write");
        written.insert(name, text);
    }

    let runtime = runtime();
    let plugin = load(&runtime, "folder", Limits::default());
    let mut session = folder_session(&plugin, tmp.path());
    let (docs, _) = list_all(&mut session).expect("lists");
    assert_eq!(docs.len(), sizes.len());
    for doc in &docs {
        let content = session
            .fetch_content(&doc.id, &doc.locator)
            .expect("extracts");
        let text = &written[&doc.locator];
        assert_eq!(content.text.len(), text.len(), "{}", doc.locator);
        assert!(
            content.text == *text,
            "{}: the text is the file's, byte for byte",
            doc.locator
        );
    }
}

#[test]
fn a_folder_over_the_bulk_listing_limit_is_listed_whole_through_wasi() {
    // `read-folder` answers at most 100,000 entries; past that the SDK lists through WASI and
    // stats each file itself. Empty files, but one with text, whose size must come through.
    const FILES: usize = 100_001;
    let tmp = tempfile::tempdir().expect("tempdir");
    for i in 0..FILES - 1 {
        fs::File::create(tmp.path().join(format!("e{i:06}.txt"))).expect("create");
    }
    fs::write(tmp.path().join("zz-last.txt"), "the last file").expect("write");
    let runtime = runtime();
    let plugin = load(&runtime, "folder", Limits::default());
    let mut session = folder_session(&plugin, tmp.path());
    let (docs, _) = list_all(&mut session).expect("listing succeeds");
    assert_eq!(docs.len(), FILES);
    let ids: BTreeSet<&str> = docs.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids.len(), FILES, "no document twice");
    let last = docs
        .iter()
        .find(|d| d.locator == "zz-last.txt")
        .expect("the last file is listed");
    assert_eq!(last.meta.size_bytes, 13);
    assert_eq!(text_of(&mut session, last).text, "the last file");
}

#[test]
fn listing_resumes_from_checkpoints_without_loss_or_duplicates() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut expected = BTreeSet::new();
    for i in 0..2500 {
        let rel = format!("d{}/s{}/file-{i:04}.txt", i % 7, i % 3);
        let path = tmp.path().join(&rel);
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(&path, format!("file {i}")).expect("write");
        expected.insert(rel);
    }
    let runtime = runtime();
    let plugin = load(&runtime, "folder", Limits::default());

    let mut session = folder_session(&plugin, tmp.path());
    let (docs, batches) = list_all(&mut session).expect("listing succeeds");
    assert!(
        batches >= 3,
        "2500 files take several batches, got {batches}"
    );
    let paths: Vec<String> = docs.iter().filter_map(|d| d.meta.path.clone()).collect();
    let unique: BTreeSet<String> = paths.iter().cloned().collect();
    assert_eq!(paths.len(), unique.len(), "no document listed twice");
    assert_eq!(unique, expected);

    // A new session (as after a restart) resumes from a stored checkpoint.
    let first = session.list_docs(None).expect("first batch");
    let mut fresh = folder_session(&plugin, tmp.path());
    let rest = fresh
        .list_docs(Some(&first.checkpoint))
        .expect("resumed batch");
    let uninterrupted = session
        .list_docs(Some(&first.checkpoint))
        .expect("second batch");
    assert_eq!(rest, uninterrupted, "resuming gives the same next batch");
    // The plugin keeps the listings of the folders a page stopped in for the page after; asked
    // for another place, it reads afresh.
    let asked_again = session
        .list_docs(Some(&first.checkpoint))
        .expect("the second batch again, out of turn");
    assert_eq!(asked_again, rest, "a page out of turn is the same page");
    assert!(
        rest.upserts
            .iter()
            .all(|d| !first.upserts.iter().any(|f| f.id == d.id)),
        "a resumed listing starts after the checkpoint"
    );

    // Ids and versions are stable; a change shows as a new version of the same id.
    let (again, _) = list_all(&mut fresh).expect("second listing");
    let version = |docs: &[SourceDoc], p: &str| {
        docs.iter()
            .find(|d| d.meta.path.as_deref() == Some(p))
            .map(|d| (d.id.clone(), d.version.clone()))
            .expect("listed")
    };
    let probe = "d0/s0/file-0000.txt";
    assert_eq!(version(&docs, probe), version(&again, probe));
    std::thread::sleep(std::time::Duration::from_millis(20));
    fs::write(tmp.path().join(probe), "changed content").expect("rewrite");
    let (after, _) = list_all(&mut fresh).expect("third listing");
    assert_eq!(version(&docs, probe).0, version(&after, probe).0);
    assert_ne!(version(&docs, probe).1, version(&after, probe).1);
}

#[test]
fn missing_documents_and_folders_are_reported_by_the_plugin() {
    let tmp = tempfile::tempdir().expect("tempdir");
    fs::write(tmp.path().join("gone.txt"), "soon gone").expect("write");
    let runtime = runtime();
    let plugin = load(&runtime, "folder", Limits::default());
    let mut session = folder_session(&plugin, tmp.path());
    let (docs, _) = list_all(&mut session).expect("listing");
    fs::remove_file(tmp.path().join("gone.txt")).expect("remove");
    let err = session
        .fetch_content(&docs[0].id, &docs[0].locator)
        .expect_err("file is gone");
    assert!(
        matches!(
            err.guest_error(),
            Some(quarry_runtime::GuestError::NotFound(_))
        ),
        "{err}"
    );
    // A locator is a plain relative path, as the listing wrote it; nothing else is read, not
    // even a spelling of a file that exists.
    fs::create_dir(tmp.path().join("sub")).expect("mkdir");
    fs::write(tmp.path().join("sub/here.txt"), "here").expect("write");
    for locator in [
        "../etc/passwd",
        "/etc/passwd",
        "",
        "sub/../sub/here.txt",
        "sub/./here.txt",
        "./sub/here.txt",
        "sub//here.txt",
        "sub/here.txt/",
    ] {
        let err = session
            .fetch_content(&docs[0].id, locator)
            .expect_err(locator);
        assert!(
            matches!(
                err.guest_error(),
                Some(quarry_runtime::GuestError::NotFound(message)) if message.contains("not a path inside")
            ),
            "{locator:?}: {err}"
        );
    }
    let here = session
        .fetch_content(&docs[0].id, "sub/here.txt")
        .expect("the plain locator reads");
    assert_eq!(here.text, "here");

    let (values, grant) = common::settings(&plugin, &[("folder", &tmp.path().to_string_lossy())]);
    plugin
        .validate_config(&values, &grant)
        .expect("an existing folder validates");
}

#[test]
fn the_built_folder_component_shows_the_connector_world() {
    let plugin = quarry_tests::plugin_dir("folder");
    let output = std::process::Command::new("wasm-tools")
        .arg("component")
        .arg("wit")
        .arg(plugin.join("quarry_folder.wasm"))
        .output()
        .expect("wasm-tools runs (make setup installs it)");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let wit = String::from_utf8_lossy(&output.stdout);
    for line in [
        "import quarry:connector/host@0.5.0;",
        "export quarry:connector/source@0.5.0;",
    ] {
        assert!(wit.contains(line), "missing {line} in:\n{wit}");
    }
}
