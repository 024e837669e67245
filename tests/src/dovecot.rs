//! A real Dovecot (Debian's `dovecot-imapd`, which `make setup` installs) on loopback for the
//! IMAP connector's tests: its own configuration, users and mail in a temporary folder, TLS by
//! a certificate authority the harness makes with `openssl`, run as a user that is not root
//! (`nobody` when the tests run as root) and stopped by its PID. [`MailClient`] puts mail there
//! the way a mail client does, over IMAP (APPEND, CREATE, MOVE, EXPUNGE), on the listener in
//! clear that Dovecot allows on loopback.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

use crate::local_servers::{
    as_server_user, children_of, free_port, give_to_server_user, make_certificates, own_ids,
    wait_until_closed, wait_until_listening, whoami,
};
use crate::quarry::running_as_root;

/// The mail user's name and password.
pub const USER: &str = "alice";
/// Its password.
pub const PASSWORD: &str = "s3cret-app-password";

/// A running Dovecot.
pub struct Dovecot {
    dir: TempDir,
    /// The port that speaks IMAP in clear, with STARTTLS when TLS is on.
    pub imap_port: u16,
    /// The port of IMAP over TLS (when TLS is on).
    pub imaps_port: u16,
    tls: bool,
    master: Option<Child>,
}

impl Dovecot {
    /// A Dovecot with TLS (`imaps` and STARTTLS) from the harness's own CA.
    pub fn start() -> Dovecot {
        Dovecot::start_with(true)
    }

    /// A Dovecot without TLS at all: no `imaps` port, no STARTTLS.
    pub fn start_plaintext() -> Dovecot {
        Dovecot::start_with(false)
    }

    fn start_with(tls: bool) -> Dovecot {
        assert!(
            Path::new("/usr/sbin/dovecot").is_file(),
            "Dovecot is not installed: run `make setup` (Debian's dovecot-imapd)"
        );
        let dir = tempfile::Builder::new()
            .prefix("quarry-dovecot")
            .tempdir()
            .expect("a temporary folder");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
        for sub in ["run", "state", "home"] {
            std::fs::create_dir(dir.path().join(sub)).expect("mkdir");
        }
        if tls {
            make_certificates(dir.path());
        }
        std::fs::write(
            dir.path().join("users"),
            format!("{USER}:{{PLAIN}}{PASSWORD}::::::\n"),
        )
        .expect("write users");
        let mut dovecot = Dovecot {
            dir,
            imap_port: free_port(),
            imaps_port: free_port(),
            tls,
            master: None,
        };
        std::fs::write(dovecot.dir.path().join("dovecot.conf"), dovecot.config())
            .expect("write dovecot.conf");
        give_to_server_user(dovecot.dir.path());
        dovecot.run();
        dovecot
    }

    /// The CA's certificate (PEM): what the connector's `ca_file` names.
    pub fn ca_file(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// The connector's `server` setting for IMAP over TLS.
    pub fn imaps_url(&self) -> String {
        format!("imaps://127.0.0.1:{}", self.imaps_port)
    }

    /// The connector's `server` setting for IMAP with STARTTLS.
    pub fn imap_url(&self) -> String {
        format!("imap://127.0.0.1:{}", self.imap_port)
    }

    /// The arguments of `quarry connector add` for an IMAP connector "Mail" of the mail user on
    /// `server` (one of this Dovecot's URLs), trusting its CA: the form the outside
    /// check uses.
    pub fn connector_add_args(&self, server: &str) -> Vec<String> {
        let mut args: Vec<String> = ["connector", "add", "plugin", "imap", "--name", "Mail"]
            .map(str::to_owned)
            .to_vec();
        for setting in [
            format!("server={server}"),
            format!("username={USER}"),
            format!("password={PASSWORD}"),
            format!("ca_file={}", self.ca_file().display()),
        ] {
            args.extend(["--set".to_owned(), setting]);
        }
        args
    }

    /// Dovecot's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("dovecot.log")).unwrap_or_default()
    }

