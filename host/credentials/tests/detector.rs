//! Every rule finds its kind of credential in the shared folder of the end-to-end test (files as
//! people keep them, values made up, forms real), and none of the look-alikes beside them
//! (certificates, public keys, placeholders, prose, test vectors) is taken for one.

use std::time::{Duration, Instant};

use quarry_credentials::{
    Detector, FileScan, Findings, MARKER, Scan, Subject, is_archive, judge_archive, redact,
};
use quarry_tests::credentials::{File, SharedFolder, shared_folder};
use quarry_tests::docx::package_with_parts;

const BUDGET: Duration = Duration::from_secs(5);

/// The text the sync would scan for a file of `bytes`: its text, or nothing for a binary file
/// (judged by its name).
fn text_of(bytes: &[u8]) -> String {
    if bytes.contains(&0) {
        return String::new();
    }
    String::from_utf8(bytes.to_vec()).unwrap_or_default()
}

/// What the sync finds in a file of `bytes` at `path`, judging its original: its bytes a chunk
/// at a time, and the members of an archive.
fn judge_file(path: &str, bytes: &[u8]) -> Findings {
    if is_archive(bytes) {
        return judge_archive(std::io::Cursor::new(bytes), path);
    }
    let mut scan = FileScan::new(path);
    for chunk in bytes.chunks(1 << 20) {
        if scan.feed(chunk, false).is_err() {
            break;
        }
    }
    scan.findings()
}

fn scan(path: &str, text: &str) -> Scan {
    Detector::shared().scan(&Subject { path, text }, BUDGET)
}

/// The shared folder of the end-to-end test and the bench: credentials of every kind the rules
/// know, in the files people keep them in, and their look-alikes.
fn folder() -> SharedFolder {
    shared_folder(0x5eed_c0ff_ee00_0032)
}

fn file<'f>(folder: &'f SharedFolder, path: &str) -> &'f File {
    folder
        .files
        .iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("{path} in the folder"))
}

#[test]
fn every_credential_is_found_and_every_rule_finds_one() {
    let folder = folder();
    let mut seen = std::collections::BTreeSet::new();
    for credential in &folder.credentials {
        let bytes = &file(&folder, &credential.path).bytes;
        let found = judge_file(&credential.path, bytes);
        assert!(found.complete, "{}: incomplete", credential.path);
        assert!(
            found.found(),
            "{} ({}) is not found: {found:?}",
            credential.path,
            credential.kind
        );
        seen.extend(found.credential_file.map(|r| r.id));
        seen.extend(found.rules.iter().map(|r| r.id));
        // The text the sync indexes finds it too, when the file is text.
        let text = text_of(bytes);
        if !text.is_empty() {
            let in_text = scan(&credential.path, &text);
            assert!(!in_text.is_clear(), "{}: not in its text", credential.path);
        }
    }
    let every: std::collections::BTreeSet<&str> =
        Detector::shared().rules().iter().map(|r| r.id).collect();
    let untested: Vec<&&str> = every.difference(&seen).collect();
    assert!(
        untested.is_empty(),
        "rules without an example: {untested:?}"
    );
}

#[test]
fn a_key_file_and_a_service_account_are_credential_files_and_a_note_with_a_token_is_not() {
    let folder = folder();
    let file_of = |path: &str| {
        scan(path, &text_of(&file(&folder, path).bytes))
            .credential_file
            .map(|r| r.id)
    };
    assert_eq!(file_of("server.key"), Some("private-key"));
    assert_eq!(
        file_of("cloud/acme-prod-sa.json"),
        Some("service-account-key")
    );
    assert_eq!(
        file_of("kube/prod-cluster.yaml"),
        Some("kubeconfig-client-key")
    );
    assert_eq!(file_of("Passwords.csv"), Some("password-export"));
    assert_eq!(file_of("meetings/2026-03-02-standup.md"), None);
    assert_eq!(
        file_of("notes/ops-runbook.md"),
        None,
        "a long note quoting a key is text with a secret"
    );
}

