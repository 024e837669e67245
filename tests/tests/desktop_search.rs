//! The desktop's own search (docs/desktop.md) as installed: `scripts/install.sh` into a prefix,
//! a session bus of the test's own that starts services from the installed D-Bus service file,
//! the installed `quarry serve` answering GNOME Shell's `org.gnome.Shell.SearchProvider2` and
//! KRunner's `org.kde.krunner1` at the bus name and paths the installed `.ini` and runner file
//! name, every call made with `gdbus` as the shell would make it. "Opening" goes through an
//! `xdg-open` first on the server's PATH that notes what it was given; the sign-in page it is
//! given is then opened in Chromium.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use quarry_tests::browser::{assert_screenshots, run_script};
use quarry_tests::install::install_into;
use quarry_tests::local_servers::as_server_user;
use quarry_tests::pdf::pdf;
use quarry_tests::quarry::{Quarry, running_as_root};
use quarry_tests::session_bus::{SessionBus, quoted};

const GNOME: &str = "org.gnome.Shell.SearchProvider2";
const KRUNNER: &str = "org.kde.krunner1";

/// Where the installed files say the desktop's search answers.
struct Installed {
    bus_name: String,
    gnome_path: String,
    krunner_path: String,
}

impl Installed {
    /// Reads the installed `.ini`, runner file, launcher and D-Bus service file, checking that
    /// they agree with one another and name the installed binary.
    fn read(prefix: &Path) -> Installed {
        let share = prefix.join("share");
        let read = |rel: &str| {
            std::fs::read_to_string(share.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
        };
        let value = |text: &str, key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("{key}=")))
                .unwrap_or_else(|| panic!("no {key} in:\n{text}"))
                .to_owned()
        };
        let ini = read("gnome-shell/search-providers/dev.quarry.Quarry.search-provider.ini");
        let runner = read("krunner/dbusplugins/dev.quarry.Quarry.desktop");
        let service = read("dbus-1/services/dev.quarry.Quarry.SearchProvider.service");
        let launcher = read(&format!("applications/{}", value(&ini, "DesktopId")));
        let bus_name = value(&ini, "BusName");
        assert_eq!(value(&ini, "Version"), "2");
        assert_eq!(value(&runner, "X-Plasma-DBusRunner-Service"), bus_name);
        assert_eq!(value(&service, "Name"), bus_name);
        let bin = prefix.join("bin/quarry");
        assert_eq!(
            value(&service, "Exec"),
            format!("{} desktop-search", bin.display())
        );
        assert_eq!(value(&launcher, "Exec"), format!("{} open", bin.display()));
        Installed {
            bus_name,
            gnome_path: value(&ini, "ObjectPath"),
            krunner_path: value(&runner, "X-Plasma-DBusRunner-Path"),
        }
    }

    fn gnome(&self, bus: &SessionBus, method: &str, args: &[&str]) -> String {
        let method = format!("{GNOME}.{method}");
        bus.call(&self.bus_name, &self.gnome_path, &method, args)
    }

    fn krunner(&self, bus: &SessionBus, method: &str, args: &[&str]) -> Result<String, String> {
        let method = format!("{KRUNNER}.{method}");
        let gdbus = std::process::Command::new("gdbus");
        bus.call_as(gdbus, &self.bus_name, &self.krunner_path, &method, args)
    }
}

