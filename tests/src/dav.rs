//! Real WebDAV servers on loopback for the WebDAV connector's tests: WsgiDAV (PyPI, which
//! `make setup` installs into the tools cache) and Apache httpd with mod_dav (Debian's
//! `apache2-bin`), each serving a folder of the harness's under `/dav/` with a password, run as
//! a user that is not root and stopped by its PID. Tests change the served folder directly, as
//! another client of the server would, and count the server's requests in its log.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

use tempfile::TempDir;

use crate::local_servers::{
    apache_requests, as_server_user, free_port, give_to_server_user, make_certificates,
    start_apache, wait_until_closed, wait_until_listening, write_apache_config, write_htpasswd,
};

/// The user's name.
pub const USER: &str = "carol";
/// Her password.
pub const PASSWORD: &str = "dav-s3cret-password";

/// Which server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    /// WsgiDAV (Python, cheroot).
    WsgiDav,
    /// Apache httpd with mod_dav and mod_dav_fs.
    Apache,
}

/// A running WebDAV server.
pub struct DavServer {
    dir: TempDir,
    /// Its loopback port.
    pub port: u16,
    server: Server,
    tls: bool,
    process: Option<Child>,
}

impl DavServer {
    /// A server of kind `server` over plain HTTP.
    pub fn start(server: Server) -> DavServer {
        DavServer::start_with(server, false)
    }

    /// WsgiDAV over HTTPS, with a certificate the harness's own CA signed.
    pub fn start_tls() -> DavServer {
        DavServer::start_with(Server::WsgiDav, true)
    }

    fn start_with(server: Server, tls: bool) -> DavServer {
        let dir = tempfile::Builder::new()
            .prefix("quarry-dav")
            .tempdir()
            .expect("a temporary folder");
        for sub in ["root", "run", "lock"] {
            std::fs::create_dir(dir.path().join(sub)).expect("mkdir");
        }
        if tls {
            make_certificates(dir.path());
        }
        let mut dav = DavServer {
            dir,
            port: free_port(),
            server,
            tls,
            process: None,
        };
        match server {
            Server::WsgiDav => dav.configure_wsgidav(),
            Server::Apache => dav.configure_apache(),
        }
        give_to_server_user(dav.dir.path());
        dav.run();
        dav
    }

    /// The served folder: what is there, the server serves.
    pub fn root(&self) -> PathBuf {
        self.dir.path().join("root")
    }

    /// Writes `bytes` at `rel` in the served folder (folders made on the way), readable by the
    /// server's user whatever the umask.
    pub fn put(&self, rel: &str, bytes: &[u8]) {
        let root = self.root();
        let mut at = root.clone();
        let names: Vec<&str> = rel.split('/').collect();
        for name in &names[..names.len() - 1] {
            at.push(name);
            if !at.is_dir() {
                std::fs::create_dir(&at).expect("mkdir");
                std::fs::set_permissions(&at, std::fs::Permissions::from_mode(0o755))
                    .expect("chmod");
            }
        }
        let path = root.join(rel);
        std::fs::write(&path, bytes).expect("write a served file");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    }

