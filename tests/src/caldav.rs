//! Real CalDAV/CardDAV servers on loopback for the calendar connector's tests: Radicale and
//! Xandikos (Debian's), each with a calendar and an address book of the user's, behind a
//! password (Radicale's own htpasswd; Xandikos has no sign-in of its own, so Apache httpd
//! asks for the password in front of it, as a deployment would). Run as a user that is not
//! root, stopped by PID. Tests put events and cards there over HTTP, as a client would, and
//! count the server's requests in its log.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use tempfile::TempDir;

use crate::http;
use crate::local_servers::{
    apache_requests, as_server_user, free_port, give_to_server_user, start_apache,
    wait_until_closed, wait_until_listening, write_apache_config, write_htpasswd,
};

/// The user's name.
pub const USER: &str = "carol";
/// Her password.
pub const PASSWORD: &str = "cal-s3cret-password";

/// Which server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    /// Radicale, with its own password file.
    Radicale,
    /// Xandikos behind Apache httpd's Basic authentication.
    Xandikos,
}

/// A running CalDAV/CardDAV server.
pub struct CalServer {
    dir: TempDir,
    server: Server,
    /// The port clients use (Apache's, in front of Xandikos).
    pub port: u16,
    /// Xandikos's own port, behind Apache.
    inner_port: u16,
    processes: Vec<Child>,
}

impl CalServer {
    /// A server of kind `server`, with an empty calendar and address book.
    pub fn start(server: Server) -> CalServer {
        let dir = tempfile::Builder::new()
            .prefix("quarry-caldav")
            .tempdir()
            .expect("a temporary folder");
        for sub in ["data", "run"] {
            std::fs::create_dir(dir.path().join(sub)).expect("mkdir");
        }
        let mut cal = CalServer {
            dir,
            server,
            port: free_port(),
            inner_port: free_port(),
            processes: Vec::new(),
        };
        match server {
            Server::Radicale => cal.configure_radicale(),
            Server::Xandikos => cal.configure_proxy(),
        }
        give_to_server_user(cal.dir.path());
        cal.run();
        if server == Server::Radicale {
            cal.create(
                "MKCOL",
                &cal.calendar(),
                r#"<?xml version="1.0"?><D:mkcol xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:set><D:prop><D:resourcetype><D:collection/><C:calendar/></D:resourcetype><D:displayname>Work</D:displayname></D:prop></D:set></D:mkcol>"#,
            );
            cal.create(
                "MKCOL",
                &cal.address_book(),
                r#"<?xml version="1.0"?><D:mkcol xmlns:D="DAV:" xmlns:CR="urn:ietf:params:xml:ns:carddav"><D:set><D:prop><D:resourcetype><D:collection/><CR:addressbook/></D:resourcetype><D:displayname>Contacts</D:displayname></D:prop></D:set></D:mkcol>"#,
            );
        }
        cal
    }

    /// The connector's `url`: the user's principal (Radicale) or the server's root, from
    /// which the connector finds the principal (Xandikos).
    pub fn url(&self) -> String {
        match self.server {
            Server::Radicale => format!("http://127.0.0.1:{}/{USER}/", self.port),
            Server::Xandikos => format!("http://127.0.0.1:{}/", self.port),
        }
    }

    /// The path of the user's calendar.
    pub fn calendar(&self) -> String {
        match self.server {
            Server::Radicale => format!("/{USER}/work/"),
            Server::Xandikos => format!("/{USER}/calendars/calendar/"),
        }
    }

    /// The path of the user's address book.
    pub fn address_book(&self) -> String {
        match self.server {
            Server::Radicale => format!("/{USER}/contacts/"),
            Server::Xandikos => format!("/{USER}/contacts/addressbook/"),
        }
    }

    /// The arguments of `quarry connector add` for a CalDAV connector "Calendar": the form the
    /// issue's outside check uses.
    pub fn connector_add_args(&self, password: &str) -> Vec<String> {
        let mut args: Vec<String> = ["connector", "add", "plugin", "caldav", "--name", "Calendar"]
            .map(str::to_owned)
            .to_vec();
        for setting in [
            format!("url={}", self.url()),
            format!("username={USER}"),
            format!("password={password}"),
        ] {
            args.extend(["--set".to_owned(), setting]);
        }
        args
    }

    /// Puts `body` at `path` (an event's `.ics` or a card's `.vcf`), as a client does.
    pub fn put(&self, path: &str, body: &str) {
        let content_type = if path.ends_with(".vcf") {
            "text/vcard; charset=utf-8"
        } else {
            "text/calendar; charset=utf-8"
        };
        let answer = self.send("PUT", path, &[("Content-Type", content_type)], body);
        assert!(
            (200..300).contains(&answer.status),
            "PUT {path}: {} {}",
            answer.status,
            answer.text()
        );
    }

    /// Deletes the item at `path`.
    pub fn delete(&self, path: &str) {
        let answer = self.send("DELETE", path, &[], "");
        assert!(
            (200..300).contains(&answer.status),
            "DELETE {path}: {}",
            answer.status
        );
    }

