//! The IMAP connector against a real Dovecot on loopback (`quarry_tests::dovecot`): mail put
//! there over IMAP APPEND is found by subject, body and attachment in three scripts; new mail
//! is found within seconds (IDLE); expunges, moves and a changed UIDVALIDITY are reflected;
//! a server killed mid-sync loses nothing and indexes nothing twice; wrong credentials, an
//! unknown CA and a server without TLS are refused naming the fix; the password appears in no
//! answer, page or log.

use std::time::{Duration, Instant};

use quarry_tests::docx::docx;
use quarry_tests::dovecot::{Dovecot, PASSWORD, USER};
use quarry_tests::found::{first, read_first, titles, wait_until_found};
use quarry_tests::mail::{Mail, encoded_word};
use quarry_tests::pdf::pdf;
use quarry_tests::quarry::Quarry;
use serde_json::{Value, json};

/// Adds the connector the way the outside check does, and returns its id.
fn add_mail(q: &Quarry, dovecot: &Dovecot, server: &str) -> String {
    let mut args = dovecot.connector_add_args(server);
    args.push("--json".to_owned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let added: Value = serde_json::from_str(&q.cli_ok(&args)).expect("JSON");
    added["connector_id"].as_str().expect("an id").to_owned()
}

/// Waits (up to `limit`) until `query` finds exactly `expected` titles; answers how long it took.
fn wait_for_titles(
    q: &Quarry,
    key: &str,
    query: &str,
    expected: &[&str],
    limit: Duration,
) -> Duration {
    wait_until_found(q, key, (query, "title"), expected, limit)
}

/// The mailbox of the first test: three scripts, HTML only, attachments, a thread, two folders
/// and a message in both.
fn fill_mailbox(dovecot: &Dovecot) {
    let mut client = dovecot.client();
    client.create("Work");
    let messages = [
        Mail::new(
            "Bob <bob@example.org>",
            "Quarterly plan",
            "plan-1@example.org",
            "The lighthouse renovation needs a budget by Friday.",
        ),
        Mail::new(
            "Alice <alice@example.org>",
            "Re: Quarterly plan",
            "plan-2@example.org",
            "Agreed; the marzipan supplier sends a quote too.",
        )
        .header("In-Reply-To", "<plan-1@example.org>")
        .header("References", "<plan-1@example.org>"),
        Mail::new(
            "Ivan <ivan@example.org>",
            &encoded_word("Отчёт о командировке"),
            "cyrillic@example.org",
            "Поездка в Самару прошла успешно, образцы отправлены.",
        ),
        Mail::new(
            "Yuki <yuki@example.org>",
            &encoded_word("会議の議事録"),
            "japanese@example.org",
            "",
        )
        .html_only("<html><body><p>次回の会議は<b>水曜日</b>です。</p></body></html>"),
        Mail::new(
            "Jean <jean@example.org>",
            "Grüße aus Köln",
            "latin1@example.org",
            "",
        )
        .body_in(
            "iso-8859-1",
            "Die Domplatte ist heute voller Straßenmusiker."
                .chars()
                .map(|c| c as u8)
                .collect::<Vec<_>>()
                .as_slice(),
        ),
        Mail::new(
            "Shop <shop@example.org>",
            "Your order",
            "html@example.org",
            "",
        )
        .html_only("<html><body><p>The <b>saffron</b> order ships on Monday.</p></body></html>"),
        Mail::new(
            "Zeppelin Works <zw@example.org>",
            "Documents for the hangar",
            "attachments@example.org",
            "Both files are attached.",
        )
        .attach(
            "€-report.pdf",
            "application/pdf",
            &pdf(
                "Report",
                &[&["The zeppelin hangar inspection passed."]],
                true,
            ),
        )
        .attach(
            "census.docx",
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            &docx(
                "Census",
                &["The quokka census counted forty animals."],
                "A note.",
            ),
        ),
    ];
    for message in &messages {
        client.append("INBOX", &message.bytes());
    }
    let vendor = Mail::new(
        "Legal <legal@example.org>",
        "Vendor contract",
        "vendor@example.org",
        "The tungsten supplier signs the contract next week.",
    );
    let uid = client.append("Work", &vendor.bytes());
    client.copy("Work", uid, "INBOX");
    client.append(
        "Work",
        &Mail::new(
            "Eve <eve@example.org>",
            "Budget",
            "budget@example.org",
            "The obsidian budget line is closed.",
        )
        .bytes(),
    );
}

#[test]
fn mail_is_found_by_subject_body_and_attachment_and_kept_in_step_with_the_server() {
    let dovecot = Dovecot::start();
    fill_mailbox(&dovecot);
    let mut q = Quarry::new();
    add_mail(&q, &dovecot, &dovecot.imaps_url());
    q.start();
    q.wait_synced();
    let key = q.integration("agent", "all", &[]);

    // Subjects, bodies and attachments, in three scripts and three charsets.
    for (query, title) in [
        ("lighthouse", "Quarterly plan"),
        ("marzipan", "Re: Quarterly plan"),
        ("командировке", "Отчёт о командировке"),
        ("Самару", "Отчёт о командировке"),
        ("議事録", "会議の議事録"),
        ("水曜日", "会議の議事録"),
        ("Straßenmusiker", "Grüße aus Köln"),
        ("saffron", "Your order"),
        ("zeppelin hangar", "Documents for the hangar"),
        ("quokka", "Documents for the hangar"),
    ] {
        assert_eq!(titles(&q, &key, query), [title], "{query}");
    }
    // A message in two folders is one document.
    assert_eq!(titles(&q, &key, "tungsten"), ["Vendor contract"]);

    // A thread's messages name their thread; the folder and a mail client's link are there.
    let reply = first(&q, &key, "marzipan");
    let connector = reply["connector_id"]
        .as_str()
        .expect("connector")
        .to_owned();
    let doc = reply["doc_id"].as_str().expect("doc").to_owned();
    let read = read_first(&q, &key, "marzipan");
    assert_eq!(read["metadata"]["thread"], "plan-1@example.org", "{read}");
    assert_eq!(read["metadata"]["folder"], "INBOX", "{read}");
    let url = read["url"].as_str().unwrap_or_default();
    assert!(
        url.starts_with(&format!(
            "imap://{USER}@127.0.0.1:{}/INBOX;UIDVALIDITY=",
            dovecot.imaps_port
        )),
        "{url}"
    );
    // The file is the raw message.
    let file = q.request(
        "GET",
        &format!("/api/v1/connectors/{connector}/docs/{doc}/file"),
        Some(&key),
        None,
    );
    assert_eq!(file.status, 200, "{}", file.text());
    assert!(
        file.text().contains("Message-ID: <plan-2@example.org>"),
        "{}",
        file.text()
    );

    // New mail within seconds.
    let mut client = dovecot.client();
    client.append(
        "INBOX",
        &Mail::new(
            "Ann <ann@example.org>",
            "Rings",
            "new@example.org",
            "Saturn's rings glitter tonight.",
        )
        .bytes(),
    );
    let took = wait_for_titles(&q, &key, "glitter", &["Rings"], Duration::from_secs(5));
    eprintln!("appended mail was searchable after {took:?}");
    // In any folder read, not only the one IDLE waits on (NOTIFY tells of the others): once
    // the watch waits again after that sync.
    std::thread::sleep(Duration::from_secs(3));
    client.append(
        "Work",
        &Mail::new(
            "Lee <lee@example.org>",
            "Harbour crane",
            "crane@example.org",
            "The harbour crane lifts the turbine blades.",
        )
        .bytes(),
    );
    let took = wait_for_titles(
        &q,
        &key,
        "turbine",
        &["Harbour crane"],
        Duration::from_secs(5),
    );
    eprintln!("mail appended to another folder was searchable after {took:?}");

    // An expunge and a move are reflected.
    let budget_uid = 2;
    client.expunge("Work", budget_uid);
    wait_for_titles(&q, &key, "obsidian", &[], Duration::from_secs(30));
    client.create("Archive");
    client.move_to("INBOX", 6, "Archive");
    let started = Instant::now();
    loop {
        let read = read_first(&q, &key, "saffron");
        if read["metadata"]["folder"] == "Archive" {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the move was not reflected: {read}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(titles(&q, &key, "saffron"), ["Your order"]);

    // A folder made anew (a new UIDVALIDITY) is listed again, nothing twice.
    let validity = client.uid_validity("Work");
    client.delete("Work");
    client.create("Work");
    client.append(
        "Work",
        &Mail::new(
            "Legal <legal@example.org>",
            "Vendor contract",
            "vendor@example.org",
            "The tungsten supplier signs the contract next week.",
        )
        .bytes(),
    );
    client.append(
        "Work",
        &Mail::new(
            "Kim <kim@example.org>",
            "Kiln",
            "kiln@example.org",
            "The pottery kiln reaches cone ten.",
        )
        .bytes(),
    );
    assert_ne!(client.uid_validity("Work"), validity);
    wait_for_titles(&q, &key, "pottery", &["Kiln"], Duration::from_secs(30));
    assert_eq!(titles(&q, &key, "tungsten"), ["Vendor contract"]);

    // The password is in no answer, page or log.
    let listed = q.cli_ok(&["connector", "list", "--json"]);
    let status = q.cli_ok(&["connector", "status", "Mail"]);
    let connectors = q
        .request("GET", "/api/v1/connectors", Some(&key), None)
        .text();
    for (what, text) in [
        ("the server log", q.log()),
        ("connector list", listed),
        ("connector status", status),
        ("GET /connectors", connectors),
        ("a document", read.to_string()),
    ] {
        assert!(!text.contains(PASSWORD), "the password is in {what}");
    }
}

#[test]
fn a_server_killed_mid_sync_converges_with_nothing_lost_and_nothing_twice() {
    let mut dovecot = Dovecot::start();
    let mut client = dovecot.client();
    const COUNT: usize = 4000;
    for n in 0..COUNT {
        let message = Mail::new(
            "Load <load@example.org>",
            &format!("Message {n}"),
            &format!("load-{n}@example.org"),
            &format!("Codeword kw{n:05} for this message."),
        );
        client.append("INBOX", &message.bytes());
    }
    drop(client);
    let mut q = Quarry::new();
    q.without_model();
    add_mail(&q, &dovecot, &dovecot.imap_url());
    q.start();
    // Kill the server once the first batch is in, then bring it back.
    let started = Instant::now();
    let at_kill = loop {
        let count = q.connectors()[0]["doc_count"].as_u64().unwrap_or(0);
        if count > 0 {
            break count;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no document arrived: {}",
            q.log()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    dovecot.kill();
    assert!(
        at_kill < COUNT as u64,
        "the sync ended before the server was killed"
    );
    std::thread::sleep(Duration::from_secs(2));
    dovecot.restart();
    q.wait_for("every message indexed", |connectors| {
        connectors[0]["doc_count"].as_u64() == Some(COUNT as u64)
            && connectors[0]["status"] == "idle"
    });
    let key = q.integration("agent", "all", &[]);
    for n in [0, 1, COUNT / 2, COUNT - 1] {
        assert_eq!(
            titles(&q, &key, &format!("kw{n:05}")),
            [format!("Message {n}")]
        );
    }
    let all = q.search_ok(
        &key,
        json!({"query": "codeword", "semantic_search": false, "limit": 1}),
    );
    assert_eq!(all["total"], COUNT as u64, "{all}");
}

#[test]
fn wrong_password_unknown_ca_and_a_server_without_tls_are_refused_naming_the_fix_and_consent_reads_it_in_clear()
 {
    let dovecot = Dovecot::start();
    let q = Quarry::new();
    let add = |server: &str, password: &str, ca: bool| {
        let mut args = vec![
            "connector".to_owned(),
            "add".into(),
            "plugin".into(),
            "imap".into(),
            "--name".into(),
            "Mail".into(),
            "--set".into(),
            format!("server={server}"),
            "--set".into(),
            format!("username={USER}"),
            "--set".into(),
            format!("password={password}"),
        ];
        if ca {
            args.extend([
                "--set".into(),
                format!("ca_file={}", dovecot.ca_file().display()),
            ]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = q.cli(&args);
        assert!(!out.ok, "{args:?} was accepted");
        format!("{}{}", out.stdout, out.stderr)
    };
    let wrong_password = add(&dovecot.imaps_url(), "not-the-password", true);
    assert!(
        wrong_password.contains("refused the user name or password")
            && wrong_password.contains("app password"),
        "{wrong_password}"
    );
    let unknown_ca = add(&dovecot.imaps_url(), PASSWORD, false);
    assert!(
        unknown_ca.contains("certificate did not verify") && unknown_ca.contains("ca_file"),
        "{unknown_ca}"
    );
    let clear = Dovecot::start_plaintext();
    let no_starttls = add(&clear.imap_url(), PASSWORD, false);
    assert!(
        no_starttls.contains("did not switch to TLS")
            && no_starttls.contains("sends nothing in clear")
            && no_starttls.contains("set `allow_plaintext` to true"),
        "{no_starttls}"
    );
    assert!(
        !clear.log().contains(PASSWORD),
        "the password reached the server in clear"
    );
    // With the user's consent (and only then), the same server is read in clear.
    clear.client().append(
        "INBOX",
        &Mail::new(
            "Carol <carol@example.org>",
            "Greenhouse rota",
            "rota@example.org",
            "The allotment greenhouse is watered on Tuesdays.",
        )
        .bytes(),
    );
    let server = format!("server={}", clear.imap_url());
    let (user, password) = (format!("username={USER}"), format!("password={PASSWORD}"));
    let said = q.cli_ok(&[
        "connector",
        "add",
        "plugin",
        "imap",
        "--name",
        "Unencrypted mail",
        "--set",
        &server,
        "--set",
        &user,
        "--set",
        &password,
        "--set",
        "allow_plaintext=true",
    ]);
    assert!(said.contains("UNENCRYPTED"), "{said}");
    // A password that stops working later is the connector's error, in its status and the log.
    let mut q = q;
    add_mail(&q, &dovecot, &dovecot.imaps_url());
    q.start();
    q.wait_synced();
    let key = q.integration("agent", "all", &[]);
    assert_eq!(titles(&q, &key, "greenhouse"), ["Greenhouse rota"]);
    dovecot.change_password("changed-on-the-server");
    q.cli_ok(&["connector", "sync", "Mail"]);
    q.wait_for("the sync to fail", |connectors| {
        connectors
            .iter()
            .any(|c| c["name"] == "Mail" && c["status"] == "error")
    });
    let status = q.cli_ok(&["connector", "status", "Mail"]);
    assert!(
        status.contains("refused the user name or password"),
        "{status}"
    );
    assert!(
        q.log().contains("refused the user name or password"),
        "{}",
        q.log()
    );
    for said in [
        &wrong_password,
        &unknown_ca,
        &no_starttls,
        &status,
        &q.log(),
    ] {
        assert!(!said.contains(PASSWORD), "the password was shown: {said}");
    }
}

#[test]
fn the_settings_page_adds_a_mailbox_saying_what_it_may_reach() {
    let dovecot = Dovecot::start();
    let mut client = dovecot.client();
    client.append(
        "INBOX",
        &Mail::new(
            "Bob <bob@example.org>",
            "Hello",
            "hello@example.org",
            "A first message.",
        )
        .bytes(),
    );
    let mut q = Quarry::new();
    q.without_model();
    q.start();
    let server = dovecot.imaps_url();
    let ca = dovecot.ca_file();
    let answer = quarry_tests::browser::run_script(
        "imap-connector.mjs",
        &q,
        &[
            ("IMAP_SERVER", server.as_ref()),
            ("IMAP_USER", USER.as_ref()),
            ("IMAP_PASSWORD", PASSWORD.as_ref()),
            ("IMAP_CA", ca.as_os_str()),
        ],
    );
    assert!(
        answer["asks"].as_array().is_some_and(|a| !a.is_empty()),
        "{answer}"
    );
    quarry_tests::browser::assert_screenshots("imap", &["form", "added"]);
    assert!(!q.log().contains(PASSWORD), "the password reached the log");
}

#[test]
fn a_hanging_server_and_a_fifty_megabyte_message_cost_only_themselves() {
    let dovecot = Dovecot::start();
    let mut client = dovecot.client();
    for n in 0..20 {
        client.append(
            "INBOX",
            &Mail::new(
                "Ann <ann@example.org>",
                &format!("Note {n}"),
                &format!("note-{n}@example.org"),
                &format!("steady{n} words"),
            )
            .bytes(),
        );
    }
    // A 50 MB message: a 36 MiB text attachment, in base64.
    let huge = Mail::new(
        "Export <export@example.org>",
        "Huge export",
        "huge@example.org",
        "The export is attached.",
    )
    .attach(
        "export.csv",
        "text/csv",
        &b"id,name\n1,tungsten\n".repeat(36 << 20 >> 4)[..36 << 20],
    );
    let huge = huge.bytes();
    assert!(huge.len() > 48_000_000, "{}", huge.len());
    client.append("INBOX", &huge);
    drop(client);

    let mut q = Quarry::new();
    q.without_model();
    add_mail(&q, &dovecot, &dovecot.imaps_url());
    q.start();
    q.wait_for("the first sync", |c| {
        c[0]["status"] == "idle" && c[0]["doc_count"] == 21
    });
    let key = q.integration("agent", "all", &[]);
    assert_eq!(titles(&q, &key, "huge export"), ["Huge export"]);
    assert_eq!(titles(&q, &key, "steady7"), ["Note 7"]);
    // Bounded like a file: its body is read, its 36 MiB attachment is listed by name only.
    assert_eq!(titles(&q, &key, "\"export is attached\""), ["Huge export"]);
    let read = read_first(&q, &key, "\"export is attached\"");
    assert_eq!(
        read["metadata"]["attachments_by_name_only"], "export.csv",
        "{read}"
    );

    // A server that hangs: the sync fails within its bounds, naming it, and nothing is lost.
    dovecot.stall();
    q.cli_ok(&["connector", "sync", "Mail"]);
    q.wait_for("the sync to give up on a server that hangs", |c| {
        c[0]["status"] == "error"
    });
    let status = q.cli_ok(&["connector", "status", "Mail"]);
    assert!(
        status.contains("sent nothing") || status.contains("did not answer in time"),
        "{status}"
    );
    dovecot.resume();
    let mut client = dovecot.client();
    client.append(
        "INBOX",
        &Mail::new(
            "Ann <ann@example.org>",
            "Back",
            "back@example.org",
            "The server answers again.",
        )
        .bytes(),
    );
    q.wait_for("the connector to recover", |c| {
        c[0]["status"] == "idle" && c[0]["doc_count"] == 22
    });
    assert_eq!(titles(&q, &key, "answers again"), ["Back"]);
    assert_eq!(titles(&q, &key, "steady7"), ["Note 7"]);
}
