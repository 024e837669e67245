//! Versions of `quarry:connector`, with real components: 0.1.0 (`testing/first-notes`) and
//! 0.2.0 (`testing/older-notes`), each on that version's own bindings, and 0.5.0 (the folder
//! connector on the Rust SDK, the mbox connector on the Python SDK) all list and give their
//! texts; 0.5.0 (as 0.3.0, whose calls it
//! compiles from the same code) gives many small texts in one call, and a document that cannot
//! be read in such a call fails alone.

mod common;

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use common::{fetch_all, folder_session, list_all, load, quick_limits, runtime, settings};
use quarry_core::{DocId, DocMeta, SourceDoc};
use quarry_runtime::{GuestError, Limits, RuntimeError, RuntimeErrorKind};

fn write(dir: &Path, name: &str, text: &str) {
    fs::create_dir_all(dir).expect("mkdir");
    fs::write(dir.join(name), text).expect("write");
}

#[test]
fn components_of_every_supported_version_list_and_give_their_texts() {
    let runtime = runtime();
    let tmp = tempfile::tempdir().expect("tempdir");
    let mail = tmp.path().join("mail");
    write(
        &mail,
        "inbox.mbox",
        "From a@example.com Mon Jan  5 09:00:00 2026\nSubject: Hello\n\nmboxword body.\n",
    );
    let notes = tmp.path().join("notes");
    for i in 0..10 {
        write(&notes, &format!("n{i}.txt"), &format!("note number {i}"));
    }
    for (id, version, folder, calls_for_texts) in [
        // One document at a time: 0.1.0 and 0.2.0 have no fetch-contents.
        ("first-notes", "0.1.0", &notes, Some(10)),
        ("older-notes", "0.2.0", &notes, Some(10)),
        ("mbox", "0.5.0", &mail, None),
        // Ten small documents in one call.
        ("folder", "0.5.0", &notes, Some(1)),
    ] {
        let plugin = load(&runtime, id, Limits::default());
        assert_eq!(plugin.wit_version().as_str(), version, "{id}");
        assert_eq!(plugin.manifest().wit, version, "{id}");
        let mut session = folder_session(&plugin, folder);
        let (docs, _) = list_all(&mut session).unwrap_or_else(|e| panic!("{id} lists: {e}"));
        assert!(!docs.is_empty(), "{id}");
        let calls_before = session.usage().calls;
        let texts: Vec<String> = fetch_all(&mut session, &docs)
            .into_iter()
            .map(|t| {
                t.unwrap_or_else(|e| panic!("{id} gives its text: {e}"))
                    .text
            })
            .collect();
        if let Some(calls) = calls_for_texts {
            assert_eq!(session.usage().calls - calls_before, calls, "{id}");
            let mut texts = texts.clone();
            texts.sort();
            let expected: Vec<String> = (0..10).map(|i| format!("note number {i}")).collect();
            assert_eq!(texts, expected, "{id}");
        } else {
            assert!(
                texts.iter().any(|t| t.contains("mboxword")),
                "{id}: {texts:?}"
            );
        }
    }
}

fn hostile_doc(locator: &str) -> SourceDoc {
    SourceDoc {
        id: DocId::parse(format!("d-{locator}")).expect("id"),
        locator: locator.to_owned(),
        meta: DocMeta {
            title: locator.to_owned(),
            path: None,
            url: None,
            mime_type: "text/plain".to_owned(),
            size_bytes: 5,
            update_time_ms: 0,
        },
        version: "1".to_owned(),
        has_text: true,
    }
}

#[test]
fn a_document_that_breaks_a_call_for_several_fails_alone() {
    let runtime = runtime();
    let plugin = load(&runtime, "hostile", quick_limits());
    assert_eq!(plugin.wit_version(), quarry_runtime::WitVersion::V0_5_0);
    let (values, grant) = settings(&plugin, &[("mode", "ok")]);
    let mut session = plugin.session(&values, &grant, None).expect("session");

    // A document the plugin says is missing fails in the call, the others come back with it.
    let docs: Vec<SourceDoc> = ["a", "missing", "b"].map(hostile_doc).into();
    let texts = fetch_all(&mut session, &docs);
    assert_eq!(session.usage().calls, 1, "one call for the three");
    assert_eq!(texts[0].as_ref().expect("a").text, "hello");
    assert!(matches!(
        &texts[1],
        Err(RuntimeError {
            kind: RuntimeErrorKind::Guest {
                error: GuestError::NotFound(_)
            },
            ..
        })
    ));
    assert_eq!(texts[2].as_ref().expect("b").text, "hello");

    // A document that traps, and one that never returns, take the call for all down with them:
    // each document is then asked for on its own, and only those two fail.
    let docs: Vec<SourceDoc> = ["a", "panic", "b", "spin", "c"].map(hostile_doc).into();
    let started = Instant::now();
    let texts = fetch_all(&mut session, &docs);
    let took = started.elapsed();
    for (doc, text) in docs.iter().zip(&texts) {
        match (doc.locator.as_str(), text) {
            ("panic", Err(e)) => {
                assert!(matches!(e.kind, RuntimeErrorKind::Trap { .. }), "{e}")
            }
            ("spin", Err(e)) => {
                assert!(matches!(e.kind, RuntimeErrorKind::Timeout { .. }), "{e}")
            }
            (_, Ok(text)) => assert_eq!(text.text, "hello"),
            (locator, other) => panic!("{locator}: {other:?}"),
        }
    }
    // The spinning document costs its deadline twice (in the call for all, then alone), and
    // nothing more.
    assert!(took < Duration::from_secs(6), "{took:?}");
}

#[test]
fn an_answer_with_the_wrong_number_of_results_is_refused_and_each_is_asked_alone() {
    let runtime = runtime();
    let plugin = load(&runtime, "hostile", quick_limits());
    let (values, grant) = settings(&plugin, &[("mode", "ok")]);
    let mut session = plugin.session(&values, &grant, None).expect("session");

    // Three documents asked for together, two results back: no result is matched to the wrong
    // document; the instance is dropped and each document is asked for on its own.
    let docs: Vec<SourceDoc> = ["a", "short", "b"].map(hostile_doc).into();
    let texts = fetch_all(&mut session, &docs);
    assert_eq!(texts.len(), 3);
    for (doc, text) in docs.iter().zip(&texts) {
        assert_eq!(text.as_ref().expect(&doc.locator).text, "hello");
    }
    let usage = session.usage();
    assert_eq!(usage.calls, 4, "the call for all three, then one each");
    assert_eq!(
        usage.failed_calls, 0,
        "output that breaks the contract is not a failed call, as for any call"
    );
}