/// An `xdg-open` that notes each argument it is given, one per line, in `log`.
fn noting_opener(dir: &Path, log: &Path) {
    let opener = dir.join("xdg-open");
    std::fs::write(
        &opener,
        format!("#!/bin/sh\nprintf '%s\\n' \"$1\" >> '{}'\n", log.display()),
    )
    .expect("write the opener");
    std::fs::set_permissions(&opener, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// What the opener was given, in order.
fn opened(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The one-time sign-in link a private page forwards to, checked private to the user.
fn forwarded_link(page: &str, data_dir: &Path) -> String {
    let page = Path::new(page);
    assert!(
        page.starts_with(data_dir.join("desktop-open")),
        "{page:?} is in the data folder"
    );
    let mode = std::fs::metadata(page).expect("page").permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "only the user reads the sign-in page");
    let body = std::fs::read_to_string(page).expect("page");
    let link = body
        .split("url=")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a refresh to the link");
    link.replace("&amp;", "&")
}

fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "{what} within {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn notes(dir: &Path) {
    std::fs::write(
        dir.join("budget.md"),
        "# Budget\n\nThe quarterly budget review for the lighthouse project.\n",
    )
    .expect("write");
    let report = pdf(
        "Report",
        &[
            &["Annual report", "Harbour works went to plan."],
            &["The lighthouse keeper retired in spring."],
        ],
        true,
    );
    std::fs::write(dir.join("report.pdf"), report).expect("write");
    std::fs::write(
        dir.join("notice.html"),
        "<html><head><title>Notice</title></head><body><p>Lighthouse tours resume in May.</p></body></html>",
    )
    .expect("write");
}

/// A server (the `binary` given, else the tests') of a folder of [`notes`], answering the
/// desktop's search on `bus`, with `path` as its PATH; synced. Returns it and the folder.
fn serving_notes(binary: Option<&Path>, bus: &SessionBus, path: &str) -> (Quarry, PathBuf) {
    let mut quarry = Quarry::new();
    quarry.without_model();
    if let Some(binary) = binary {
        quarry.use_binary(binary.to_owned());
    }
    let folder = quarry.scratch("notes");
    notes(&folder);
    quarry.add_folder("Notes", &folder);
    quarry.start_with_env(&[
        ("QUARRY_DESKTOP_SEARCH", "true"),
        ("DBUS_SESSION_BUS_ADDRESS", &bus.address),
        ("PATH", path),
    ]);
    quarry.wait_synced();
    (quarry, folder)
}

#[test]
fn the_installed_provider_and_runner_find_open_and_show_real_documents() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let prefix = tmp.path().join("prefix");
    install_into(&prefix, &[]);
    let installed = Installed::read(&prefix);
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let opened_log = tmp.path().join("opened");
    noting_opener(&bin, &opened_log);
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display());
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let home = home.to_string_lossy().into_owned();
    let services = prefix.join("share/dbus-1/services");
    let bus = SessionBus::start(
        tmp.path(),
        &services,
        &[("HOME", &home), ("PATH", &path)],
        false,
    );

    // Quarry is not running: the bus starts the installed light answer, which says so.
    let ids = quoted(&installed.gnome(&bus, "GetInitialResultSet", &["['lighthouse']"]));
    assert_eq!(ids, ["quarry-not-running"]);
    let metas = installed.gnome(&bus, "GetResultMetas", &["['quarry-not-running']"]);
    assert!(metas.contains("Quarry is not running"), "{metas}");
    assert!(metas.contains("systemctl --user start quarry"), "{metas}");
    let matches = installed.krunner(&bus, "Match", &["lighthouse"]);
    assert!(
        matches
            .as_ref()
            .is_ok_and(|m| m.contains("Quarry is not running")),
        "{matches:?}"
    );
    let stand_in = bus
        .owner_pid(&installed.bus_name)
        .expect("the stand-in owns the name");

    // The installed service takes the name over; the stand-in ends.
    let (quarry, folder) = serving_notes(Some(&prefix.join("bin/quarry")), &bus, &path);
    wait_until("the service owns the name", Duration::from_secs(10), || {
        bus.owner_pid(&installed.bus_name) == quarry.pid()
    });
    wait_until("the stand-in ends", Duration::from_secs(10), || {
        !Path::new(&format!("/proc/{stand_in}")).exists()
    });

    // GNOME Shell: results, a narrower search, their metas.
    let ids = quoted(&installed.gnome(&bus, "GetInitialResultSet", &["['lighthouse']"]));
    assert_eq!(ids.len(), 3, "{ids:?}");
    let meta = |id: &str, key: &str| {
        let metas = installed.gnome(&bus, "GetResultMetas", &[&format!("['{id}']")]);
        metas
            .split(&format!("'{key}': <'"))
            .nth(1)
            .and_then(|rest| rest.split("'>").next())
            .unwrap_or_else(|| panic!("no {key} in {metas}"))
            .to_owned()
    };
    let id_named = |name: &str| {
        ids.iter()
            .find(|id| meta(id, "name") == name)
            .unwrap_or_else(|| panic!("{name} is found: {ids:?}"))
            .clone()
    };
    let (budget, report, notice) = (
        id_named("budget.md"),
        id_named("report.pdf"),
        id_named("notice.html"),
    );
    for (id, icon) in [
        (&budget, "text-x-generic"),
        (&report, "application-pdf"),
        (&notice, "text-html"),
    ] {
        assert_eq!(meta(id, "gicon"), icon);
        assert_eq!(&meta(id, "id"), id);
    }
    assert!(
        report.ends_with("#2"),
        "the passage's page is in the id: {report}"
    );
    let description = meta(&report, "description");
    assert!(
        description.starts_with("Notes · report.pdf · ")
            && description.contains("The lighthouse keeper retired in spring"),
        "the description: connector, path, passage: {description}"
    );
    let all = format!(
        "[{}]",
        ids.iter()
            .map(|i| format!("'{i}'"))
            .collect::<Vec<_>>()
            .join(",")
    );
    let metas = installed.gnome(&bus, "GetResultMetas", &[&all]);
    assert_eq!(metas.matches("'name'").count(), 3, "{metas}");
    let narrower = quoted(&installed.gnome(
        &bus,
        "GetSubsearchResultSet",
        &[&all, "['lighthouse', 'keeper']"],
    ));
    assert_eq!(narrower, std::slice::from_ref(&report));
    assert!(quoted(&installed.gnome(&bus, "GetInitialResultSet", &["['l']"])).is_empty());
    assert!(!metas.contains("qry_"), "no key on the bus");

    // Activating: a local document opens as the file itself; a page (HTML) in Quarry's document
    // view, through a private page that signs the browser in once.
    installed.gnome(&bus, "ActivateResult", &[&budget, "['lighthouse']", "0"]);
    let canonical = |p: &Path| p.canonicalize().expect("canonical");
    assert_eq!(
        opened(&opened_log),
        [canonical(&folder.join("budget.md")).to_string_lossy()]
    );
    installed.gnome(&bus, "ActivateResult", &[&notice, "['lighthouse']", "0"]);
    let page = opened(&opened_log)[1].clone();
    let link = forwarded_link(&page, quarry.data_dir());
    assert!(
        link.starts_with(&format!("{}/settings/login?code=", quarry.url())),
        "{link}"
    );
    assert!(link.contains("next=%2Fsearch%2Fdocs%2F"), "{link}");
    let landed = run_script(
        "desktop-open.mjs",
        &quarry,
        &[
            ("OPEN_PAGE", OsStr::new(&page)),
            ("WORD", OsStr::new("lighthouse")),
        ],
    );
    assert_eq!(landed["title"], "notice.html", "{landed}");
    assert_screenshots("desktop-open", &["document"]);

    // "More results": the search page with the query.
    installed.gnome(&bus, "LaunchSearch", &["['lighthouse', 'keeper']", "0"]);
    let page = opened(&opened_log)[2].clone();
    let link = forwarded_link(&page, quarry.data_dir());
    assert!(
        link.ends_with("next=%2Fsearch%3Fq%3Dlighthouse%2Bkeeper"),
        "{link}"
    );

    // KRunner: the same documents, the same opening, and "Show in Quarry" at the cited page.
    let actions = installed.krunner(&bus, "Actions", &[]).expect("Actions");
    assert!(
        actions.contains("'quarry-view', 'Show in Quarry'"),
        "{actions}"
    );
    let matches = installed
        .krunner(&bus, "Match", &["lighthouse keeper"])
        .expect("Match");
    assert!(
        matches.starts_with(&format!(
            "([('{report}', 'report.pdf', 'application-pdf', 30, 1.0, "
        )),
        "{matches}"
    );
    assert!(matches.contains("'category': <'Notes'>"), "{matches}");
    installed.krunner(&bus, "Run", &[&report, ""]).expect("Run");
    assert_eq!(
        opened(&opened_log)[3],
        canonical(&folder.join("report.pdf")).to_string_lossy()
    );
    installed
        .krunner(&bus, "Run", &[&report, "quarry-view"])
        .expect("Run");
    let link = forwarded_link(&opened(&opened_log)[4], quarry.data_dir());
    assert!(
        link.contains("%3Fq%3Dlighthouse%2Bkeeper%26page%3D2"),
        "the view opens at the cited page with the words marked: {link}"
    );
    let refused = installed.krunner(&bus, "Run", &[&report, "format-disk"]);
    assert!(refused.is_err_and(|e| e.contains("no action")));
    let refused = installed.krunner(&bus, "Run", &["cn_x/../../etc", ""]);
    assert!(refused.is_err_and(|e| e.contains("not a result Quarry gave")));
    assert_eq!(opened(&opened_log).len(), 5, "nothing else was opened");
}

