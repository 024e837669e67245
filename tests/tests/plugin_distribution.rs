//! Plugins from elsewhere: packed into one file, served over HTTPS or pushed to a registry, and
//! installed only when their bytes are the ones pinned, after the user's grant, and recorded in
//! `plugins.lock`. Sources that answer slowly or without end are cut off.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use quarry_tests::plugin_sources::{Registry, TokenIssuer, WebServer};
use quarry_tests::quarry::Quarry;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The test plugin `older-notes` as its author would publish it: with a README, a licence and
/// version `version`.
fn publishable(q: &Quarry, version: &str) -> PathBuf {
    publishable_asking(q, version, "")
}

/// [`publishable`] with `more` added to its manifest (what else it asks for).
fn publishable_asking(q: &Quarry, version: &str, more: &str) -> PathBuf {
    let from = quarry_tests::plugin_dir("older-notes");
    let dir = q.scratch(&format!("older-notes-{version}"));
    let manifest = std::fs::read_to_string(from.join("quarry-plugin.toml")).expect("manifest");
    let manifest = manifest.replace("version = \"0.1.0\"", &format!("version = \"{version}\""));
    let manifest = format!("{manifest}\n{more}");
    std::fs::write(dir.join("quarry-plugin.toml"), manifest).expect("manifest");
    std::fs::copy(
        from.join("quarry_older_notes.wasm"),
        dir.join("quarry_older_notes.wasm"),
    )
    .expect("component");
    std::fs::write(
        dir.join("README.md"),
        "# Older notes\n\nIndexes .txt files.\n",
    )
    .expect("readme");
    std::fs::write(dir.join("LICENSE"), "Apache-2.0\n").expect("licence");
    dir
}

/// Packs `dir` into `file`: the `sha256:` line `plugin pack` printed.
fn pack(q: &Quarry, dir: &Path, file: &Path) -> String {
    let out = q.cli_ok(&[
        "plugin",
        "pack",
        &dir.to_string_lossy(),
        "--output",
        &file.to_string_lossy(),
    ]);
    printed_digest(&out)
}

/// The `sha256:...` line of a command's output.
fn printed_digest(out: &str) -> String {
    out.lines()
        .find(|l| l.starts_with("sha256:"))
        .unwrap_or_else(|| panic!("no digest printed: {out}"))
        .to_owned()
}

fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// The data folder's plugins.lock.
fn lock(q: &Quarry) -> toml::Value {
    let text = std::fs::read_to_string(q.data_dir().join("plugins.lock")).expect("plugins.lock");
    toml::from_str(&text).expect("the lock is TOML")
}

/// The lock's entry of `id`.
fn locked(q: &Quarry, id: &str) -> Option<toml::Value> {
    lock(q)
        .get("plugin")
        .and_then(|p| p.as_array())
        .and_then(|all| all.iter().find(|p| p["id"].as_str() == Some(id)).cloned())
}