    /// The connector's `url`: the served folder.
    pub fn url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}/dav/", self.port)
    }

    /// The CA's certificate (PEM) of a TLS server: what `ca_file` names.
    pub fn ca_file(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// The arguments of `quarry connector add` for a WebDAV connector "Cloud" of the user on
    /// this server: the form the outside check uses.
    pub fn connector_add_args(&self, password: &str) -> Vec<String> {
        let mut args: Vec<String> = ["connector", "add", "plugin", "webdav", "--name", "Cloud"]
            .map(str::to_owned)
            .to_vec();
        for setting in [
            format!("url={}", self.url()),
            format!("username={USER}"),
            format!("password={password}"),
        ] {
            args.extend(["--set".to_owned(), setting]);
        }
        if self.tls {
            args.extend([
                "--set".to_owned(),
                format!("ca_file={}", self.ca_file().display()),
            ]);
        }
        args
    }

    /// Changes the user's password (Apache reads its password file at each request).
    pub fn change_password(&self, password: &str) {
        assert_eq!(
            self.server,
            Server::Apache,
            "only Apache's password file is read live"
        );
        write_htpasswd(self.dir.path(), USER, password);
    }

    /// The requests the server has answered so far, as `METHOD path` (from its log).
    pub fn requests(&self) -> Vec<String> {
        let log = self.log();
        match self.server {
            // `... "PROPFIND /dav/sub/" depth=1, elap=0.004sec -> 207 Multi-Status`
            Server::WsgiDav => log
                .lines()
                .filter(|l| l.contains("elap="))
                .filter_map(|l| {
                    let quoted = l.split('"').nth(1)?;
                    Some(quoted.to_owned())
                })
                .collect(),
            Server::Apache => apache_requests(self.dir.path()),
        }
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        let name = match self.server {
            Server::WsgiDav => "server.log",
            Server::Apache => "error.log",
        };
        std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default()
    }

    /// Stops the server by its PID: WsgiDAV at once (SIGKILL), Apache by SIGTERM, which
    /// stops its children with it (they would outlive a killed parent).
    pub fn kill(&mut self) {
        if let Some(mut process) = self.process.take() {
            match self.server {
                Server::WsgiDav => {
                    let _ = process.kill();
                }
                Server::Apache => {
                    let _ = std::process::Command::new("kill")
                        .args(["-TERM", &process.id().to_string()])
                        .status();
                }
            }
            let _ = process.wait();
        }
        wait_until_closed(self.port);
    }

    /// Starts the server again after [`DavServer::kill`], on the same port and folder.
    pub fn restart(&mut self) {
        self.kill();
        self.run();
    }

    fn run(&mut self) {
        let d = self.dir.path();
        let process = match self.server {
            Server::WsgiDav => {
                let log = std::fs::File::create(d.join("server.log")).expect("the log");
                give_to_server_user(&d.join("server.log"));
                as_server_user("/usr/bin/python3")
                    .args(["-m", "wsgidav.server.server_cli", "-c"])
                    .arg(d.join("wsgidav.yaml"))
                    .env("PYTHONPATH", d.join("lib"))
                    .current_dir(d)
                    .stdin(Stdio::null())
                    .stdout(log.try_clone().expect("the log"))
                    .stderr(log)
                    .spawn()
                    .expect("WsgiDAV starts")
            }
            Server::Apache => start_apache(d),
        };
        self.process = Some(process);
        let what = format!("{:?}", self.server);
        wait_until_listening(self.port, &what, || self.log());
    }

    fn configure_wsgidav(&self) {
        let d = self.dir.path();
        let tools = wsgidav_tools();
        assert!(
            tools.join("wsgidav").is_dir(),
            "WsgiDAV is not installed in {}: run `make setup`",
            tools.display()
        );
        // The server runs as `nobody`, who cannot read the tools cache under a private home:
        // the package is copied beside its configuration.
        copy_tree(&tools.join("wsgidav"), &d.join("lib/wsgidav"));
        let tls = if self.tls {
            format!(
                "ssl_certificate: {}\nssl_private_key: {}\n",
                d.join("server.pem").display(),
                d.join("server.key").display()
            )
        } else {
            String::new()
        };
        let config = format!(
            "host: 127.0.0.1\nport: {port}\n{tls}provider_mapping:\n  \"/dav\": \"{root}\"\n\
             http_authenticator:\n  accept_basic: true\n  accept_digest: false\n  default_to_digest: false\n\
             simple_dc:\n  user_mapping:\n    \"*\":\n      \"{USER}\":\n        password: \"{PASSWORD}\"\n\
             verbose: 3\nlogging:\n  enable_loggers: []\ndir_browser:\n  enable: false\n",
            port = self.port,
            root = d.join("root").display(),
        );
        std::fs::write(d.join("wsgidav.yaml"), config).expect("write wsgidav.yaml");
    }

    fn configure_apache(&self) {
        let d = self.dir.path();
        write_htpasswd(d, USER, PASSWORD);
        let dd = d.display();
        write_apache_config(
            d,
            self.port,
            &[
                "authn_core",
                "authz_core",
                "auth_basic",
                "authn_file",
                "authz_user",
                "alias",
                "mime",
                "dav",
                "dav_fs",
            ],
            &format!(
                "TypesConfig /etc/mime.types\nDavLockDB {dd}/lock/DavLock\nAlias /dav {dd}/root\n\
                 <Directory {dd}/root>\n  Dav On\n  AllowOverride All\n  AuthType Basic\n  AuthName \"Quarry test\"\n\
                 \x20 AuthUserFile {dd}/htpasswd\n  Require valid-user\n</Directory>\n"
            ),
        );
    }
}

impl Drop for DavServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Where `make setup` installs WsgiDAV (a `--target` folder of pip's).
fn wsgidav_tools() -> PathBuf {
    match std::env::var_os("QUARRY_WSGIDAV") {
        Some(dir) => PathBuf::from(dir),
        None => {
            let home = std::env::var_os("HOME").expect("HOME is set");
            PathBuf::from(home).join(".cache/quarry/tools/wsgidav")
        }
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read the tools").flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            if entry.file_name() != "__pycache__" {
                copy_tree(&entry.path(), &target);
            }
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}
