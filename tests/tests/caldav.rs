//! The calendar connector (JavaScript, WIT 0.5.0) against real CalDAV/CardDAV servers on
//! loopback (`quarry_tests::caldav`): Radicale, and Xandikos behind Apache's password. Events
//! are found by summary, place, person and email, a recurring one at its next occurrence;
//! contacts by name, organisation, email and notes; an event changed, deleted or added on the
//! server is reflected within 60 s; an unchanged resync asks only for the collections' tokens;
//! the password appears in no answer or log.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use quarry_tests::caldav::{CalServer, PASSWORD, Server};
use quarry_tests::found::{read_first, titles, wait_until_found};
use quarry_tests::quarry::Quarry;

const BERLIN: &str = "BEGIN:VTIMEZONE\r\nTZID:Europe/Berlin\r\nBEGIN:DAYLIGHT\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200\r\nDTSTART:19700329T020000\r\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r\nEND:DAYLIGHT\r\nBEGIN:STANDARD\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nDTSTART:19701025T030000\r\nRRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n";

/// A calendar object of one event of these properties (lines without the line ends).
fn event(lines: &[&str]) -> String {
    format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Quarry tests//EN\r\n{BERLIN}BEGIN:VEVENT\r\nDTSTAMP:20261101T090000Z\r\n{}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
        lines.join("\r\n")
    )
}

fn dentist(place: &str) -> String {
    event(&[
        "UID:dentist-1@example.org",
        "DTSTART;TZID=Europe/Berlin:20270115T093000",
        "DTEND;TZID=Europe/Berlin:20270115T101500",
        "SUMMARY:Dentist appointment",
        &format!("LOCATION:{place}"),
        "DESCRIPTION:Bring the x-ray films\\, and the referral.",
        "ORGANIZER;CN=Carol:mailto:carol@example.org",
        "ATTENDEE;CN=Dr. Quill;PARTSTAT=ACCEPTED:mailto:quill@harley.test",
    ])
}

const ADA: &str = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:ada-1\r\nFN:Ada Lovelace\r\nN:Lovelace;Ada;;;\r\nORG:Analytical Engines Ltd\r\nEMAIL;TYPE=work:ada@analytical-engines.test\r\nTEL;TYPE=cell:+44 20 7946 0018\r\nNOTE:Prefers punched cards to email.\r\nEND:VCARD\r\n";

/// Waits (up to 60 s) until `query` finds exactly `expected`; answers how long it took.
fn wait_for_titles(q: &Quarry, key: &str, query: &str, expected: &[&str]) -> Duration {
    wait_until_found(q, key, (query, "title"), expected, Duration::from_secs(60))
}

/// Seconds since the epoch of an ISO time `2026-11-30T09:00:00Z`.
fn epoch_seconds(iso: &str) -> i64 {
    let n = |r: std::ops::Range<usize>| iso[r].parse::<i64>().expect("a number");
    let (y, m, d) = (n(0..4), n(5..7), n(8..10));
    let (yy, mm) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let doy = (153 * mm + 2) / 5 + d - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    days * 86_400 + n(11..13) * 3600 + n(14..16) * 60 + n(17..19)
}