#[test]
fn a_packed_plugin_installs_from_https_only_with_its_sha256_and_is_locked() {
    let q = Quarry::new();
    let dir = publishable(&q, "1.0.0");
    let out = q.scratch("published");
    let file = out.join("older-notes-1.0.0.qplugin");
    let digest = pack(&q, &dir, &file);
    let bytes = std::fs::read(&file).expect("packed");
    assert_eq!(sha256(&bytes), digest);
    let again = out.join("again.qplugin");
    assert_eq!(pack(&q, &dir, &again), digest, "packing is deterministic");
    assert_eq!(std::fs::read(&again).expect("again"), bytes);
    let checked = q.cli_ok(&["plugin", "check", &file.to_string_lossy()]);
    assert!(
        checked.contains(&format!("Packed     {digest}, not signed")),
        "{checked}"
    );
    assert!(checked.contains("quarry:connector@0.2.0"), "{checked}");

    let web = WebServer::start_tls();
    let ca = web.ca_file();
    let tls = [("SSL_CERT_FILE", ca.to_str().expect("utf-8"))];
    web.put("older-notes-1.0.0.qplugin", &bytes);
    let url = web.url("older-notes-1.0.0.qplugin");
    let hex = digest.trim_start_matches("sha256:");
    let installed_dir = q.data_dir().join("plugins/older-notes");

    let unpinned = q.cli_with_env(&["plugin", "install", &url, "--yes"], &tls);
    assert!(
        !unpinned.ok && unpinned.stderr.contains("--sha256"),
        "{}",
        unpinned.stderr
    );
    let wrong = "0".repeat(64);
    let mismatch = q.cli_with_env(
        &["plugin", "install", &url, "--sha256", &wrong, "--yes"],
        &tls,
    );
    assert!(
        !mismatch.ok && mismatch.stderr.contains("nothing was installed"),
        "{}",
        mismatch.stderr
    );
    let mut tampered = bytes.clone();
    let middle = tampered.len() / 2;
    tampered[middle] ^= 1;
    web.put("tampered.qplugin", &tampered);
    let refused = q.cli_with_env(
        &[
            "plugin",
            "install",
            &web.url("tampered.qplugin"),
            "--sha256",
            hex,
            "--yes",
        ],
        &tls,
    );
    assert!(
        !refused.ok && refused.stderr.contains(&sha256(&tampered)),
        "{}",
        refused.stderr
    );
    let truncated = &bytes[..bytes.len() - 1536];
    web.put("truncated.qplugin", truncated);
    let cut = q.cli_with_env(
        &[
            "plugin",
            "install",
            &web.url("truncated.qplugin"),
            "--sha256",
            &sha256(truncated),
            "--yes",
        ],
        &tls,
    );
    assert!(
        !cut.ok && cut.stderr.contains("not a packed Quarry plugin"),
        "{}",
        cut.stderr
    );
    let untrusted = q.cli(&["plugin", "install", &url, "--sha256", hex, "--yes"]);
    assert!(!untrusted.ok, "a certificate of an unknown CA is refused");
    assert!(!installed_dir.exists());

    let unasked = q.cli_with_env(&["plugin", "install", &url, "--sha256", hex], &tls);
    assert!(
        !unasked.ok
            && unasked.stderr.contains("--yes")
            && unasked.stderr.contains("Read the files"),
        "{}",
        unasked.stderr
    );
    assert!(
        unasked.stdout.contains("sha256 pinned by you"),
        "{}",
        unasked.stdout
    );
    assert!(!installed_dir.exists());
    let installed = q.cli_with_env(&["plugin", "install", &url, "--sha256", hex, "--yes"], &tls);
    assert!(installed.ok, "{}", installed.stderr);
    assert!(installed_dir.join("README.md").is_file() && installed_dir.join("LICENSE").is_file());
    let entry = locked(&q, "older-notes").expect("locked");
    assert_eq!(entry["version"].as_str(), Some("1.0.0"));
    assert_eq!(entry["source"].as_str(), Some(url.as_str()));
    assert_eq!(entry["digest"].as_str(), Some(digest.as_str()));
    assert_eq!(entry["verification"].as_str(), Some("sha256-pin"));
    let grants = entry["grants"].as_array().expect("grants");
    assert!(
        grants.iter().any(|g| g
            .as_str()
            .is_some_and(|g| g.starts_with("Read the files of the folder"))),
        "{grants:?}"
    );
    let list = q.cli_json(&["plugin", "list", "--json"]);
    let row = list
        .as_array()
        .expect("list")
        .iter()
        .find(|p| p["id"] == "older-notes")
        .expect("listed");
    assert_eq!(row["origin"]["source"], Value::from(url.as_str()));
    assert_eq!(row["origin"]["verification"], "sha256-pin");
    let folder = list
        .as_array()
        .expect("list")
        .iter()
        .find(|p| p["id"] == "folder")
        .expect("bundled");
    assert_eq!(folder["origin"]["source"], "bundled");
    // The settings page shows the same.
    let mut q = q;
    q.start();
    let admin = quarry_tests::admin::sign_in(&q);
    let page = admin.call(&q, "GET", "/admin/v1/plugins", None).json();
    let shown = page["plugins"]
        .as_array()
        .expect("plugins")
        .iter()
        .find(|p| p["id"] == "older-notes")
        .expect("shown");
    assert_eq!(shown["origin"]["source"], Value::from(url.as_str()));
    assert_eq!(shown["origin"]["verified"], "sha256 pinned by you");
    q.stop();

    // An older version does not replace a newer one unless asked.
    let old_file = out.join("older-notes-0.9.0.qplugin");
    pack(&q, &publishable(&q, "0.9.0"), &old_file);
    let old = old_file.to_string_lossy();
    let downgrade = q.cli(&["plugin", "install", &old, "--yes"]);
    assert!(
        !downgrade.ok && downgrade.stderr.contains("--allow-downgrade"),
        "{}",
        downgrade.stderr
    );
    q.cli_ok(&["plugin", "install", &old, "--yes", "--allow-downgrade"]);
    let entry = locked(&q, "older-notes").expect("locked");
    assert_eq!(entry["version"].as_str(), Some("0.9.0"));
    assert_eq!(entry["verification"].as_str(), Some("local-source"));

    let unasked = q.cli(&["plugin", "remove", "older-notes"]);
    assert!(
        !unasked.ok && unasked.stderr.contains("--yes"),
        "{}",
        unasked.stderr
    );
    q.cli_ok(&["plugin", "remove", "older-notes", "--yes"]);
    assert!(!installed_dir.exists());
    assert!(locked(&q, "older-notes").is_none());
}

