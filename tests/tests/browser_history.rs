//! The browser connector against real profiles (`quarry_tests::browsers`): Chromium's, written
//! by Debian's Chromium visiting pages a loopback server serves, and Firefox ESR's, read while
//! Firefox runs with its database open in WAL mode. Pages are found by title and address words,
//! bookmarks by their folder; only the history and bookmarks files are ever opened (inotify
//! proves `Login Data`, `Cookies` and `cookies.sqlite` are not); `connector add` without a
//! profile offers the profiles found in the usual places.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use inotify::{Inotify, WatchMask};
use quarry_tests::browsers::{Firefox, chromium_profile};
use quarry_tests::found::{first, titles};
use quarry_tests::quarry::Quarry;
use quarry_tests::web::WebServer;

fn page(title: &str, words: &str) -> String {
    format!("<html><head><title>{title}</title></head><body><p>{words}</p></body></html>")
}

/// Watches which files of `dir` are opened from now on.
fn watch_opens(dir: &Path) -> Inotify {
    let inotify = Inotify::init().expect("inotify");
    inotify
        .watches()
        .add(dir, WatchMask::OPEN)
        .expect("watch the profile");
    inotify
}

/// The names of the files opened since `watch_opens`.
fn opened(inotify: &mut Inotify) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut buffer = vec![0u8; 1 << 16];
    while let Ok(events) = inotify.read_events(&mut buffer) {
        let mut any = false;
        for event in events {
            any = true;
            if let Some(name) = event.name {
                names.insert(name.to_string_lossy().into_owned());
            }
        }
        if !any {
            break;
        }
    }
    names
}

/// Adds the profile at `dir` as connector `name`, the way the outside check does.
fn add_profile(q: &Quarry, name: &str, dir: &Path) {
    let profile = format!("profile={}", dir.display());
    q.cli_ok(&[
        "connector",
        "add",
        "plugin",
        "browser",
        "--name",
        name,
        "--set",
        &profile,
    ]);
}

/// Fails unless `read` was opened since `watch_opens`, and none of `never`.
fn assert_read_only(inotify: &mut Inotify, read: &str, never: &[&str]) {
    let seen = opened(inotify);
    assert!(seen.contains(read), "{read} was not read: {seen:?}");
    for name in never {
        assert!(!seen.contains(*name), "{name} was opened: {seen:?}");
    }
}

#[test]
fn history_and_bookmarks_of_chromium_and_firefox_are_found_and_nothing_else_is_read() {
    let web = WebServer::start();
    web.put(
        "/quince.html",
        "text/html",
        &page("Quince marmalade recipe", "Quinces and lemons."),
    );
    web.put(
        "/pier-schedule.html",
        "text/html",
        &page("Harbour crane timetable", "Cranes."),
    );
    web.put(
        "/lighthouse.html",
        "text/html",
        &page("Lighthouse keeper diary", "Lamps."),
    );
    let home = tempfile::tempdir().expect("tempdir");
    let chromium_data = home.path().join(".config/chromium");
    let chromium = chromium_profile(
        &chromium_data,
        &[web.url("/quince.html"), web.url("/pier-schedule.html")],
        &[(
            "Recipes",
            "Sourdough starter guide",
            "https://example.org/sourdough",
        )],
    );
    let firefox = Firefox::start(
        home.path(),
        &web.url("/lighthouse.html"),
        &[(
            "Travel",
            "Fjord ferry schedule",
            "https://example.org/ferry",
        )],
    );

    // Without a profile, `connector add` offers the profiles it finds in the usual places.
    let mut offering = Quarry::new();
    let home_env = format!("HOME={}", home.path().display());
    offering.run_through(&["env", &home_env]);
    let offer = offering.cli(&["connector", "add", "plugin", "browser", "--name", "Browser"]);
    let said = format!("{}{}", offer.stdout, offer.stderr);
    assert!(!offer.ok, "added without a profile: {said}");
    assert!(
        said.contains(&format!("--set profile={}", chromium.display())),
        "{said}"
    );

    let mut q = Quarry::new();
    q.without_model();
    let mut chromium_opens = watch_opens(&chromium);
    add_profile(&q, "Browser", &chromium);
    // Firefox is running: its places.sqlite is open and the visit is in its write-ahead log.
    add_profile(&q, "Firefox", &firefox.profile);
    q.start();
    q.wait_synced();
    let key = q.integration("agent", "all", &["--quota", "unlimited"]);

    // Pages by title and address words, bookmarks by their folder, in both browsers.
    assert_eq!(titles(&q, &key, "quince"), ["Quince marmalade recipe"]);
    assert_eq!(titles(&q, &key, "pier"), ["Harbour crane timetable"]);
    assert_eq!(titles(&q, &key, "Recipes"), ["Sourdough starter guide"]);
    assert_eq!(titles(&q, &key, "lighthouse"), ["Lighthouse keeper diary"]);
    assert_eq!(titles(&q, &key, "Travel"), ["Fjord ferry schedule"]);
    let quince = first(&q, &key, "quince");
    assert_eq!(
        quince["url"].as_str(),
        Some(web.url("/quince.html").as_str())
    );
    let ferry = first(&q, &key, "ferry");
    assert_eq!(ferry["path"], "Bookmarks Menu/Travel", "{ferry}");
    let sourdough = first(&q, &key, "sourdough");
    assert_eq!(sourdough["path"], "Bookmarks bar/Recipes", "{sourdough}");

    // Only the history and bookmarks of the Chromium profile were opened.
    assert_read_only(
        &mut chromium_opens,
        "History",
        &[
            "Login Data",
            "Login Data For Account",
            "Cookies",
            "Web Data",
        ],
    );

    // A page visited later is found after the next sync (a listing of what is new).
    drop(firefox);
    let mut firefox_opens = watch_opens(&home.path().join("firefox-profile"));
    q.cli_ok(&["connector", "sync", "Firefox", "--full", "--wait"]);
    assert_read_only(
        &mut firefox_opens,
        "places.sqlite",
        &[
            "cookies.sqlite",
            "logins.json",
            "key4.db",
            "formhistory.sqlite",
        ],
    );
    let chromium_later = chromium_profile(&chromium_data, &[web.url("/lighthouse.html")], &[]);
    assert_eq!(chromium_later, chromium);
    let started = Instant::now();
    q.cli_ok(&["connector", "sync", "Browser", "--wait"]);
    while titles(&q, &key, "lighthouse").len() < 2 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the later visit was not found: {:?}",
            titles(&q, &key, "lighthouse")
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}
