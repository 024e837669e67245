//! Command-line arguments.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueHint};
use quarry_api::ApiLimits;
use quarry_embed::GraphChoice;

/// Quarry: local search over your own data, for agents and scripts.
#[derive(Debug, Parser)]
#[command(name = "quarry", version)]
pub struct Cli {
    /// Where Quarry keeps its database and index [default: the platform's data folder, e.g.
    /// ~/.local/share/quarry].
    #[arg(long, env = "QUARRY_DATA_DIR", global = true, value_hint = ValueHint::DirPath)]
    pub data_dir: Option<PathBuf>,
    /// Where Quarry keeps the key that seals password settings, outside the data folder so that
    /// a copy of the data folder opens none of them [default: the platform's config folder,
    /// e.g. ~/.config/quarry/keys].
    #[arg(long, env = "QUARRY_KEYS_DIR", global = true, value_hint = ValueHint::DirPath)]
    pub keys_dir: Option<PathBuf>,
    /// A team's database: the PostgreSQL server that holds integrations, keys, quotas, consent,
    /// connectors, the catalog and the audit log for several Quarry hosts, as
    /// postgres://USER@HOST:PORT/DATABASE (docs/team.md); every host needs the same sealing
    /// key in its keys folder [default: the SQLite file in the data folder].
    #[arg(long, env = "QUARRY_DATABASE", global = true, value_hint = ValueHint::Url)]
    pub database: Option<String>,
    /// This host's name in a team (--database): a connector added here that reads local
    /// folders lives on it, and only it syncs and watches them [default: the machine's host
    /// name].
    #[arg(long, env = "QUARRY_HOST_NAME", global = true)]
    pub host_name: Option<String>,
    #[command(flatten)]
    pub plugins: PluginOptions,
    #[command(flatten)]
    pub model: ModelOptions,
    #[command(subcommand)]
    pub command: Command,
}

/// Where plugins come from and where their compiled form is cached.
#[derive(Debug, Args)]
pub struct PluginOptions {
    /// The bundled plugins: a folder of plugin folders (each with a quarry-plugin.toml), read
    /// before the data folder's `plugins` (their ids cannot be taken by installed plugins)
    /// [default: those installed with Quarry, <prefix>/share/quarry/plugins]; in a checkout
    /// `make plugins` builds them into target/plugins and `make run` passes that.
    #[arg(long, env = "QUARRY_PLUGINS_DIR", global = true, value_hint = ValueHint::DirPath)]
    pub plugins_dir: Option<PathBuf>,
    /// Where compiled components are cached, in a folder of this user's [default: the
    /// platform's cache folder, e.g. ~/.cache/quarry/components].
    #[arg(long, env = "QUARRY_COMPONENT_CACHE", global = true, value_hint = ValueHint::DirPath)]
    pub component_cache: Option<PathBuf>,
    /// The page renderer, which draws page previews in a sandbox of its own
    /// (`quarry_preview.wasm`) [default: the one installed with Quarry,
    /// <prefix>/share/quarry/renderer]; in a checkout `make plugins` builds it into
    /// target/renderer.
    #[arg(long, env = "QUARRY_RENDERER", global = true, value_hint = ValueHint::FilePath)]
    pub renderer: Option<PathBuf>,
}