#[test]
fn look_alikes_are_not_credentials() {
    let folder = folder();
    for look_alike in &folder.look_alikes {
        let bytes = &file(&folder, &look_alike.path).bytes;
        let found = judge_file(&look_alike.path, bytes);
        assert!(
            found.is_clear(),
            "{} ({}): {found:?}",
            look_alike.path,
            look_alike.what
        );
        let in_text = scan(&look_alike.path, &text_of(bytes));
        assert!(in_text.is_clear(), "{}: {in_text:?}", look_alike.path);
    }
}

/// The secrets `found` in `text`, as they stand in it.
fn secrets_of<'t>(text: &'t str, found: &Scan) -> Vec<&'t str> {
    found
        .secrets
        .iter()
        .map(|s| &text[s.span.clone()])
        .collect()
}

#[test]
fn a_quoted_value_is_found_and_redacted_whole_whatever_punctuation_or_spaces_it_holds() {
    for (line, value) in [
        ("db_password = \"Kx9#mQ2;vL7$pR5w\"", "Kx9#mQ2;vL7$pR5w"),
        ("'password': 'Zr4,Tq8;Lm2,Wx6!'", "Zr4,Tq8;Lm2,Wx6!"),
        (
            "passphrase: \"violet River 42 lantern Marble\"",
            "violet River 42 lantern Marble",
        ),
    ] {
        let text = format!("settings\n{line}\nmore settings\n");
        let found = scan("settings.yaml", &text);
        assert_eq!(secrets_of(&text, &found), [value], "{line}");
        let (redacted, _) = redact(&text, &[], &found.secrets);
        for part in value.split([';', ',', ' ']) {
            assert!(
                !redacted.contains(part),
                "{line}: {part} left in {redacted}"
            );
        }
    }
    // A token's value never holds a space: a message quoting a format is not one.
    let message = "error: unexpected token: \"[year] [month]\"\n";
    assert!(scan("invalid.stderr", message).is_clear());
}

#[test]
fn a_password_with_reserved_characters_in_a_connection_string_is_found_and_a_port_is_not() {
    for (line, value) in [
        (
            "DATABASE_URL=postgres://admin:Xu8#kP2vLq9z@db:5432/prod",
            "Xu8#kP2vLq9z",
        ),
        (
            "amqp://svc:Qw7?Lr2#Mz9p@queue.internal:5672",
            "Qw7?Lr2#Mz9p",
        ),
    ] {
        let text = format!("Connect with {line} today.\n");
        let found = scan("deploy.md", &text);
        assert_eq!(secrets_of(&text, &found), [value], "{line}");
    }
    for line in [
        "see http://localhost:8080?user=a@b.example for the page",
        "http://intranet:443#top@anchor is not a login",
    ] {
        assert!(scan("notes.md", line).is_clear(), "{line}");
    }
}

#[test]
fn an_aws_key_export_has_its_id_and_its_secret_redacted() {
    let (id, key) = (
        "AKIAZ7QX3RM4NB2KV7TW",
        "k3Rf9Xq2Lm7Vb4Nc8Hd1Jf6Gs0Qa5Re9Ty2Ui4Op",
    );
    let text = format!("Access key ID,Secret access key\n{id},{key}\n");
    let found = scan("accessKeys.csv", &text);
    let (redacted, _) = redact(&text, &[], &found.secrets);
    assert!(
        !redacted.contains(id) && !redacted.contains(key),
        "{redacted}"
    );
    assert!(redacted.starts_with("Access key ID,Secret access key\n"));
}

#[test]
fn redaction_leaves_the_rest_of_the_text_and_no_secret() {
    let token = "ghp_R8x2kLq9ZtW4mN7vB3cY6dH1fJ5sA0gE2uPo";
    let password = "Kq7vRw2mXz!481";
    let text =
        format!("Deploy notes\nGITHUB_TOKEN={token}\n\u{c}Page two\nDB_PASSWORD={password}\nend");
    let found = scan("notes.txt", &text);
    assert_eq!(found.secrets.len(), 2, "{found:?}");
    let page_two = text.find("Page two").expect("page") as u32;
    let (redacted, pages) = redact(&text, &[0, page_two], &found.secrets);
    assert!(!redacted.contains(token) && !redacted.contains(password));
    assert!(redacted.contains("Deploy notes") && redacted.contains(MARKER));
    assert!(redacted[pages[1] as usize..].starts_with("Page two"));
}