    /// Changes the mail user's password. Dovecot reads its users file again when the file's
    /// modification time changes, in whole seconds: the time is set two seconds on, so that a
    /// change in the second the file was written is seen too. Returns once Dovecot takes the
    /// new password.
    pub fn change_password(&self, password: &str) {
        let users = self.dir.path().join("users");
        std::fs::write(&users, format!("{USER}:{{PLAIN}}{password}::::::\n")).expect("write users");
        let later = std::time::SystemTime::now() + Duration::from_secs(2);
        std::fs::File::options()
            .write(true)
            .open(&users)
            .and_then(|file| file.set_modified(later))
            .expect("set the users file's time");
        let until = Instant::now() + Duration::from_secs(10);
        while !self.accepts(password) {
            assert!(
                Instant::now() < until,
                "Dovecot never took the new password"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Whether Dovecot lets the mail user log in with `password` now.
    fn accepts(&self, password: &str) -> bool {
        let Ok(stream) = TcpStream::connect(("127.0.0.1", self.imap_port)) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        if reader.read_line(&mut line).is_err()
            || write!(reader.get_mut(), "a LOGIN {USER} \"{password}\"\r\n").is_err()
        {
            return false;
        }
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return false,
                Ok(_) if line.starts_with("a ") => return line.starts_with("a OK"),
                Ok(_) => {}
            }
        }
    }

    /// A client logged in as the mail user, over the listener in clear.
    pub fn client(&self) -> MailClient {
        MailClient::login(self.imap_port)
    }

    /// Kills Dovecot's master process at once (SIGKILL, by its PID): its processes end with it.
    pub fn kill(&mut self) {
        if let Some(mut master) = self.master.take() {
            let _ = master.kill();
            let _ = master.wait();
        }
        wait_until_closed(self.imap_port);
    }

    /// Stops every Dovecot process where it stands (SIGSTOP): connections stay open and nothing
    /// answers, as with a server that hangs. [`Dovecot::resume`] lets them go on.
    pub fn stall(&self) {
        self.signal_all("STOP");
    }

    /// Lets the processes [`Dovecot::stall`] stopped go on (SIGCONT).
    pub fn resume(&self) {
        self.signal_all("CONT");
    }

    /// Sends `signal` to the master process and every process below it, by PID.
    fn signal_all(&self, signal: &str) {
        let Some(master) = self.master.as_ref().map(Child::id) else {
            return;
        };
        let mut pids = vec![master];
        let mut at = 0;
        while at < pids.len() {
            pids.extend(children_of(pids[at]));
            at += 1;
        }
        for pid in pids {
            let _ = Command::new("kill")
                .arg(format!("-{signal}"))
                .arg(pid.to_string())
                .status();
        }
    }

    /// Starts Dovecot again after [`Dovecot::kill`], on the same ports and mail.
    pub fn restart(&mut self) {
        self.kill();
        self.run();
    }

    fn run(&mut self) {
        let config = self.dir.path().join("dovecot.conf");
        let master = as_server_user("/usr/sbin/dovecot")
            .args(["-F", "-c"])
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("dovecot starts");
        self.master = Some(master);
        wait_until_listening(self.imap_port, "Dovecot", || self.log());
    }

    fn config(&self) -> String {
        let d = self.dir.path().display();
        let (uid, gid, user, group) = if running_as_root() {
            (65534, 65534, "nobody".to_owned(), "nogroup".to_owned())
        } else {
            let (uid, gid) = own_ids();
            (uid, gid, whoami("-un"), whoami("-gn"))
        };
        let tls = if self.tls {
            format!(
                "ssl = yes\nssl_cert = <{d}/server.pem\nssl_key = <{d}/server.key\n\
                 disable_plaintext_auth = yes\n"
            )
        } else {
            "ssl = no\ndisable_plaintext_auth = no\n".to_owned()
        };
        let imaps = if self.tls {
            format!(
                "  inet_listener imaps {{\n    address = 127.0.0.1\n    port = {}\n    ssl = yes\n  }}\n",
                self.imaps_port
            )
        } else {
            String::new()
        };
        format!(
            "base_dir = {d}/run\nstate_dir = {d}/state\nlog_path = {d}/dovecot.log\n\
             protocols = imap\nlisten = 127.0.0.1\n{tls}auth_mechanisms = plain login\n\
             mail_fsync = never\n\
             mailbox_list_index = yes\n\
             passdb {{\n  driver = passwd-file\n  args = scheme=PLAIN username_format=%u {d}/users\n}}\n\
             userdb {{\n  driver = static\n  args = uid={uid} gid={gid} home={d}/home/%u mail=maildir:{d}/home/%u/Maildir\n}}\n\
             first_valid_uid = {uid}\nfirst_valid_gid = {gid}\n\
             default_internal_user = {user}\ndefault_internal_group = {group}\ndefault_login_user = {user}\n\
             service anvil {{\n  chroot =\n}}\n\
             service imap-login {{\n  chroot =\n  inet_listener imap {{\n    address = 127.0.0.1\n    port = {}\n  }}\n{imaps}}}\n\
             protocol imap {{\n  mail_max_userip_connections = 100\n}}\n",
            self.imap_port
        )
    }
}

impl Drop for Dovecot {
    fn drop(&mut self) {
        if let Some(mut master) = self.master.take() {
            let _ = master.kill();
            let _ = master.wait();
        }
    }
}

/// A mail client's session: what a test does to the mailbox, over IMAP.
pub struct MailClient {
    reader: BufReader<TcpStream>,
    tag: u32,
}

impl MailClient {
    fn login(port: u16) -> MailClient {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect to Dovecot");
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .expect("timeout");
        let mut client = MailClient {
            reader: BufReader::new(stream),
            tag: 0,
        };
        client.line();
        client.command(&format!("LOGIN {USER} \"{PASSWORD}\""));
        client
    }