/// The embedding model for semantic search.
#[derive(Debug, Args)]
pub struct ModelOptions {
    /// A sentence-embedding model folder (tokenizer.json and onnx/model.onnx), or `none` for
    /// keyword search only [default: the data folder's models/all-MiniLM-L6-v2 if there is
    /// one, else the one installed with Quarry]; in a checkout `make setup` puts it in models/
    /// and `make run` passes it, and `make setup MODEL=multilingual-e5-small` adds a model for
    /// semantic search beyond English.
    #[arg(long, env = "QUARRY_MODEL_DIR", global = true, value_hint = ValueHint::DirPath)]
    pub model_dir: Option<PathBuf>,
    /// ONNX Runtime's shared library, which runs the model; it must belong to this user or root
    /// and be writable by no one else [default: the data folder's
    /// models/onnxruntime/libonnxruntime.so if there is one, else the one installed with
    /// Quarry, <prefix>/lib/quarry].
    #[arg(long, env = "QUARRY_ORT_LIB", global = true, value_hint = ValueHint::FilePath)]
    pub ort_lib: Option<PathBuf>,
    /// Threads that embed documents while indexing [default: the number of cores].
    #[arg(long, env = "QUARRY_EMBED_THREADS", global = true)]
    pub embed_threads: Option<usize>,
    /// Which of the model folder's graphs runs: auto (the fastest for this CPU of those the
    /// folder has: int8 per token, else int8 blockwise where the CPU has VNNI, else fp32), fp32,
    /// int8-per-token or int8-blockwise; a change recomputes the vectors in the background
    /// [default: auto].
    #[arg(long, env = "QUARRY_EMBED_GRAPH", global = true, value_parser = GraphChoice::parse)]
    pub embed_graph: Option<GraphChoice>,
    /// The OCR models folder (det.onnx, rec.onnx, cls.onnx: docs/ocr.md), or `none` to read no
    /// text in images [default: the data folder's models/ppocr-v6 if there is one, else the
    /// one beside the embedding model, else the one installed with Quarry]; in a checkout
    /// `make setup` puts it in models/.
    #[arg(long, env = "QUARRY_OCR_MODELS", global = true, value_hint = ValueHint::DirPath)]
    pub ocr_models: Option<PathBuf>,
}

/// What to do.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the API (and keep connectors in sync).
    Serve(ServeArgs),
    /// Create and manage integrations: the agents and scripts that use the API.
    #[command(subcommand)]
    Integration(IntegrationCommand),
    /// Add and manage connectors: the sources that are indexed.
    #[command(subcommand)]
    Connector(ConnectorCommand),
    /// Search from the terminal over every connector (keyword; --semantic as the API).
    Search(SearchArgs),
    /// Show which integration read what, when, and how much (newest first).
    Activity(ActivityArgs),
    /// Install and list plugins (connector types).
    #[command(subcommand)]
    Plugin(PluginCommand),
    /// Sign in to the settings page: a one-time link, or the admin token.
    #[command(subcommand)]
    Admin(AdminCommand),
    /// Serve MCP over stdin and stdout for agents that launch a command, with the integration
    /// key in QUARRY_API_KEY: through the running server, else on the data folder directly.
    Mcp(McpArgs),
    /// Copy this data folder's database into an empty team database (PostgreSQL), for hosts
    /// started with --database (docs/team.md); the data folder keeps its own. Stop `quarry
    /// serve` on it first.
    Migrate {
        /// The team database: postgres://USER@HOST:PORT/DATABASE.
        #[arg(long, value_hint = ValueHint::Url)]
        to: String,
    },
    /// Show the effective settings and where each came from: a flag, the environment, the
    /// settings file (~/.config/quarry/config.toml, or $QUARRY_CONFIG) or the default.
    Config {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Open Quarry's search page in the browser, signed in, searching QUERY if given.
    Open {
        /// What to search for.
        query: Vec<String>,
    },
    /// What the session bus starts when the desktop searches while Quarry is not running: it
    /// says so, and gives way to `quarry serve` (docs/desktop.md).
    #[command(hide = true)]
    DesktopSearch,
    /// Print the manual page or a shell's completions (what the package installs).
    #[command(hide = true)]
    Generate {
        /// man, bash, zsh or fish.
        #[arg(value_parser = ["man", "bash", "zsh", "fish"])]
        what: String,
    },
}

/// Arguments of `quarry mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// The integration's API key.
    #[arg(long = "api-key", env = "QUARRY_API_KEY", hide_env_values = true)]
    pub api_key: String,
}