/// older-notes 1.0.0 packed, and where in `registry` it goes: the file, the `oci://` target
/// and the file's sha256. Pushing without signing in is refused, naming how to sign in.
fn packed_for_registry(q: &Quarry, registry: &Registry) -> (String, String, String) {
    let file = q.scratch("published").join("older-notes-1.0.0.qplugin");
    let digest = pack(q, &publishable(q, "1.0.0"), &file);
    let file = file.to_string_lossy().into_owned();
    let target = format!("oci://{}/quarry/older-notes:1.0.0", registry.host());
    let anonymous = q.cli(&["plugin", "push", &file, &target]);
    assert!(
        !anonymous.ok && anonymous.stderr.contains("QUARRY_REGISTRY_USERNAME"),
        "{}",
        anonymous.stderr
    );
    (file, target, digest)
}

#[test]
fn a_plugin_pushed_to_a_registry_installs_by_its_digest_and_tools_read_its_component() {
    let q = Quarry::new();
    let registry = Registry::start();
    let credentials = Registry::credentials();
    let (file, target, pack_digest) = packed_for_registry(&q, &registry);
    let renamed = format!("oci://{}/quarry/notes:1.0.0", registry.host());
    let misnamed = q.cli_with_env(&["plugin", "push", &file, &renamed], &credentials);
    assert!(
        !misnamed.ok && misnamed.stderr.contains("ends with the plugin's id"),
        "{}",
        misnamed.stderr
    );
    let pushed = q.cli_with_env(&["plugin", "push", &file, &target], &credentials);
    assert!(pushed.ok, "{}\n{}", pushed.stderr, registry.log());
    let digest = printed_digest(&pushed.stdout);
    let again = q.cli_with_env(&["plugin", "push", &file, &target], &credentials);
    assert_eq!(
        printed_digest(&again.stdout),
        digest,
        "the same file pushes to the same digest"
    );

    // The CNCF layout: one application/wasm layer, the component itself.
    let manifest: Value = serde_json::from_slice(&registry.get(
        &format!("quarry/older-notes/manifests/{digest}"),
        "application/vnd.oci.image.manifest.v1+json",
    ))
    .expect("a JSON manifest");
    assert_eq!(
        manifest["config"]["mediaType"],
        "application/vnd.wasm.config.v0+json"
    );
    let layers = manifest["layers"].as_array().expect("layers");
    assert_eq!(layers.len(), 1);
    assert_eq!(layers[0]["mediaType"], "application/wasm");
    let component =
        std::fs::read(quarry_tests::plugin_dir("older-notes").join("quarry_older_notes.wasm"))
            .expect("component");
    let layer = registry.get(
        &format!(
            "quarry/older-notes/blobs/{}",
            layers[0]["digest"].as_str().expect("digest")
        ),
        "*/*",
    );
    assert_eq!(layer, component);

    let tagged = q.cli_with_env(&["plugin", "install", &target, "--yes"], &credentials);
    assert!(
        !tagged.ok && tagged.stderr.contains("@sha256:"),
        "{}",
        tagged.stderr
    );
    let unknown = format!(
        "oci://{}/quarry/older-notes@sha256:{}",
        registry.host(),
        "1".repeat(64)
    );
    let missing = q.cli_with_env(&["plugin", "install", &unknown, "--yes"], &credentials);
    assert!(
        !missing.ok && missing.stderr.contains("404"),
        "{}",
        missing.stderr
    );
    let pinned = format!("oci://{}/quarry/older-notes@{digest}", registry.host());
    let installed = q.cli_with_env(&["plugin", "install", &pinned, "--yes"], &credentials);
    assert!(installed.ok, "{}", installed.stderr);
    let entry = locked(&q, "older-notes").expect("locked");
    assert_eq!(entry["source"].as_str(), Some(pinned.as_str()));
    assert_eq!(entry["digest"].as_str(), Some(digest.as_str()));
    assert_eq!(entry["verification"].as_str(), Some("oci-digest"));
    // By tag, the packed file's sha256 pins it: what was pulled is the file that was pushed.
    let hex = pack_digest.trim_start_matches("sha256:");
    let by_tag = q.cli_with_env(
        &["plugin", "install", &target, "--sha256", hex, "--yes"],
        &credentials,
    );
    assert!(by_tag.ok, "{}", by_tag.stderr);
    assert_eq!(
        locked(&q, "older-notes").expect("locked")["digest"].as_str(),
        Some(pack_digest.as_str())
    );
    q.cli_ok(&["plugin", "remove", "older-notes", "--yes"]);

    // An index kept in the registry too: pushed, added by its reference, installed from.
    let index = q.scratch("index").join("index.json");
    let listing = serde_json::json!({
        "quarry-plugin-index": 1,
        "plugins": {"older-notes": {"versions": [
            {"version": "1.0.0", "source": pinned, "sha256": pack_digest},
        ]}},
    });
    std::fs::write(&index, listing.to_string()).expect("index");
    let index_ref = format!("oci://{}/quarry/index:latest", registry.host());
    let pushed = q.cli_with_env(
        &[
            "plugin",
            "index",
            "push",
            &index.to_string_lossy(),
            &index_ref,
        ],
        &credentials,
    );
    assert!(pushed.ok, "{}", pushed.stderr);
    let added = q.cli_with_env(&["plugin", "index", "add", &index_ref], &credentials);
    assert!(
        added.ok && added.stdout.contains("older-notes"),
        "{}",
        added.stderr
    );
    let by_name = q.cli_with_env(&["plugin", "install", "older-notes", "--yes"], &credentials);
    assert!(by_name.ok, "{}", by_name.stderr);
    let entry = locked(&q, "older-notes").expect("locked");
    assert_eq!(entry["verification"].as_str(), Some("index-digest"));
    assert_eq!(entry["index"].as_str(), Some(index_ref.as_str()));
}

