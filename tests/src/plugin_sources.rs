//! Where published plugins come from in the tests: a web server over HTTPS (Apache httpd with
//! mod_ssl, a certificate of the harness's CA) serving packed files, and an OCI registry
//! (Debian's docker-registry, the CNCF distribution registry) that signs in with htpasswd, or
//! with the token flow public registries use: its `auth: token` trusts tokens signed by a key
//! of the harness's, which [`TokenIssuer`] hands out as the Docker token specification says
//! (Debian packages no token service). They run on loopback, the servers as the servers'
//! user, and are stopped by PID.

use std::path::PathBuf;

use base64::Engine as _;
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
    /// Starts one with no repositories, signing in with htpasswd (HTTP Basic).
    pub fn start() -> Registry {
        Registry::start_with(|d| {
            write_htpasswd(d, REGISTRY_USER, REGISTRY_PASSWORD);
            format!(
                "auth:\n  htpasswd:\n    realm: quarry-test\n    path: {}\n",
                d.join("htpasswd").display()
            )
        })
    }

    /// Starts one that takes only tokens `issuer` signed (the Bearer token flow).
    pub fn start_with_tokens(issuer: &TokenIssuer) -> Registry {
        Registry::start_with(|d| {
            std::fs::copy(
                issuer.dir.path().join("server.pem"),
                d.join("token-signer.pem"),
            )
            .expect("copy the signer's certificate");
            format!(
                "auth:\n  token:\n    realm: {}\n    service: {TOKEN_SERVICE}\n    issuer: {TOKEN_ISSUER}\n    rootcertbundle: {}\n",
                issuer.realm(),
                d.join("token-signer.pem").display()
            )
        })
    }

    fn start_with(auth: impl FnOnce(&std::path::Path) -> String) -> Registry {
        let dir = tempfile::Builder::new()
            .prefix("quarry-registry")
            .tempdir()
            .expect("a temporary folder");
        let d = dir.path();
        std::fs::create_dir(d.join("data")).expect("mkdir");
        let port = free_port();
        let config = format!(
            "version: 0.1\nlog:\n  level: info\nstorage:\n  filesystem:\n    rootdirectory: {data}\n\
             http:\n  addr: 127.0.0.1:{port}\n  secret: quarry-test-secret\n{auth}",
            data = d.join("data").display(),
            auth = auth(d),
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

/// The registry's name for itself in tokens (`aud`).
const TOKEN_SERVICE: &str = "quarry-test-registry";
/// Who signs its tokens (`iss`).
const TOKEN_ISSUER: &str = "quarry-test-issuer";

/// The token endpoint of the Docker token specification: `GET /token?service=&scope=` with the
/// user's Basic credentials answers `{"token"}`, a JWT (ES256, its certificate in `x5c`) that
/// grants the scope asked for; wrong or no credentials answer 401. Served on loopback by a
/// thread of the test's.
pub struct TokenIssuer {
    dir: tempfile::TempDir,
    port: u16,
    /// How many tokens it handed out.
    issued: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl TokenIssuer {
    /// Starts one with a signing key and certificate of the harness's CA.
    pub fn start() -> TokenIssuer {
        let dir = tempfile::Builder::new()
            .prefix("quarry-tokens")
            .tempdir()
            .expect("a temporary folder");
        make_certificates(dir.path());
        let key_pem = std::fs::read_to_string(dir.path().join("server.key")).expect("key");
        let cert_pem = std::fs::read_to_string(dir.path().join("server.pem")).expect("cert");
        let signer = Signer::new(&key_pem, &cert_pem);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let issued = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = issued.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                answer_token_request(stream, &signer, &counter);
            }
        });
        TokenIssuer { dir, port, issued }
    }

    /// Its token endpoint.
    pub fn realm(&self) -> String {
        format!("http://127.0.0.1:{}/token", self.port)
    }

    /// How many tokens it handed out so far.
    pub fn issued(&self) -> usize {
        self.issued.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// Signs tokens with the issuer's key (ECDSA P-256, SHA-256: JWT's ES256).
struct Signer {
    key: ring::signature::EcdsaKeyPair,
    /// The certificate, DER in base64, for the header's `x5c`.
    x5c: String,
}

impl Signer {
    fn new(key_pem: &str, cert_pem: &str) -> Signer {
        let der = |pem: &str| {
            let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
            base64::engine::general_purpose::STANDARD
                .decode(body)
                .expect("PEM holds base64")
        };
        let key = ring::signature::EcdsaKeyPair::from_pkcs8(
            &ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            &der(key_pem),
            &ring::rand::SystemRandom::new(),
        )
        .expect("an ECDSA P-256 key in PKCS#8");
        Signer {
            key,
            x5c: base64::engine::general_purpose::STANDARD.encode(der(cert_pem)),
        }
    }

    /// A JWT granting `actions` on repository `name` to `subject`, for five minutes.
    fn token(&self, subject: &str, name: &str, actions: &[&str]) -> String {
        let url = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_secs();
        let header = serde_json::json!({"typ": "JWT", "alg": "ES256", "x5c": [self.x5c]});
        let claims = serde_json::json!({
            "iss": TOKEN_ISSUER, "sub": subject, "aud": TOKEN_SERVICE,
            "exp": now + 300, "nbf": now - 10, "iat": now, "jti": format!("{now}-{name}"),
            "access": [{"type": "repository", "name": name, "actions": actions}],
        });
        let signed = format!(
            "{}.{}",
            url(header.to_string().as_bytes()),
            url(claims.to_string().as_bytes())
        );
        let signature = self
            .key
            .sign(&ring::rand::SystemRandom::new(), signed.as_bytes())
            .expect("sign");
        format!("{signed}.{}", url(signature.as_ref()))
    }
}

/// Answers one request to the token endpoint.
fn answer_token_request(
    mut stream: std::net::TcpStream,
    signer: &Signer,
    issued: &std::sync::atomic::AtomicUsize,
) {
    use std::io::{BufRead, Write};
    let mut reader = std::io::BufReader::new(stream.try_clone().expect("clone"));
    let mut request_line = String::new();
    let _ = reader.read_line(&mut request_line);
    let mut authorization = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("authorization")
        {
            authorization = value.trim().to_owned();
        }
    }
    let expected = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD
            .encode(format!("{REGISTRY_USER}:{REGISTRY_PASSWORD}"))
    );
    let target = request_line.split_whitespace().nth(1).unwrap_or_default();
    let query = target.split_once('?').map_or("", |(_, q)| q);
    let scope = query
        .split('&')
        .find_map(|pair| pair.strip_prefix("scope="))
        .map(|s| {
            s.replace("%3A", ":")
                .replace("%2F", "/")
                .replace("%2C", ",")
        })
        .unwrap_or_default();
    // repository:<name>:<actions>
    let mut parts = scope.splitn(3, ':');
    let (_, name, actions) = (parts.next(), parts.next(), parts.next());
    let answer = if authorization != expected {
        "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_owned()
    } else {
        let actions: Vec<&str> = actions.unwrap_or_default().split(',').collect();
        let token = signer.token(REGISTRY_USER, name.unwrap_or_default(), &actions);
        issued.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let body = serde_json::json!({"token": token, "expires_in": 300}).to_string();
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    };
    let _ = stream.write_all(answer.as_bytes());
}