/// `quarry plugin ...`.
#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// Install a plugin, after showing what it asks for and how it was verified, and record it
    /// in plugins.lock. SOURCE is a plugin folder, a packed file (`plugin pack`), an https://
    /// address of one (with --sha256), or an OCI reference: oci://registry/name@sha256:DIGEST,
    /// or oci://registry/name:tag with --sha256.
    Install {
        /// Where the plugin is.
        source: String,
        /// The sha256 of the packed file, as its publisher gave it (`sha256sum FILE`): needed
        /// for an https:// address and an oci:// tag; a file that differs installs nothing.
        #[arg(long, value_name = "HEX")]
        sha256: Option<String>,
        /// Grant what it asks for without asking (scripts).
        #[arg(long)]
        yes: bool,
        /// Install an older version over a newer one.
        #[arg(long)]
        allow_downgrade: bool,
        /// Seconds a download may take at most.
        #[arg(long, default_value_t = 300, value_name = "SECONDS")]
        timeout: u64,
    },
    /// Pack a plugin folder (manifest, component, README.md, licence) into one file to hand
    /// out; the same folder always packs to the same bytes. Prints its sha256.
    Pack {
        /// The plugin's folder.
        dir: PathBuf,
        /// The file to write [default: <id>-<version>.qplugin in the current folder].
        #[arg(long, short)]
        output: Option<PathBuf>,
        /// Sign it with this secret key file (`plugin keygen`).
        #[arg(long, value_name = "KEY_FILE")]
        sign: Option<PathBuf>,
    },
    /// Make a publisher's key pair for signing packed plugins: writes the secret key (readable
    /// by you only) and prints the public key others trust.
    Keygen {
        /// The secret key file to write (never overwritten).
        #[arg(long, short)]
        output: PathBuf,
    },
    /// Trust a publisher's key: plugins it signed install without --sha256. Without KEY, list
    /// the publishers trusted.
    Trust {
        /// The key, ed25519:... as its publisher gave it.
        key: Option<String>,
        /// Who it belongs to, as you will recognise it.
        #[arg(long)]
        name: Option<String>,
    },
    /// Update plugins installed from an index to the newest version it offers, verified as an
    /// install is; asks again (or needs --yes) when a version asks for more than you granted.
    /// Reports versions the index yanked, and disables those it revoked.
    Update {
        /// The plugin's id [default: every plugin installed from an index].
        id: Option<String>,
        /// Grant what a newer version asks for beyond the old one without asking.
        #[arg(long)]
        yes: bool,
        /// Seconds each download may take at most.
        #[arg(long, default_value_t = 300, value_name = "SECONDS")]
        timeout: u64,
    },
    /// The plugin indexes `plugin install NAME` searches.
    Index {
        /// What to do.
        #[command(subcommand)]
        command: IndexCommand,
    },
    /// Stop trusting a publisher's key (plugins installed already stay installed).
    Untrust {
        /// The key, ed25519:...
        key: String,
    },
    /// Push a packed plugin to an OCI registry (oci://registry/name:tag, the name ending with
    /// the plugin's id) and print the digest that pins it. Signs in with
    /// QUARRY_REGISTRY_USERNAME and QUARRY_REGISTRY_PASSWORD, or `docker login`'s.
    Push {
        /// The packed plugin.
        file: PathBuf,
        /// Where: oci://registry/name:tag.
        target: String,
        /// Seconds each request may take at most.
        #[arg(long, default_value_t = 300, value_name = "SECONDS")]
        timeout: u64,
    },
    /// List the installed plugins and what each asks for.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Start a new connector from a template: a small working one, its WIT, a build script and
    /// a README that goes from the first edit to search results.
    New {
        /// The language: rust, python or js.
        #[arg(value_enum)]
        lang: crate::scaffold::Lang,
        /// The connector's name (its id is made from it: "My Notes" -> my-notes).
        name: String,
        /// Where to create its folder [default: the current folder].
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Check a plugin folder or packed file before installing it: manifest, WIT world and
    /// version, exports, what it asks for, and with a sample configuration a dry-run listing.
    Check {
        /// The plugin's folder (quarry-plugin.toml and the component it names), or a packed
        /// plugin.
        path: PathBuf,
        /// A setting of the sample configuration, `key=value` (`key=-` reads standard input);
        /// repeat for each. Without settings the dry run needs a plugin with no required ones.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        settings: Vec<String>,
        /// Documents the dry run lists at most.
        #[arg(long, default_value_t = 1000)]
        max_docs: usize,
    },
    /// Remove a plugin installed with `quarry plugin install` (no connector may use it).
    Remove {
        /// The plugin's id.
        id: String,
        /// Remove without asking (scripts).
        #[arg(long)]
        yes: bool,
    },
}