#[test]
fn a_registry_that_signs_in_by_tokens_takes_a_push_and_gives_the_plugin_back() {
    let q = Quarry::new();
    let issuer = TokenIssuer::start();
    let registry = Registry::start_with_tokens(&issuer);
    let (file, target, _) = packed_for_registry(&q, &registry);
    let credentials = Registry::credentials();
    let pushed = q.cli_with_env(&["plugin", "push", &file, &target], &credentials);
    assert!(pushed.ok, "{}\n{}", pushed.stderr, registry.log());
    let digest = printed_digest(&pushed.stdout);
    assert!(issuer.issued() > 0, "the push went by tokens");
    let pinned = format!("oci://{}/quarry/older-notes@{digest}", registry.host());
    let installed = q.cli_with_env(&["plugin", "install", &pinned, "--yes"], &credentials);
    assert!(installed.ok, "{}\n{}", installed.stderr, registry.log());
    assert_eq!(
        locked(&q, "older-notes").expect("locked")["verification"].as_str(),
        Some("oci-digest")
    );
}

/// A hostile download server on loopback: each connection gets `answer`'s treatment.
fn hostile_server(answer: fn(std::net::TcpStream)) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || answer(stream));
        }
    });
    format!("http://{addr}/plugin.qplugin")
}

/// Reads the request head.
fn read_request(stream: &mut std::net::TcpStream) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
        head.push(byte[0]);
    }
}