#[test]
fn a_caller_of_another_user_on_a_shared_bus_is_refused() {
    if !running_as_root() {
        eprintln!("skipped: calling as another user needs root (CI runs as root)");
        return;
    }
    // A bus others may reach: its folder is open to them (the socket is theirs to connect to).
    let tmp = tempfile::tempdir().expect("temp dir");
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let bus_dir: PathBuf = tmp.path().join("bus");
    std::fs::create_dir_all(&bus_dir).expect("bus dir");
    std::fs::set_permissions(&bus_dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let no_services = tmp.path().join("services");
    std::fs::create_dir_all(&no_services).expect("services");
    let bus = SessionBus::start(&bus_dir, &no_services, &[], true);
    let path = std::env::var("PATH").unwrap_or_default();
    let (_quarry, _) = serving_notes(None, &bus, &path);
    let name = "dev.quarry.Quarry.SearchProvider";
    let path = "/dev/quarry/Quarry/SearchProvider";
    let method = format!("{GNOME}.GetInitialResultSet");
    let ours = bus.call(name, path, &method, &["['lighthouse']"]);
    assert_eq!(quoted(&ours).len(), 3, "{ours}");
    let theirs = bus.call_as(
        as_server_user("gdbus"),
        name,
        path,
        &method,
        &["['lighthouse']"],
    );
    assert!(
        theirs.as_ref().is_err_and(|e| e.contains("AccessDenied")),
        "another user learns nothing: {theirs:?}"
    );
}