/// `quarry plugin index ...`.
#[derive(Debug, Subcommand)]
pub enum IndexCommand {
    /// Add an index, after reading it once: the https:// address of its JSON, or the
    /// oci://registry/name:tag it was pushed to.
    Add {
        /// Its address or reference.
        #[arg(value_name = "URL")]
        location: String,
        /// Seconds the first read may take at most.
        #[arg(long, default_value_t = 60, value_name = "SECONDS")]
        timeout: u64,
    },
    /// List the indexes, in the order they are searched.
    List,
    /// Remove an index.
    Remove {
        /// Its address or reference, as `plugin index list` shows it.
        #[arg(value_name = "URL")]
        location: String,
    },
    /// Push an index file (its JSON) to an OCI registry, for users to add as oci://...
    Push {
        /// The index's JSON.
        file: PathBuf,
        /// Where: oci://registry/name:tag.
        target: String,
        /// Seconds each request may take at most.
        #[arg(long, default_value_t = 300, value_name = "SECONDS")]
        timeout: u64,
    },
}

/// `quarry admin ...`.
#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// Print a one-time link that signs in to the settings page (valid 15 minutes).
    Link {
        /// The server's URL [default: the one the running server noted, else
        /// http://127.0.0.1:4747].
        #[arg(long)]
        url: Option<String>,
    },
    /// Make a new admin token and print it, once: the old one stops working (Quarry keeps
    /// only a hash of it).
    Token,
}

/// Arguments of `quarry serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on. Keep it on 127.0.0.1 unless other machines must reach Quarry.
    #[arg(long, env = "QUARRY_LISTEN", default_value = "127.0.0.1:4747")]
    pub listen: SocketAddr,
    /// The URL clients use, if not http://<listen>; its host is also accepted in Host headers.
    #[arg(long, env = "QUARRY_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Syncs that may run at once (1 to 16).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=16))]
    pub parallel_syncs: u32,
    /// Requests one integration may send per second, sustained (it may send a burst of twice
    /// as many after a quiet while); more are answered 429 with Retry-After.
    #[arg(long, env = "QUARRY_RATE_LIMIT", default_value_t = ApiLimits::default().requests_per_second,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub rate_limit: u32,
    /// Requests of one integration answered at once; more are answered 429.
    #[arg(long, env = "QUARRY_IN_FLIGHT_LIMIT", default_value_t = ApiLimits::default().in_flight_per_integration,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub in_flight_limit: u32,
    /// File downloads running at once in all (each holds a plugin instance until its last
    /// byte is sent); more are answered 429.
    #[arg(long, env = "QUARRY_MAX_DOWNLOADS", default_value_t = ApiLimits::default().downloads,
          value_parser = clap::value_parser!(u32).range(1..=64))]
    pub max_downloads: u32,
    /// Seconds a download may wait for its client to take the next part; a client that takes
    /// nothing for that long is cut off and the plugin instance behind it freed.
    #[arg(long, env = "QUARRY_DOWNLOAD_STALL_SECONDS", default_value_t = ApiLimits::default().download_stall.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub download_stall_seconds: u64,
    /// Connections open at once at most (lowered to fit the process's file descriptor limit,
    /// with room kept for syncs); at the cap, the connection idle the longest is closed for a
    /// new one.
    #[arg(long, env = "QUARRY_MAX_CONNECTIONS", default_value_t = 1024,
          value_parser = clap::value_parser!(u32).range(16..=65_536))]
    pub max_connections: u32,
    /// Days the activity log keeps an entry; older ones are deleted at start and every hour.
    #[arg(long, env = "QUARRY_AUDIT_RETENTION_DAYS", default_value_t = 90,
          value_parser = clap::value_parser!(u32).range(1..=36_500))]
    pub audit_retention_days: u32,
    /// Answer the desktop's own search, GNOME Shell's overview and KRunner, on the session bus
    /// when there is one (docs/desktop.md); `false` leaves the bus alone.
    #[arg(long, env = "QUARRY_DESKTOP_SEARCH", default_value_t = true,
          action = clap::ArgAction::Set)]
    pub desktop_search: bool,
}

