//! Where published plugins come from in the tests: a web server over HTTPS (Apache httpd with
//! mod_ssl, a certificate of the harness's CA) serving packed files, and an OCI registry
//! (Debian's docker-registry, the CNCF distribution registry) with htpasswd sign-in. Both run
//! on loopback as the servers' user and are stopped by PID.

use std::path::PathBuf;
use std::process::{Child, Stdio};

use crate::local_servers::{
    as_server_user, free_port, give_to_server_user, make_certificates, start_apache,
    wait_until_closed, wait_until_listening, write_apache_config, write_htpasswd,
};

/// A user of the registry, and the password.
pub const REGISTRY_USER: &str = "publisher";
/// That user's password.
pub const REGISTRY_PASSWORD: &str = "registry-secret-1";

/// Apache httpd serving the files of a folder over HTTPS.
pub struct WebServer {
    dir: tempfile::TempDir,
    port: u16,
    process: Option<Child>,
}

impl WebServer {
    /// Starts one serving an empty folder.
    pub fn start_tls() -> WebServer {
        let dir = tempfile::Builder::new()
            .prefix("quarry-web")
            .tempdir()
            .expect("a temporary folder");
        let d = dir.path();
        for sub in ["www", "run"] {
            std::fs::create_dir(d.join(sub)).expect("mkdir");
        }
        make_certificates(d);
        let port = free_port();
        let dd = d.display();
        write_apache_config(
            d,
            port,
            &["authz_core", "ssl", "mime"],
            &format!(
                "TypesConfig /etc/mime.types\nDocumentRoot {dd}/www\n<Directory {dd}/www>\n  Require all granted\n</Directory>\n\
                 SSLEngine on\nSSLCertificateFile {dd}/server.pem\nSSLCertificateKeyFile {dd}/server.key\n"
            ),
        );
        give_to_server_user(d);
        let process = start_apache(d);
        wait_until_listening(port, "Apache httpd (TLS)", || {
            std::fs::read_to_string(d.join("error.log")).unwrap_or_default()
        });
        WebServer {
            dir,
            port,
            process: Some(process),
        }
    }

    /// Serves `bytes` as `name`.
    pub fn put(&self, name: &str, bytes: &[u8]) {
        let path = self.dir.path().join("www").join(name);
        std::fs::write(&path, bytes).expect("write a served file");
        give_to_server_user(&path);
    }

    /// The address of `name`.
    pub fn url(&self, name: &str) -> String {
        format!("https://127.0.0.1:{}/{name}", self.port)
    }

    /// The CA that signed its certificate (for `SSL_CERT_FILE`).
    pub fn ca_file(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }
}

impl Drop for WebServer {
    fn drop(&mut self) {
        if let Some(mut process) = self.process.take() {
            let _ = std::process::Command::new("kill")
                .args(["-TERM", &process.id().to_string()])
                .status();
            let _ = process.wait();
        }
        wait_until_closed(self.port);
    }
}

/// docker-registry on loopback, where only [`REGISTRY_USER`] may push and pull.
pub struct Registry {
    dir: tempfile::TempDir,
    port: u16,
    process: Option<Child>,
}

impl Registry {
    /// Starts one with no repositories.
    pub fn start() -> Registry {
        let dir = tempfile::Builder::new()
            .prefix("quarry-registry")
            .tempdir()
            .expect("a temporary folder");
        let d = dir.path();
        std::fs::create_dir(d.join("data")).expect("mkdir");
        write_htpasswd(d, REGISTRY_USER, REGISTRY_PASSWORD);
        let port = free_port();
        let config = format!(
            "version: 0.1\nlog:\n  level: info\nstorage:\n  filesystem:\n    rootdirectory: {data}\n\
             http:\n  addr: 127.0.0.1:{port}\n  secret: quarry-test-secret\n\
             auth:\n  htpasswd:\n    realm: quarry-test\n    path: {htpasswd}\n",
            data = d.join("data").display(),
            htpasswd = d.join("htpasswd").display(),
        );
        std::fs::write(d.join("config.yml"), config).expect("write config.yml");
        let log = std::fs::File::create(d.join("registry.log")).expect("the log");
        give_to_server_user(d);
        let process = as_server_user("/usr/bin/docker-registry")
            .arg("serve")
            .arg(d.join("config.yml"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("the log"))
            .stderr(log)
            .spawn()
            .expect("docker-registry starts (`make setup` installs it)");
        let registry = Registry {
            dir,
            port,
            process: Some(process),
        };
        wait_until_listening(port, "docker-registry", || registry.log());
        registry
    }

    /// `127.0.0.1:port`, as an `oci://` reference starts.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The environment that signs in to it.
    pub fn credentials() -> [(&'static str, &'static str); 2] {
        [
            ("QUARRY_REGISTRY_USERNAME", REGISTRY_USER),
            ("QUARRY_REGISTRY_PASSWORD", REGISTRY_PASSWORD),
        ]
    }

    /// GETs `path` (under `/v2/`) as the signed-in user, with `accept`: the body.
    pub fn get(&self, path: &str, accept: &str) -> Vec<u8> {
        use base64::Engine as _;
        let basic = base64::engine::general_purpose::STANDARD
            .encode(format!("{REGISTRY_USER}:{REGISTRY_PASSWORD}"));
        let authorization = format!("Basic {basic}");
        let host = self.host();
        let request = crate::http::build(
            "GET",
            &format!("/v2/{path}"),
            &host,
            &[("Authorization", &authorization), ("Accept", accept)],
            b"",
        );
        let answer = crate::http::send(&host, &request).expect("the registry answers");
        assert_eq!(answer.status, 200, "GET {path}: {}", answer.text());
        answer.body
    }

    /// Its log.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("registry.log")).unwrap_or_default()
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        if let Some(mut process) = self.process.take() {
            let _ = process.kill();
            let _ = process.wait();
        }
        wait_until_closed(self.port);
    }
}
