//! What the tests' real servers (Dovecot, WsgiDAV, Apache httpd, Radicale) share: free
//! loopback ports, a certificate authority of the harness's own, the user they run as (`nobody`
//! when the tests run as root), and their processes, found and stopped by PID.

use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::quarry::running_as_root;

/// A CA, and a certificate it signs for 127.0.0.1 and localhost, by `openssl`.
pub fn make_certificates(dir: &Path) {
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("openssl runs (`make setup` installs it)");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
    ];
    openssl(
        &[
            &["req", "-x509"][..],
            &ec,
            &[
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-days",
                "2",
                "-subj",
                "/CN=Quarry Test CA",
            ],
        ]
        .concat(),
    );
    openssl(
        &[
            &["req"][..],
            &ec,
            &[
                "-keyout",
                "server.key",
                "-out",
                "server.csr",
                "-subj",
                "/CN=localhost",
            ],
        ]
        .concat(),
    );
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .expect("write server.ext");
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "server.ext",
    ]);
    for readable in ["ca.pem", "server.pem", "server.key"] {
        std::fs::set_permissions(dir.join(readable), std::fs::Permissions::from_mode(0o644))
            .expect("chmod");
    }
}

/// The PIDs whose parent is `pid` (from `/proc/<pid>/stat`).
pub fn children_of(pid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|candidate| {
            std::fs::read_to_string(format!("/proc/{candidate}/stat"))
                .ok()
                .and_then(|stat| {
                    // `pid (comm) state ppid ...`: comm may hold spaces, so read after its `)`.
                    let after = stat.rsplit_once(')')?.1;
                    after.split_whitespace().nth(1)?.parse::<u32>().ok()
                })
                == Some(pid)
        })
        .collect()
}

/// A loopback port nothing listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

/// Waits (10 s at most) until nothing listens on `port`.
pub fn wait_until_closed(port: u16) {
    let until = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_ok() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The user and group ids of the tests.
pub fn own_ids() -> (u32, u32) {
    let id = |flag: &str| whoami(flag).parse().expect("a numeric id");
    (id("-u"), id("-g"))
}

/// `id FLAG`'s answer.
pub fn whoami(flag: &str) -> String {
    let out = Command::new("id").arg(flag).output().expect("id runs");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// The command that runs `program` as the servers' user: `nobody` when the tests run as root,
/// the tests' own user otherwise.
pub fn as_server_user(program: &str) -> Command {
    if running_as_root() {
        let mut setpriv = Command::new("setpriv");
        setpriv.args(["--reuid=65534", "--regid=65534", "--clear-groups", program]);
        setpriv
    } else {
        Command::new(program)
    }
}

/// Gives `dir` and everything in it to the servers' user (when the tests run as root).
pub fn give_to_server_user(dir: &Path) {
    if running_as_root() {
        let chown = Command::new("chown")
            .args(["-R", "nobody:nogroup"])
            .arg(dir)
            .status()
            .expect("chown runs");
        assert!(chown.success(), "chown {} to nobody", dir.display());
    }
}

/// Waits (20 s at most) until something listens on `port`; `log` tells why not.
pub fn wait_until_listening(port: u16, what: &str, log: impl Fn() -> String) {
    let until = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < until,
            "{what} did not listen within 20 s; its log:\n{}",
            log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Writes `dir/htpasswd` with `user`'s `password` (bcrypt, by Debian's `htpasswd`), readable by
/// the servers' user.
pub fn write_htpasswd(dir: &Path, user: &str, password: &str) {
    let hashed = Command::new("htpasswd")
        .args(["-nbB", user, password])
        .output()
        .expect("htpasswd runs (`make setup` installs apache2-utils)");
    assert!(hashed.status.success(), "htpasswd");
    let file = dir.join("htpasswd");
    std::fs::write(&file, hashed.stdout).expect("write htpasswd");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
}

/// Writes `dir/httpd.conf`: Apache httpd on `127.0.0.1:port` with `modules` loaded (and the
/// event MPM), its PID file and logs in `dir` (`error.log`; `access.log`, one `request-line
/// status` line per request), then `body`.
pub fn write_apache_config(dir: &Path, port: u16, modules: &[&str], body: &str) {
    let load: String = std::iter::once(&"mpm_event")
        .chain(modules)
        .map(|m| format!("LoadModule {m}_module /usr/lib/apache2/modules/mod_{m}.so\n"))
        .collect();
    let d = dir.display();
    let config = format!(
        "{load}ServerRoot \"{d}\"\nServerName localhost\nListen 127.0.0.1:{port}\n\
         PidFile {d}/run/httpd.pid\nDefaultRuntimeDir {d}/run\nErrorLog {d}/error.log\n\
         LogLevel warn\nLogFormat \"%r %>s\" plain\nCustomLog {d}/access.log plain\n{body}"
    );
    std::fs::write(dir.join("httpd.conf"), config).expect("write httpd.conf");
}

/// Starts Apache httpd on `dir/httpd.conf` in the foreground as the servers' user.
pub fn start_apache(dir: &Path) -> std::process::Child {
    as_server_user("/usr/sbin/apache2")
        .args(["-DFOREGROUND", "-f"])
        .arg(dir.join("httpd.conf"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("apache2 starts (`make setup` installs apache2-bin)")
}

/// The requests of `dir/access.log` (written by [`write_apache_config`]'s server), as
/// `METHOD path`.
pub fn apache_requests(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("access.log"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            Some(format!("{} {}", parts.next()?, parts.next()?))
        })
        .collect()
}