impl ServeArgs {
    /// The API's bounds these arguments set.
    pub fn limits(&self) -> ApiLimits {
        ApiLimits {
            requests_per_second: self.rate_limit,
            burst: self.rate_limit.saturating_mul(2),
            in_flight_per_integration: self.in_flight_limit,
            downloads: self.max_downloads,
            download_stall: std::time::Duration::from_secs(self.download_stall_seconds),
            audit_retention: std::time::Duration::from_secs(
                u64::from(self.audit_retention_days) * 86_400,
            ),
            ..ApiLimits::default()
        }
    }
}

/// `quarry integration ...`.
#[derive(Debug, Subcommand)]
pub enum IntegrationCommand {
    /// Create an integration and print its key (shown once).
    Create {
        /// Its name (unique, without regard to case).
        name: String,
        /// The data sharing answer: all, none, or connector names separated by commas.
        #[arg(long)]
        share: String,
        /// Requests per month: a number, or unlimited [default: the free plan's 10000].
        #[arg(long)]
        quota: Option<String>,
        /// When the key stops working: a date (2027-01-31) or RFC 3339 time.
        #[arg(long)]
        expires: Option<String>,
        /// Print {"integration", "api_key", "docs"} as JSON (the settings page's answer).
        #[arg(long)]
        json: bool,
        /// Also print the integration's API documentation, with the key filled in.
        #[arg(long, conflicts_with = "json")]
        docs: bool,
    },
    /// List integrations with their usage this month.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Replace an integration's key: the old one stops working, the new one is printed once.
    Rotate {
        /// The integration's name.
        name: String,
        /// When the new key stops working: a date or RFC 3339 time.
        #[arg(long)]
        expires: Option<String>,
        /// Print {"integration", "api_key", "docs"} as JSON (the settings page's answer).
        #[arg(long)]
        json: bool,
    },
    /// Revoke an integration's key: it stops working at once.
    Revoke {
        /// The integration's name.
        name: String,
    },
    /// Change what an integration may see.
    Share {
        /// The integration's name.
        name: String,
        /// all, none, or connector names separated by commas.
        share: String,
    },
    /// Change an integration's monthly quota.
    Quota {
        /// The integration's name.
        name: String,
        /// Requests per month, or unlimited.
        quota: String,
    },
    /// Print the integration's API documentation (Markdown, for a person or a coding agent;
    /// the key is shown as $QUARRY_API_KEY: keys are shown only when made).
    Docs {
        /// The integration's name.
        name: String,
        /// The service's base URL [default: the running server's, else http://127.0.0.1:4747].
        #[arg(long)]
        url: Option<String>,
    },
}