#[test]
fn a_hostile_text_is_decided_within_the_budget() {
    // Keywords everywhere: every rule's windows are matched over and over.
    let mut hostile = String::new();
    while hostile.len() < 16 << 20 {
        hostile.push_str(
            "token=ghp_ key- -----BEGIN PRIVATE KEY-----\n eyJ.eyJ. https://a:b@c password: ",
        );
    }
    let started = Instant::now();
    let found = Detector::shared().scan(
        &Subject {
            path: "hostile.txt",
            text: &hostile,
        },
        Duration::from_millis(500),
    );
    let took = started.elapsed();
    assert!(took < Duration::from_secs(3), "took {took:?}");
    if found.complete {
        assert!(!found.is_clear() || found.secrets.is_empty());
    }
}

#[test]
fn a_key_in_another_form_is_found_and_redacted_at_its_bytes_alone() {
    let folder = folder();
    let text = text_of(&file(&folder, "mail/re-server-access.txt").bytes);
    let found = scan("mail/re-server-access.txt", &text);
    assert_eq!(found.rules()[0].id, "private-key");
    let (redacted, _) = redact(&text, &[], &found.secrets);
    assert!(
        !redacted.contains("> MII") && !redacted.contains("BEGIN OPENSSH"),
        "{redacted}"
    );
    assert!(
        redacted.contains("Here is the server's deploy key:"),
        "{redacted}"
    );
    assert!(
        redacted.contains("Delete this mail once you have it."),
        "{redacted}"
    );

    let attached = judge_file(
        "mail/2026-03-03-new-laptop.eml",
        &file(&folder, "mail/2026-03-03-new-laptop.eml").bytes,
    );
    assert_eq!(attached.rules[0].id, "ssh-private-key-file", "{attached:?}");
}

#[test]
fn archives_inside_archives_are_opened_and_a_bomb_or_a_locked_member_is_not_judged() {
    let token = "ghp_R8x2kLq9ZtW4mN7vB3cY6dH1fJ5sA0gE2uPo";
    let inner = package_with_parts(&[("deep/.env", format!("GITHUB_TOKEN={token}\n").as_bytes())]);
    let outer = package_with_parts(&[("readme.txt", b"hello\n"), ("inner.zip", &inner)]);
    let found = judge_archive(std::io::Cursor::new(&outer), "backup.zip");
    assert_eq!(found.rules[0].id, "github-token", "{found:?}");

    // Archives inside archives, deeper than Quarry opens: not judged, rather than taken as clean.
    let mut nested = inner.clone();
    for level in 0..5 {
        nested = package_with_parts(&[(&format!("level{level}.zip"), &nested)]);
    }
    let deep = judge_archive(std::io::Cursor::new(&nested), "russian-dolls.zip");
    assert!(
        deep.unread
            .as_deref()
            .is_some_and(|why| why.contains("nested deeper")),
        "{deep:?}"
    );

    let zeros = vec![0u8; 200 << 20];
    let bomb = package_with_parts(&[("zeros.bin", &zeros)]);
    assert!(bomb.len() < 1 << 20, "{} bytes", bomb.len());
    let found = judge_archive(std::io::Cursor::new(&bomb), "bomb.zip");
    assert!(!found.found());
    assert!(
        found
            .unread
            .as_deref()
            .is_some_and(|why| why.contains("a bomb")),
        "{found:?}"
    );

    let mut bytes = outer.clone();
    bytes.truncate(bytes.len() / 2);
    let broken = judge_archive(std::io::Cursor::new(&bytes), "broken.zip");
    assert!(broken.unread.is_some(), "{broken:?}");

    let gz = [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0, 0x03];
    assert!(judge_file("logs.tar.gz", &gz).unread.is_some());
}