    /// Appends `message` (RFC 822 bytes) to `folder`; answers its UID.
    pub fn append(&mut self, folder: &str, message: &[u8]) -> u32 {
        self.tag += 1;
        let tag = format!("T{}", self.tag);
        let stream = self.reader.get_mut();
        write!(
            stream,
            "{tag} APPEND \"{folder}\" {{{}+}}\r\n",
            message.len()
        )
        .expect("write");
        stream.write_all(message).expect("write");
        stream.write_all(b"\r\n").expect("write");
        let answer = self.finish(&tag);
        answer
            .split("[APPENDUID ")
            .nth(1)
            .and_then(|rest| rest.split([' ', ']']).nth(1))
            .and_then(|uid| uid.parse().ok())
            .unwrap_or_else(|| panic!("APPEND answered no UID: {answer}"))
    }

    /// Creates `folder`.
    pub fn create(&mut self, folder: &str) {
        self.command(&format!("CREATE \"{folder}\""));
    }

    /// Deletes `folder` and all it holds.
    pub fn delete(&mut self, folder: &str) {
        self.command(&format!("DELETE \"{folder}\""));
    }

    /// Copies message `uid` of `from` to `to`.
    pub fn copy(&mut self, from: &str, uid: u32, to: &str) {
        self.command(&format!("SELECT \"{from}\""));
        self.command(&format!("UID COPY {uid} \"{to}\""));
    }

    /// Moves message `uid` of `from` to `to` (MOVE, RFC 6851).
    pub fn move_to(&mut self, from: &str, uid: u32, to: &str) {
        self.command(&format!("SELECT \"{from}\""));
        self.command(&format!("UID MOVE {uid} \"{to}\""));
    }

    /// Deletes message `uid` of `folder` for good (flag and EXPUNGE).
    pub fn expunge(&mut self, folder: &str, uid: u32) {
        self.command(&format!("SELECT \"{folder}\""));
        self.command(&format!("UID STORE {uid} +FLAGS (\\Deleted)"));
        self.command(&format!("UID EXPUNGE {uid}"));
    }

    /// A folder's UIDVALIDITY.
    pub fn uid_validity(&mut self, folder: &str) -> u32 {
        let answer = self.command(&format!("STATUS \"{folder}\" (UIDVALIDITY)"));
        answer
            .split("UIDVALIDITY ")
            .nth(1)
            .and_then(|rest| rest.split(')').next())
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("no UIDVALIDITY in {answer}"))
    }

    /// Runs a command that must succeed; answers everything the server said.
    pub fn command(&mut self, command: &str) -> String {
        self.tag += 1;
        let tag = format!("T{}", self.tag);
        write!(self.reader.get_mut(), "{tag} {command}\r\n").expect("write");
        self.finish(&tag)
    }

    fn finish(&mut self, tag: &str) -> String {
        let mut said = String::new();
        loop {
            let line = self.line();
            said.push_str(&line);
            if let Some(status) = line.strip_prefix(&format!("{tag} ")) {
                assert!(status.starts_with("OK"), "Dovecot refused: {said}");
                return said;
            }
        }
    }

    fn line(&mut self) -> String {
        let mut line = String::new();
        self.reader.read_line(&mut line).expect("Dovecot answers");
        // A literal in an answer: read its bytes too.
        if let Some(size) = line
            .trim_end()
            .strip_suffix('}')
            .and_then(|l| l.rsplit('{').next())
            .and_then(|n| n.parse::<usize>().ok())
        {
            let mut bytes = vec![0; size];
            self.reader.read_exact(&mut bytes).expect("literal");
            line.push_str(&String::from_utf8_lossy(&bytes));
            line.push_str(&self.line());
        }
        line
    }
}