#[test]
fn a_source_that_answers_slowly_or_without_end_is_cut_off_in_bounded_time_and_memory() {
    let q = Quarry::new();
    let endless = hostile_server(|mut stream| {
        read_request(&mut stream);
        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
        let zeros = vec![0u8; 1 << 16];
        while stream.write_all(&zeros).is_ok() {}
    });
    let silent = hostile_server(|mut stream| {
        read_request(&mut stream);
        std::thread::sleep(Duration::from_secs(60));
    });
    let pin = "2".repeat(64);
    // The same servers as registries: a manifest without end, a registry that says nothing.
    let as_registry = |url: &str| {
        let host = url
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap_or_default();
        format!("oci://{host}/quarry/notes@sha256:{pin}")
    };
    let endless_registry = as_registry(&endless);
    let silent_registry = as_registry(&silent);
    for (url, expected) in [
        (&endless, "larger than"),
        (&silent, "no answer within 3 s"),
        (&endless_registry, "larger than"),
        (&silent_registry, "no answer within 3 s"),
    ] {
        let started = Instant::now();
        let (out, peak_kib) = q.cli_watched(
            &[
                "plugin",
                "install",
                url,
                "--sha256",
                &pin,
                "--yes",
                "--timeout",
                "3",
            ],
            Duration::from_secs(60),
        );
        assert!(
            !out.ok && out.stderr.contains(expected),
            "{url}: {}",
            out.stderr
        );
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{url}: {:?}",
            started.elapsed()
        );
        assert!(peak_kib < 400 << 10, "{url}: {peak_kib} KiB");
    }
}

/// Makes a key pair in `dir/name`: the public key `keygen` printed.
fn keygen(q: &Quarry, key_file: &Path) -> String {
    let out = q.cli_ok(&["plugin", "keygen", "--output", &key_file.to_string_lossy()]);
    out.lines()
        .find(|l| l.starts_with("ed25519:"))
        .unwrap_or_else(|| panic!("no key printed: {out}"))
        .to_owned()
}