fn calendars_and_contacts_are_found_and_kept_in_step(kind: Server) {
    let server = CalServer::start(kind);
    let calendar = server.calendar();
    let book = server.address_book();
    server.put(
        &format!("{calendar}dentist.ics"),
        &dentist("Harley Street clinic"),
    );
    server.put(
        &format!("{calendar}standup.ics"),
        &event(&[
            "UID:standup-1@example.org",
            "DTSTART:20250106T090000Z",
            "DTEND:20250106T091500Z",
            "RRULE:FREQ=WEEKLY;BYDAY=MO,TH",
            "SUMMARY:Team standup",
            "LOCATION:Lighthouse room",
        ]),
    );
    server.put(&format!("{book}ada.vcf"), ADA);

    let mut q = Quarry::new();
    q.without_model();
    let args = server.connector_add_args(PASSWORD);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    q.cli_ok(&args);
    q.start();
    q.wait_synced();
    let key = q.integration("agent", "all", &["--quota", "unlimited"]);

    // Events by summary, place, person and email; contacts by name, organisation, email, notes.
    for (query, title) in [
        ("dentist", "Dentist appointment"),
        ("Harley", "Dentist appointment"),
        ("Quill", "Dentist appointment"),
        ("quill@harley.test", "Dentist appointment"),
        ("referral", "Dentist appointment"),
        ("standup", "Team standup"),
        ("Lovelace", "Ada Lovelace"),
        ("Analytical Engines", "Ada Lovelace"),
        ("ada@analytical-engines.test", "Ada Lovelace"),
        ("punched", "Ada Lovelace"),
    ] {
        assert_eq!(titles(&q, &key, query), [title], "{query} ({kind:?})");
    }
    // Times: the zone's offset applied; a weekly event at its next occurrence.
    let read = read_first(&q, &key, "dentist");
    assert_eq!(read["metadata"]["start"], "2027-01-15T08:30:00Z", "{read}");
    assert_eq!(read["metadata"]["end"], "2027-01-15T09:15:00Z", "{read}");
    assert_eq!(
        read["metadata"]["location"], "Harley Street clinic",
        "{read}"
    );
    let standup = read_first(&q, &key, "standup");
    let start = standup["metadata"]["start"].as_str().unwrap_or_default();
    let start_s = epoch_seconds(start);
    let now_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs() as i64;
    let weekday = (start_s.div_euclid(86_400) + 4).rem_euclid(7); // 0 is Sunday
    assert!(
        start.ends_with("T09:00:00Z")
            && [1, 4].contains(&weekday)
            && start_s >= now_s - 86_400
            && start_s <= now_s + 5 * 86_400,
        "the next standup is not the next Monday or Thursday: {standup}"
    );
    let ada = read_first(&q, &key, "Lovelace");
    assert_eq!(
        ada["metadata"]["organisation"], "Analytical Engines Ltd",
        "{ada}"
    );

    // An unchanged resync asks for the collections' tokens, and reads no item.
    let before = server.requests().len();
    q.cli_ok(&["connector", "sync", "Calendar", "--wait"]);
    let resync: Vec<String> = server.requests()[before..].to_vec();
    eprintln!("an unchanged resync on {kind:?}: {resync:?}");
    assert!(
        resync.iter().all(|r| r.starts_with("PROPFIND")) && resync.len() <= 8,
        "{resync:?}"
    );

    // Changed, deleted and added on the server: reflected within 60 s.
    server.put(
        &format!("{calendar}dentist.ics"),
        &dentist("Wimpole Street clinic"),
    );
    let took = wait_for_titles(&q, &key, "Wimpole", &["Dentist appointment"]);
    eprintln!("a changed event on {kind:?} was found after {took:?}");
    let moved = read_first(&q, &key, "dentist");
    assert_eq!(
        moved["metadata"]["location"], "Wimpole Street clinic",
        "{moved}"
    );
    server.delete(&format!("{calendar}standup.ics"));
    let took = wait_for_titles(&q, &key, "standup", &[]);
    eprintln!("a deleted event on {kind:?} was gone after {took:?}");
    server.put(
        &format!("{book}grace.vcf"),
        "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:grace-1\r\nFN:Grace Hopper\r\nORG:Navy\r\nEMAIL:grace@cobol.test\r\nEND:VCARD\r\n",
    );
    wait_for_titles(&q, &key, "Hopper", &["Grace Hopper"]);

    // The password is in no answer or log.
    let status = q.cli_ok(&["connector", "status", "Calendar"]);
    for (what, text) in [
        ("the server log", q.log()),
        ("connector status", status),
        ("a document", read.to_string()),
    ] {
        assert!(!text.contains(PASSWORD), "the password is in {what}");
    }
}

#[test]
fn radicale_calendars_and_contacts_are_found_and_kept_in_step() {
    calendars_and_contacts_are_found_and_kept_in_step(Server::Radicale);
}

#[test]
fn xandikos_calendars_and_contacts_are_found_and_kept_in_step() {
    calendars_and_contacts_are_found_and_kept_in_step(Server::Xandikos);
}

#[test]
fn a_wrong_password_is_refused_naming_the_settings() {
    let server = CalServer::start(Server::Radicale);
    let q = Quarry::new();
    let args = server.connector_add_args("not-the-password");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = q.cli(&args);
    assert!(!out.ok, "accepted");
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(
        said.contains("refused the user name and password") && said.contains("`password`"),
        "{said}"
    );
}