    fn create(&self, method: &str, path: &str, body: &str) {
        let answer = self.send(
            method,
            path,
            &[("Content-Type", "application/xml; charset=utf-8")],
            body,
        );
        assert!(
            (200..300).contains(&answer.status),
            "{method} {path}: {} {}",
            answer.status,
            answer.text()
        );
    }

    fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> http::Response {
        let authorization = format!("Basic {}", STANDARD.encode(format!("{USER}:{PASSWORD}")));
        let mut all = vec![("Authorization", authorization.as_str())];
        all.extend_from_slice(headers);
        let host = format!("127.0.0.1:{}", self.port);
        let request = http::build(method, path, &host, &all, body.as_bytes());
        http::send(&host, &request).expect("the server answers")
    }

    /// The requests the server has answered so far, as `METHOD path` (from its log).
    pub fn requests(&self) -> Vec<String> {
        match self.server {
            // `... PROPFIND request for '/carol/' received from 127.0.0.1 ...`
            Server::Radicale => self
                .log()
                .lines()
                .filter_map(|l| {
                    let (before, after) = l.split_once(" request for '")?;
                    let method = before.rsplit(' ').next()?;
                    let path = after.split('\'').next()?;
                    Some(format!("{method} {path}"))
                })
                .collect(),
            Server::Xandikos => apache_requests(self.dir.path()),
        }
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        let name = match self.server {
            Server::Radicale => "radicale.log",
            Server::Xandikos => "xandikos.log",
        };
        std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default()
    }

    fn run(&mut self) {
        let d = self.dir.path().to_path_buf();
        let log = |name: &str| {
            let file = std::fs::File::create(d.join(name)).expect("a log");
            give_to_server_user(&d.join(name));
            file
        };
        match self.server {
            Server::Radicale => {
                let out = log("radicale.log");
                let child = as_server_user("/usr/bin/radicale")
                    .arg("--config")
                    .arg(d.join("radicale.conf"))
                    .stdin(Stdio::null())
                    .stdout(out.try_clone().expect("the log"))
                    .stderr(out)
                    .spawn()
                    .expect("radicale starts (`make setup` installs it)");
                self.processes.push(child);
                wait_until_listening(self.port, "Radicale", || self.log());
            }
            Server::Xandikos => {
                let out = log("xandikos.log");
                let child = as_server_user("/usr/bin/xandikos")
                    .args(["-d"])
                    .arg(d.join("data"))
                    .args(["--defaults", "-l", "127.0.0.1", "-p"])
                    .arg(self.inner_port.to_string())
                    .args(["--current-user-principal", &format!("/{USER}/")])
                    // Its git repositories read the user's git settings: a home of its own.
                    .env("HOME", &d)
                    .stdin(Stdio::null())
                    .stdout(out.try_clone().expect("the log"))
                    .stderr(out)
                    .spawn()
                    .expect("xandikos starts (`make setup` installs it)");
                self.processes.push(child);
                wait_until_listening(self.inner_port, "Xandikos", || self.log());
                self.processes.push(start_apache(&d));
                wait_until_listening(self.port, "Apache in front of Xandikos", || {
                    std::fs::read_to_string(d.join("error.log")).unwrap_or_default()
                });
            }
        }
    }

    fn configure_radicale(&self) {
        let d = self.dir.path();
        std::fs::write(d.join("users"), format!("{USER}:{PASSWORD}\n")).expect("users");
        let config = format!(
            "[server]\nhosts = 127.0.0.1:{port}\n\n[auth]\ntype = htpasswd\nhtpasswd_filename = {d}/users\n\
             htpasswd_encryption = plain\n\n[rights]\ntype = owner_only\n\n\
             [storage]\nfilesystem_folder = {d}/data\n\n[logging]\nlevel = info\nmask_passwords = True\n",
            port = self.port,
            d = d.display()
        );
        std::fs::write(d.join("radicale.conf"), config).expect("radicale.conf");
    }

    fn configure_proxy(&self) {
        let d = self.dir.path();
        write_htpasswd(d, USER, PASSWORD);
        let inner = self.inner_port;
        write_apache_config(
            d,
            self.port,
            &[
                "authn_core",
                "authz_core",
                "auth_basic",
                "authn_file",
                "authz_user",
                "proxy",
                "proxy_http",
            ],
            &format!(
                "ProxyPreserveHost On\nProxyPass / http://127.0.0.1:{inner}/\n\
                 ProxyPassReverse / http://127.0.0.1:{inner}/\n\
                 <Location />\n  AuthType Basic\n  AuthName \"Quarry test\"\n\
                 \x20 AuthUserFile {}/htpasswd\n  Require valid-user\n</Location>\n",
                d.display()
            ),
        );
    }

    /// The folder the server keeps its data in.
    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }
}

impl Drop for CalServer {
    fn drop(&mut self) {
        for mut process in self.processes.drain(..).rev() {
            // SIGTERM: Apache stops its children with it.
            let _ = Command::new("kill")
                .args(["-TERM", &process.id().to_string()])
                .status();
            let _ = process.wait();
        }
        wait_until_closed(self.port);
    }
}