/// `quarry connector ...`.
#[derive(Debug, Subcommand)]
pub enum ConnectorCommand {
    /// Add a connector.
    #[command(subcommand)]
    Add(AddConnector),
    /// List connectors with their status.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Stop syncing and searching a connector (its documents stay in the index).
    Disable {
        /// The connector's name.
        name: String,
    },
    /// Sync and search a disabled connector again.
    Enable {
        /// The connector's name.
        name: String,
    },
    /// Remove a connector and its documents from the index.
    Remove {
        /// The connector's name.
        name: String,
    },
    /// Sync a connector now (a running server does it; otherwise this command does).
    Sync {
        /// The connector's name.
        name: String,
        /// Wait until the sync is done, showing progress.
        #[arg(long)]
        wait: bool,
        /// List the whole source again, removing whatever vanished unnoticed.
        #[arg(long)]
        full: bool,
    },
    /// Show a connector's sync state, the documents whose text could not be extracted, and
    /// those held back (credentials, links to Quarry's own data) with why.
    Status {
        /// The connector's name.
        name: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Choose what a connector does with files that hold credentials (private keys, tokens,
    /// passwords): hold them back (the default), index them with each secret redacted, or
    /// index them as they are (off).
    Credentials {
        /// The connector's name.
        name: String,
        /// hold, redact or off.
        #[arg(value_parser = ["hold", "redact", "off"])]
        mode: String,
        /// Turn the check off without asking (scripts).
        #[arg(long)]
        yes: bool,
    },
    /// Index a held-back file as it is, whatever it holds: a path from `connector status`,
    /// a folder's path ending in `/`, or a pattern (`*.pem`, `fixtures/**`).
    Release {
        /// The connector's name.
        name: String,
        /// The path or pattern, relative to the connector's source.
        path: String,
        /// Hold the file (or pattern) back again.
        #[arg(long)]
        undo: bool,
    },
    /// Compute a connector's vectors before those of all other connectors (search by meaning
    /// covers it first); `--undo` puts it back in line.
    EmbedFirst {
        /// The connector's name.
        name: String,
        /// Put it back in line with the others.
        #[arg(long)]
        undo: bool,
    },
    /// On a team database (--database), say which host a connector lives on: the host whose
    /// folders it reads syncs and watches it. A connector added with local folders lives on
    /// the host that added it; `--any` lets any host sync it (a folder every host mounts at
    /// the same path).
    Home {
        /// The connector's name.
        name: String,
        /// The host's name (its --host-name).
        #[arg(conflicts_with = "any", required_unless_present = "any")]
        host: Option<String>,
        /// Any host of the team.
        #[arg(long)]
        any: bool,
    },
    /// Set how often a connector syncs (a running server also syncs watched folders as soon
    /// as they change).
    Schedule {
        /// The connector's name.
        name: String,
        /// Time between syncs: 90s, 15m, 2h, 1d [default: the plugin's, 60m for folders].
        #[arg(long, value_parser = parse_interval)]
        every: Option<i64>,
        /// Time between full listings [default: the plugin's, 24h for folders].
        #[arg(long, value_parser = parse_interval)]
        full_every: Option<i64>,
    },
}

/// An interval (`90s`, `15m`, `2h`, `1d`) in seconds.
fn parse_interval(text: &str) -> Result<i64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: i64 = number
        .parse()
        .map_err(|_| format!("{text:?}: write a whole number and a unit, like 15m or 2h"))?;
    let unit_s = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(format!("{text:?}: the unit must be s, m, h or d (15m, 2h)")),
    };
    match number.checked_mul(unit_s) {
        Some(s) if s >= 10 => Ok(s),
        _ => Err(format!(
            "{text:?}: use at least 10s and at most a few years"
        )),
    }
}

/// `quarry connector add ...`.
#[derive(Debug, Subcommand)]
pub enum AddConnector {
    /// Index a folder on this computer (read-only).
    Folder {
        /// The folder.
        path: PathBuf,
        /// The connector's name (unique, without regard to case).
        #[arg(long)]
        name: String,
        /// Print {"connector_id", "name"} as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Add a connector of any installed plugin (`quarry plugin list` shows them and their
    /// settings). The folders its settings name and the hosts of its URLs are granted.
    Plugin {
        /// The plugin's id (`mbox`, `feed`, `json-http`).
        plugin: String,
        /// The connector's name (unique, without regard to case).
        #[arg(long)]
        name: String,
        /// A setting, `key=value`; repeat for each. `key=-` reads the value from standard
        /// input (one line), so that a password stays out of the shell's history.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        settings: Vec<String>,
        /// Print {"connector_id", "name"} as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Arguments of `quarry search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// Words, "quoted phrases", -exclusions.
    pub query: String,
    /// Results to show.
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    /// Print the results as JSON.
    #[arg(long)]
    pub json: bool,
    /// Search by meaning too, as the API does by default (loads the embedding model).
    #[arg(long)]
    pub semantic: bool,
}

/// Arguments of `quarry activity`.
#[derive(Debug, Args)]
pub struct ActivityArgs {
    /// Only this integration.
    #[arg(long)]
    pub integration: Option<String>,
    /// Only this connector.
    #[arg(long)]
    pub connector: Option<String>,
    /// Only requests at or after this date (2026-11-01) or RFC 3339 time.
    #[arg(long)]
    pub since: Option<String>,
    /// Entries to show at most.
    #[arg(long, default_value_t = 50)]
    pub limit: u32,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_parse_with_units() {
        assert_eq!(parse_interval("90s"), Ok(90));
        assert_eq!(parse_interval("15m"), Ok(900));
        assert_eq!(parse_interval("2h"), Ok(7200));
        assert_eq!(parse_interval("1d"), Ok(86_400));
        assert!(parse_interval("5s").is_err());
        assert!(parse_interval("15").expect_err("no unit").contains("unit"));
        assert!(parse_interval("m").is_err());
        assert!(parse_interval("99999999999999999d").is_err());
    }
}