#[test]
fn a_signed_plugin_installs_without_a_pin_only_when_its_key_is_trusted_and_its_files_unchanged() {
    let q = Quarry::new();
    let keys = q.scratch("keys");
    let publisher = keygen(&q, &keys.join("publisher.key"));
    let stranger = keys.join("stranger.key");
    keygen(&q, &stranger);
    let dir = publishable(&q, "1.0.0");
    let out = q.scratch("published");
    let signed = out.join("signed.qplugin");
    let key_file = keys.join("publisher.key");
    q.cli_ok(&[
        "plugin",
        "pack",
        &dir.to_string_lossy(),
        "--output",
        &signed.to_string_lossy(),
        "--sign",
        &key_file.to_string_lossy(),
    ]);
    let checked = q.cli_ok(&["plugin", "check", &signed.to_string_lossy()]);
    assert!(checked.contains(", signed"), "{checked}");
    let by_stranger = out.join("stranger.qplugin");
    q.cli_ok(&[
        "plugin",
        "pack",
        &dir.to_string_lossy(),
        "--output",
        &by_stranger.to_string_lossy(),
        "--sign",
        &stranger.to_string_lossy(),
    ]);
    let bytes = std::fs::read(&signed).expect("signed");
    let mut flipped = bytes.clone();
    let readme = flipped
        .windows(13)
        .position(|w| w == b"# Older notes")
        .expect("the README inside");
    flipped[readme + 2] = b'G';
    let web = WebServer::start_tls();
    let ca = web.ca_file();
    let tls = [("SSL_CERT_FILE", ca.to_str().expect("utf-8"))];
    web.put("signed.qplugin", &bytes);
    web.put("flipped.qplugin", &flipped);
    web.put(
        "stranger.qplugin",
        &std::fs::read(&by_stranger).expect("stranger"),
    );
    let install =
        |name: &str| q.cli_with_env(&["plugin", "install", &web.url(name), "--yes"], &tls);

    let untrusted = install("signed.qplugin");
    assert!(
        !untrusted.ok
            && untrusted.stderr.contains("a key you do not trust")
            && untrusted.stderr.contains(&publisher),
        "{}",
        untrusted.stderr
    );
    let nameless = q.cli(&["plugin", "trust", &publisher]);
    assert!(
        !nameless.ok && nameless.stderr.contains("--name"),
        "{}",
        nameless.stderr
    );
    q.cli_ok(&["plugin", "trust", &publisher, "--name", "Older notes team"]);
    assert!(q.cli_ok(&["plugin", "trust"]).contains("Older notes team"));

    let changed = install("flipped.qplugin");
    assert!(
        !changed.ok && changed.stderr.contains("changed after signing"),
        "{}",
        changed.stderr
    );
    let unknown = install("stranger.qplugin");
    assert!(
        !unknown.ok && unknown.stderr.contains("a key you do not trust"),
        "{}",
        unknown.stderr
    );
    assert!(!q.data_dir().join("plugins/older-notes").exists());

    let installed = install("signed.qplugin");
    assert!(installed.ok, "{}", installed.stderr);
    assert!(
        installed.stdout.contains("signed by a publisher you trust"),
        "{}",
        installed.stdout
    );
    let entry = locked(&q, "older-notes").expect("locked");
    assert_eq!(entry["verification"].as_str(), Some("trusted-signature"));
    assert!(
        entry["signed_by"]
            .as_str()
            .is_some_and(|s| s.starts_with(&publisher) && s.contains("Older notes team")),
        "{entry:?}"
    );
    q.cli_ok(&["plugin", "untrust", &publisher]);
    let again = install("signed.qplugin");
    assert!(!again.ok, "no longer trusted: {}", again.stdout);
}

/// A release an index lists: version, file name, sha256, and how and why it was withdrawn
/// (`("yanked" | "revoked", reason)`).
type Listed<'a> = (&'a str, &'a str, &'a str, Option<(&'a str, &'a str)>);

