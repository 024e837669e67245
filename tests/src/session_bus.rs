//! A D-Bus session bus of the test's own (Debian's `dbus-daemon`, stopped by PID), activating
//! services from the folders given, and `gdbus` calls on it, as the desktop makes them.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A running `dbus-daemon`.
pub struct SessionBus {
    child: Child,
    /// Its address, for DBUS_SESSION_BUS_ADDRESS.
    pub address: String,
}

impl SessionBus {
    /// Starts a bus listening in `dir` that starts the services of `service_dir` with `env`
    /// (and nothing else of the tests' environment). With `others_may_call`, other users may
    /// connect too, as a misconfigured or shared bus would let them.
    pub fn start(
        dir: &Path,
        service_dir: &Path,
        env: &[(&str, &str)],
        others_may_call: bool,
    ) -> SessionBus {
        let socket = dir.join("bus");
        let others = if others_may_call {
            r#"<allow user="*"/>"#
        } else {
            ""
        };
        let config = format!(
            r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <servicedir>{services}</servicedir>
  <policy context="default">
    {others}
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"#,
            socket = socket.display(),
            services = service_dir.display(),
        );
        let config_file = dir.join("bus.conf");
        std::fs::write(&config_file, config).expect("bus config");
        let log = std::fs::File::create(dir.join("bus.log")).expect("bus log");
        let mut child = Command::new("dbus-daemon")
            .arg(format!("--config-file={}", config_file.display()))
            .args(["--nofork", "--print-address=1"])
            .env_clear()
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("dbus-daemon runs (make setup installs Debian's dbus)");
        let stdout = child.stdout.take().expect("stdout");
        let mut address = String::new();
        BufReader::new(stdout)
            .read_line(&mut address)
            .expect("dbus-daemon prints its address");
        let address = address.trim().to_owned();
        assert!(!address.is_empty(), "dbus-daemon started");
        SessionBus { child, address }
    }

    /// `gdbus call` of `method` (`interface.Method`) on `dest` at `path` with GVariant text
    /// arguments, as `program` runs it (`gdbus`, or a command that runs it as someone else);
    /// its standard output, or its error.
    pub fn call_as(
        &self,
        mut program: Command,
        dest: &str,
        path: &str,
        method: &str,
        args: &[&str],
    ) -> Result<String, String> {
        // In UTF-8 whatever the tests' locale: gdbus prints other characters as `?` in C's.
        let out = program
            .env("LC_ALL", "C.UTF-8")
            .args(["call", "--address", &self.address, "--dest", dest])
            .args(["--object-path", path, "--method", method, "--timeout", "30"])
            .args(args)
            .output()
            .expect("gdbus runs (make setup installs Debian's libglib2.0-bin)");
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    }

    /// [`SessionBus::call_as`] by the tests' own user; panics on an error.
    pub fn call(&self, dest: &str, path: &str, method: &str, args: &[&str]) -> String {
        self.call_as(Command::new("gdbus"), dest, path, method, args)
            .unwrap_or_else(|e| panic!("{method} failed: {e}"))
    }

    /// The process that owns `name` on the bus, if one does.
    pub fn owner_pid(&self, name: &str) -> Option<u32> {
        let answer = self
            .call_as(
                Command::new("gdbus"),
                "org.freedesktop.DBus",
                "/org/freedesktop/DBus",
                "org.freedesktop.DBus.GetConnectionUnixProcessID",
                &[name],
            )
            .ok()?;
        answer
            .trim()
            .trim_start_matches("(uint32 ")
            .trim_end_matches(",)")
            .parse()
            .ok()
    }
}

impl Drop for SessionBus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The single-quoted strings of a `gdbus` answer, in order (ids, names: none holds a quote).
pub fn quoted(answer: &str) -> Vec<String> {
    answer
        .split('\'')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}
