//! Change hints (WIT 0.2.0 `list-changes`) with the real components: the folder plugin lists
//! only what changed at the hinted paths, a 0.1.0 component is asked nothing and listed whole,
//! and no path outside the grant ever reaches a plugin.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::{folder_session, list_all, load, runtime};
use quarry_core::Coverage;
use quarry_runtime::Limits;

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().expect("has parent")).expect("mkdir");
    fs::write(path, text).expect("write");
}

fn paths(upserts: &[quarry_core::SourceDoc]) -> Vec<String> {
    upserts.iter().filter_map(|d| d.meta.path.clone()).collect()
}

#[test]
fn the_folder_plugin_lists_only_what_changed_at_the_hinted_paths() {
    let runtime = runtime();
    let plugin = load(&runtime, "folder", Limits::default());
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("notes");
    write(&root, "a.md", "first");
    write(&root, "sub/b.md", "gone soon");
    write(&root, ".gitignore", "skip.md\n");
    write(&root, "elsewhere/x.md", "untouched");
    let mut session = folder_session(&plugin, &root);
    let (all, _) = list_all(&mut session).expect("lists");
    assert_eq!(all.len(), 3, "{:?}", paths(&all));
    let b_id = all
        .iter()
        .find(|d| d.meta.path.as_deref() == Some("sub/b.md"))
        .map(|d| d.id.clone())
        .expect("b listed");

    write(&root, "a.md", "second, longer");
    fs::remove_file(root.join("sub/b.md")).expect("rm");
    write(&root, "sub/c.md", "new");
    write(&root, "skip.md", "ignored by .gitignore");
    write(&root, ".hidden.md", "hidden");
    let changed: Vec<PathBuf> = ["a.md", "sub/b.md", "sub/c.md", "skip.md", ".hidden.md"]
        .iter()
        .map(|rel| root.join(rel))
        .collect();
    let hints = session.change_hints(&changed);
    assert_eq!(
        hints,
        [
            "/folder/.hidden.md",
            "/folder/a.md",
            "/folder/skip.md",
            "/folder/sub/b.md",
            "/folder/sub/c.md"
        ]
    );
    let batches = session
        .list_changes(&hints)
        .expect("lists changes")
        .expect("the folder plugin can tell");
    assert_eq!(batches.len(), 1);
    let batch = &batches[0];
    assert_eq!(batch.coverage, Coverage::Changes);
    assert!(!batch.more);
    let mut listed = paths(&batch.upserts);
    listed.sort();
    assert_eq!(
        listed,
        ["a.md", "sub/c.md"],
        "hidden and ignored files stay unlisted"
    );
    assert_eq!(batch.deletes, [b_id]);
    let a = batch
        .upserts
        .iter()
        .find(|d| d.locator == "a.md")
        .expect("a");
    assert_eq!(a.meta.size_bytes, "second, longer".len() as u64);
    let full_a = all.iter().find(|d| d.locator == "a.md").expect("a listed");
    assert_eq!(a.id, full_a.id, "the same document as the full listing's");
    assert_ne!(a.version, full_a.version, "with its new version");

    // What paths alone cannot tell asks for a full listing: a folder (moved in whole?), an
    // ignore file (what is listed may change anywhere), the folder itself.
    for unknown in [root.join("sub"), root.join(".gitignore"), root.clone()] {
        let hints = session.change_hints(std::slice::from_ref(&unknown));
        assert_eq!(hints.len(), 1, "{unknown:?}");
        assert!(
            session.list_changes(&hints).expect("answers").is_none(),
            "{unknown:?}"
        );
    }
}

#[test]
fn no_path_outside_the_grant_is_ever_passed_to_a_plugin() {
    let runtime = runtime();
    let plugin = load(&runtime, "folder", Limits::default());
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("notes");
    write(&root, "a.md", "text");
    write(tmp.path(), "secret.txt", "not granted");
    write(
        tmp.path(),
        "notes-private/x.md",
        "a sibling with the same prefix",
    );
    let session = folder_session(&plugin, &root);
    let outside = [
        tmp.path().join("secret.txt"),
        tmp.path().join("notes-private/x.md"),
        root.join("../secret.txt"),
        PathBuf::from("/etc/passwd"),
        PathBuf::from("notes/a.md"),
    ];
    assert!(session.change_hints(&outside).is_empty());
    assert_eq!(session.change_hints(&[root.join("a.md")]), ["/folder/a.md"]);
}

#[test]
fn a_component_of_0_1_0_is_asked_nothing_and_listed_whole() {
    let runtime = runtime();
    let plugin = load(&runtime, "first-notes", Limits::default());
    assert_eq!(plugin.manifest().wit, "0.1.0");
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("notes");
    write(&root, "a.txt", "first");
    let mut session = folder_session(&plugin, &root);
    let hints = session.change_hints(&[root.join("a.txt")]);
    assert_eq!(hints, ["/folder/a.txt"]);
    assert!(
        session.list_changes(&hints).expect("answers").is_none(),
        "0.1.0 has no list-changes: the host lists everything"
    );
    let (docs, _) = list_all(&mut session).expect("a 0.1.0 component still lists");
    assert_eq!(docs.len(), 1);
}

const MESSAGE: &str = "From a@example.com Mon Jan  5 09:00:00 2026\nSubject: Hello\n\nBody.\n";

#[test]
fn the_python_mbox_connector_reads_again_only_the_mailbox_hinted() {
    let runtime = runtime();
    let plugin = load(&runtime, "mbox", Limits::default());
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("mail");
    write(&root, "inbox.mbox", MESSAGE);
    write(
        &root,
        "old/archive.mbox",
        &MESSAGE.replace("Hello", "Archived"),
    );
    let mut session = folder_session(&plugin, &root);
    let (all, _) = list_all(&mut session).expect("lists");
    assert_eq!(all.len(), 2);

    let later = MESSAGE
        .replace("Hello", "Later")
        .replace("Jan  5", "Jan  6");
    write(&root, "inbox.mbox", &format!("{MESSAGE}{later}"));
    let hints = session.change_hints(&[root.join("inbox.mbox")]);
    let batches = session
        .list_changes(&hints)
        .expect("lists changes")
        .expect("a changed mailbox is read alone");
    let batch = &batches[0];
    assert_eq!(batch.coverage, Coverage::Changes);
    let mut titles: Vec<&str> = batch
        .upserts
        .iter()
        .map(|d| d.meta.title.as_str())
        .collect();
    titles.sort();
    assert_eq!(titles, ["Hello", "Later"], "the archive is not read again");
    // Both texts in one call (fetch-contents).
    let calls = session.usage().calls;
    let texts = common::fetch_all(&mut session, &batch.upserts);
    assert!(texts.iter().all(Result::is_ok), "{texts:?}");
    assert_eq!(session.usage().calls - calls, 1);

    // A mailbox that is gone, or a folder, needs a full listing.
    fs::remove_file(root.join("old/archive.mbox")).expect("rm");
    let gone = session.change_hints(&[root.join("old/archive.mbox")]);
    assert!(session.list_changes(&gone).expect("answers").is_none());
    let folder = session.change_hints(&[root.join("old")]);
    assert!(session.list_changes(&folder).expect("answers").is_none());
}