/// An index listing `releases` as plugin `id`.
fn index_json(web: &WebServer, id: &str, releases: &[Listed<'_>]) -> Vec<u8> {
    let versions: Vec<Value> = releases
        .iter()
        .map(|(version, file, digest, withdrawn)| {
            let mut release = serde_json::json!({
                "version": version,
                "source": web.url(file),
                "sha256": digest,
            });
            if let Some((how, why)) = withdrawn {
                release[*how] = Value::from(*why);
            }
            release
        })
        .collect();
    serde_json::to_vec(&serde_json::json!({
        "quarry-plugin-index": 1,
        "plugins": {id: {"description": "Older notes", "versions": versions}},
    }))
    .expect("json")
}

#[test]
fn an_index_installs_by_name_and_updates_ask_again_when_grants_widen_and_revoked_versions_stop() {
    let q = Quarry::new();
    let out = q.scratch("published");
    let first = pack(
        &q,
        &publishable(&q, "1.0.0"),
        &out.join("older-notes-1.0.0.qplugin"),
    );
    let wider = pack(
        &q,
        &publishable_asking(
            &q,
            "1.1.0",
            "[capabilities]\nnetwork = [\"api.example.org\"]\n",
        ),
        &out.join("older-notes-1.1.0.qplugin"),
    );
    let web = WebServer::start_tls();
    let ca = web.ca_file();
    let tls = [("SSL_CERT_FILE", ca.to_str().expect("utf-8"))];
    for name in ["older-notes-1.0.0.qplugin", "older-notes-1.1.0.qplugin"] {
        web.put(name, &std::fs::read(out.join(name)).expect("packed"));
    }
    let v1 = ("1.0.0", "older-notes-1.0.0.qplugin", first.as_str(), None);
    let v2 = ("1.1.0", "older-notes-1.1.0.qplugin", wider.as_str(), None);
    web.put("index.json", &index_json(&web, "older-notes", &[v1]));
    let cli = |args: &[&str]| q.cli_with_env(args, &tls);

    let nameless = cli(&["plugin", "install", "older-notes", "--yes"]);
    assert!(
        !nameless.ok && nameless.stderr.contains("plugin index add"),
        "{}",
        nameless.stderr
    );
    let added = cli(&["plugin", "index", "add", &web.url("index.json")]);
    assert!(
        added.ok && added.stdout.contains("older-notes"),
        "{}",
        added.stderr
    );
    let installed = cli(&["plugin", "install", "older-notes", "--yes"]);
    assert!(installed.ok, "{}", installed.stderr);
    let entry = locked(&q, "older-notes").expect("locked");
    assert_eq!(entry["version"].as_str(), Some("1.0.0"));
    assert_eq!(entry["verification"].as_str(), Some("index-digest"));
    assert_eq!(
        entry["index"].as_str(),
        Some(web.url("index.json").as_str())
    );
    let current = cli(&["plugin", "update"]);
    assert!(
        current.ok && current.stdout.contains("is the newest"),
        "{}",
        current.stdout
    );

    // 1.1.0 asks to reach a host: the update asks again, and without a terminal needs --yes.
    web.put("index.json", &index_json(&web, "older-notes", &[v1, v2]));
    let unasked = cli(&["plugin", "update"]);
    assert!(
        !unasked.ok
            && unasked.stderr.contains("api.example.org")
            && unasked.stderr.contains("--yes"),
        "{}\n{}",
        unasked.stdout,
        unasked.stderr
    );
    assert!(
        unasked.stdout.contains("asks for more than it"),
        "{}",
        unasked.stdout
    );
    assert_eq!(
        locked(&q, "older-notes").expect("locked")["version"].as_str(),
        Some("1.0.0")
    );
    let granted = cli(&["plugin", "update", "--yes"]);
    assert!(granted.ok, "{}", granted.stderr);
    assert_eq!(
        locked(&q, "older-notes").expect("locked")["version"].as_str(),
        Some("1.1.0")
    );

    // Yanked: reported, still installed. Revoked: reported and disabled.
    let withdraw = |how: &str, why: &str| {
        let release = (
            "1.1.0",
            "older-notes-1.1.0.qplugin",
            wider.as_str(),
            Some((how, why)),
        );
        web.put(
            "index.json",
            &index_json(&web, "older-notes", &[v1, release]),
        );
        cli(&["plugin", "update"])
    };
    let report = withdraw("yanked", "it lists too much");
    assert!(
        report.ok
            && report
                .stdout
                .contains("yanked by its publisher: it lists too much"),
        "{}",
        report.stdout
    );
    let report = withdraw("revoked", "it sends notes away");
    assert!(
        report
            .stdout
            .contains("REVOKED by its publisher: it sends notes away"),
        "{}",
        report.stdout
    );
    let list = q.cli_ok(&["plugin", "list"]);
    assert!(
        list.contains("REVOKED") && list.contains("disabled"),
        "{list}"
    );
    let listed = q.cli_json(&["plugin", "list", "--json"]);
    assert!(
        !listed
            .as_array()
            .expect("list")
            .iter()
            .any(|p| p["id"] == "older-notes"),
        "a revoked version is not loaded: {listed}"
    );
    let again = cli(&["plugin", "install", "older-notes@1.1.0", "--yes"]);
    assert!(
        !again.ok && again.stderr.contains("revoked"),
        "{}",
        again.stderr
    );

    // An index whose entry holds another plugin installs nothing.
    web.put("index.json", &index_json(&web, "notes", &[v1]));
    let misnamed = cli(&["plugin", "install", "notes", "--yes"]);
    assert!(
        !misnamed.ok && misnamed.stderr.contains("holds older-notes"),
        "{}",
        misnamed.stderr
    );
    q.cli_ok(&["plugin", "remove", "older-notes", "--yes"]);
}
