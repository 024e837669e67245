//! `quarry connector ...`: add, list, remove and sync connectors. When a server is running (it
//! holds the index), changes are left to it through the store and it acts within a second;
//! otherwise this process does the work itself.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use quarry_api::views::{
    ConnectorStatusView, ConnectorView, EmbeddingKindView, EmbeddingView, FailedDocView,
    NamedConnector, NotedDocView, NotedDocsView, OcrView,
};
use quarry_core::ConnectorId;
use quarry_core::terminal::printable;
use quarry_core::times::rfc3339;
use quarry_embed::Embedder;
use quarry_index::{IndexError, SearchIndex};
use quarry_runtime::{FieldKind, Grant, PluginSet};
use quarry_store::{Connector, ConnectorStatus, CredentialMode, NotedDoc, Store, now_ms};
use quarry_sync::{ConnectorRequest, Syncer, add_connector, embed_all_pending, own_folders_inside};

use crate::cli::{AddConnector, ConnectorCommand};
use crate::progress::ProgressDisplay;
use crate::setup::{Paths, load_embedder, load_plugins, open_index, recheck_for_credentials};

/// Runs a connector command.
pub async fn run(paths: &Paths, store: &Store, command: ConnectorCommand) -> anyhow::Result<()> {
    match command {
        ConnectorCommand::Add(AddConnector::Folder { path, name, json }) => {
            let folder = std::path::absolute(&path)
                .with_context(|| format!("cannot open the folder {}", path.display()))?
                .to_string_lossy()
                .into_owned();
            let request = ConnectorRequest {
                name,
                plugin_id: "folder".to_owned(),
                values: BTreeMap::from([("folder".to_owned(), folder)]),
            };
            add(paths, store, request, json).await
        }
        ConnectorCommand::Add(AddConnector::Plugin {
            plugin,
            name,
            settings,
            json,
        }) => {
            let request = ConnectorRequest {
                name,
                plugin_id: plugin,
                values: read_settings(&settings)?,
            };
            add(paths, store, request, json).await
        }
        ConnectorCommand::List { json } => list(paths, store, json).await,
        ConnectorCommand::Disable { name } => {
            let connector = store.set_disabled(&name, true, now_ms()).await?;
            println!(
                "Disabled {:?}: it is neither synced nor searched until `quarry connector enable {:?}`.",
                connector.name, connector.name
            );
            Ok(())
        }
        ConnectorCommand::Enable { name } => {
            let connector = store.set_disabled(&name, false, now_ms()).await?;
            println!(
                "Enabled {:?}; a running server syncs it now.",
                connector.name
            );
            Ok(())
        }
        ConnectorCommand::Remove { name } => remove(paths, store, &name).await,
        ConnectorCommand::Sync { name, wait, full } => sync(paths, store, &name, wait, full).await,
        ConnectorCommand::Status { name, json } => status(paths, store, &name, json).await,
        ConnectorCommand::EmbedFirst { name, undo } => embed_first(store, &name, !undo).await,
        ConnectorCommand::Home { name, host, .. } => home(store, &name, host.as_deref()).await,
        ConnectorCommand::Credentials { name, mode, yes } => {
            credentials(store, &name, &mode, yes).await
        }
        ConnectorCommand::Release { name, path, undo } => {
            let connector = store.set_released(&name, &path, !undo, now_ms()).await?;
            if undo {
                println!(
                    "{} is held back again when it holds credentials; a running server checks {:?} again now.",
                    printable(&path),
                    connector.name
                );
            } else {
                println!(
                    "Released {} in {:?}: it is indexed as it is, whatever it holds, and every integration this connector is shared with can read it. A running server indexes it now.",
                    printable(&path),
                    connector.name
                );
            }
            Ok(())
        }
        ConnectorCommand::Schedule {
            name,
            every,
            full_every,
        } => schedule(store, &name, every, full_every).await,
    }
}

/// The id of the model a server would load, and the index read-only; `None` without a model
/// (or an index to count in).
fn model_and_index(paths: &Paths) -> Option<(String, SearchIndex)> {
    let config = paths.model.as_ref()?;
    if !config.runtime_library.is_file() {
        return None;
    }
    let model = quarry_embed::model_id(&config.model_dir, config.graph).ok()?;
    Some((model, open_index(paths, false).ok()?))
}

/// How far each connector's embeddings are, as the server's `GET /connectors` says; `None`
/// for every connector without a model (or an index to count in).
fn embedding_progress(paths: &Paths, connectors: &[Connector]) -> Vec<Option<EmbeddingView>> {
    let counted = || -> Option<Vec<EmbeddingView>> {
        let (model, index) = model_and_index(paths)?;
        let ids: Vec<ConnectorId> = connectors.iter().map(|c| c.id.clone()).collect();
        EmbeddingView::counted(&index, &model, &ids).ok()
    };
    match counted() {
        Some(views) => views.into_iter().map(Some).collect(),
        None => connectors.iter().map(|_| None).collect(),
    }
}

/// How far a connector's embeddings are per kind of document; `None` without a model.
fn embedding_by_kind(paths: &Paths, connector: &ConnectorId) -> Option<Vec<EmbeddingKindView>> {
    let (model, index) = model_and_index(paths)?;
    let kinds = index.embedding_by_kind(&model, Some(connector)).ok()?;
    Some(kinds.iter().map(EmbeddingKindView::new).collect())
}

/// `quarry connector embed-first NAME [--undo]`.
async fn embed_first(store: &Store, name: &str, first: bool) -> anyhow::Result<()> {
    let c = store.set_embed_first(name, first).await?;
    match first {
        true => println!(
            "The vectors of {:?} are computed before those of other connectors (a running server starts with its next round).",
            c.name
        ),
        false => println!("{:?} is back in line for its vectors.", c.name),
    }
    Ok(())
}

/// `quarry connector home NAME HOST|--any`: the team host a connector lives on.
async fn home(store: &Store, name: &str, host: Option<&str>) -> anyhow::Result<()> {
    if store.dialect() != quarry_store::Dialect::Postgres {
        bail!(
            "a data folder's connectors live on its own host; `connector home` is for a team database (--database)"
        );
    }
    let c = store.set_connector_host(name, host, now_ms()).await?;
    match &c.host {
        Some(host) => println!(
            "{:?} lives on {host:?}: that host syncs and watches it (from its next look, within a few seconds).",
            c.name
        ),
        None => println!(
            "{:?} lives on any host: the host holding the team's sync turn syncs it.",
            c.name
        ),
    }
    Ok(())
}

/// How far OCR is with each connector's documents, as the server's `GET /connectors` says;
/// `None` for every connector when OCR is off.
async fn ocr_progress(
    paths: &Paths,
    store: &Store,
    connectors: &[Connector],
) -> anyhow::Result<Vec<Option<OcrView>>> {
    let mut views = Vec::with_capacity(connectors.len());
    let on = crate::setup::ocr_engine(paths).is_some();
    for c in connectors {
        views.push(match on {
            true => Some(OcrView {
                pending: store.ocr_pending(Some(&c.id)).await?,
            }),
            false => None,
        });
    }
    Ok(views)
}

/// `quarry connector list`.
async fn list(paths: &Paths, store: &Store, json: bool) -> anyhow::Result<()> {
    let connectors = store.connectors().await?;
    let embedding = embedding_progress(paths, &connectors);
    let ocr = ocr_progress(paths, store, &connectors).await?;
    if json {
        let rows: Vec<ConnectorView> = connectors
            .iter()
            .zip(embedding)
            .zip(ocr)
            .map(|((c, embedding), ocr)| ConnectorView {
                embedding,
                ocr,
                ..ConnectorView::for_user(c)
            })
            .collect();
        println!("{}", serde_json::to_string(&rows)?);
        return Ok(());
    }
    if connectors.is_empty() {
        println!("No connectors yet: `quarry connector add folder PATH --name NAME` adds one.");
        return Ok(());
    }
    println!(
        "{:<20} {:<9} {:>8} {:>10} {:>10}  {:<24}  {:<16} {:>8} {:>9} {:>9} {:>9}  LAST ERROR",
        "NAME",
        "STATUS",
        "DOCS",
        "EMBEDDING",
        "OCR",
        "LAST SYNC",
        "PLUGIN",
        "CALLS",
        "CPU",
        "PEAK MEM",
        "NETWORK"
    );
    let left = |pending: Option<u64>| match pending {
        None => "-".to_owned(),
        Some(0) => "done".to_owned(),
        Some(n) => format!("{n} left"),
    };
    for ((c, embedding), ocr) in connectors.iter().zip(embedding).zip(ocr) {
        println!(
            "{:<20} {:<9} {:>8} {:>10} {:>10}  {:<24}  {:<16} {:>8} {:>9} {:>9} {:>9}  {}",
            printable(&c.name),
            c.status.as_str(),
            c.doc_count,
            left(embedding.map(|e| e.pending)),
            left(ocr.map(|o| o.pending)),
            c.last_sync_ms.map_or("never".to_owned(), rfc3339),
            format!("{}@{}", c.plugin_id, c.plugin_version),
            c.usage.calls,
            format!("{:.1} s", c.usage.cpu_us as f64 / 1e6),
            format!("{:.1} MiB", c.usage.peak_memory_bytes as f64 / 1048576.0),
            format!("{:.1} MiB", c.usage.network_bytes as f64 / 1048576.0),
            printable(c.last_error.as_deref().unwrap_or(""))
        );
    }
    Ok(())
}

/// `quarry connector remove NAME`: the documents go now, or with the running server.
async fn remove(paths: &Paths, store: &Store, name: &str) -> anyhow::Result<()> {
    let connector = store.remove_connector(name, now_ms()).await?;
    match open_index(paths, true) {
        Ok(index) => {
            let syncer = Syncer::new(
                store.clone(),
                Arc::new(index),
                PluginSet::default(),
                tokio::runtime::Handle::current(),
            );
            let id = connector.id.clone();
            tokio::task::spawn_blocking(move || syncer.purge(&id)).await??;
            println!("Removed connector {:?} and its documents.", connector.name);
        }
        Err(IndexError::Busy) => println!(
            "Removed connector {:?}; the running server deletes its documents from the index.",
            connector.name
        ),
        Err(e) => return Err(e.into()),
    }
    Ok(())
}

/// `quarry connector sync NAME`: here when no server holds the index, else asked of it.
async fn sync(
    paths: &Paths,
    store: &Store,
    name: &str,
    wait: bool,
    full: bool,
) -> anyhow::Result<()> {
    let connector = store.connector_by_name(name).await?;
    if connector.status == ConnectorStatus::Disabled {
        bail!(
            "connector {:?} is disabled; enable it first",
            connector.name
        );
    }
    let asked = now_ms();
    if full {
        store.request_full_sync(&connector.id, asked).await?;
    }
    match open_index(paths, true) {
        Ok(index) => sync_here(paths, store, &connector, index).await,
        Err(IndexError::Busy) => {
            store.request_sync(&connector.id, asked).await?;
            if wait {
                follow(store, &connector, asked).await
            } else {
                println!(
                    "Sync of {:?} requested; the running server starts it within a second.",
                    connector.name
                );
                Ok(())
            }
        }
        Err(e) => Err(e.into()),
    }
}

/// `quarry connector schedule NAME --every ... --full-every ...`.
async fn schedule(
    store: &Store,
    name: &str,
    every: Option<i64>,
    full_every: Option<i64>,
) -> anyhow::Result<()> {
    if every.is_none() && full_every.is_none() {
        bail!("give --every, --full-every or both (e.g. --every 15m --full-every 24h)");
    }
    let c = store.set_intervals(name, every, full_every).await?;
    let shown =
        |s: Option<i64>| s.map_or("interval of its plugin".to_owned(), |s| format!("{s} s"));
    println!(
        "{:?} syncs every {}, with a full listing every {}.",
        c.name,
        shown(c.schedule.sync_interval_s),
        shown(c.schedule.full_interval_s),
    );
    Ok(())
}

/// Syncs in this process (no server holds the index), showing progress.
async fn sync_here(
    paths: &Paths,
    store: &Store,
    connector: &Connector,
    index: SearchIndex,
) -> anyhow::Result<()> {
    let plugins = load_plugins(paths)?;
    let index = Arc::new(index);
    if let Some(held) = recheck_for_credentials(store, &index).await? {
        eprintln!("{held}");
    }
    let syncer = Syncer::new(
        store.clone(),
        index.clone(),
        plugins,
        tokio::runtime::Handle::current(),
    );
    let id = connector.id.clone();
    let started = Instant::now();
    let task = tokio::task::spawn_blocking(move || syncer.sync(&id, &AtomicBool::new(false)));
    let mut display = ProgressDisplay::new();
    let mut shown = Instant::now();
    while !task.is_finished() {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if shown.elapsed() >= Duration::from_millis(500) {
            if let Some(c) = store.connector(&connector.id).await? {
                display.show(&c);
            }
            shown = Instant::now();
        }
    }
    display.finish();
    let report = task.await??;
    println!(
        "Synced {:?} in {:.1} s: {} listed, {} indexed, {} without text, {} removed.",
        connector.name,
        started.elapsed().as_secs_f64(),
        report.listed,
        report.indexed,
        report.failed,
        report.deleted
    );
    if let Some(embedder) = load_embedder(paths) {
        embed_here(index, embedder, store.connectors_embedded_first().await?).await?;
    }
    Ok(())
}

/// Computes the vectors a server's embedding queue would (no server runs to do it), showing
/// progress: the documents are searchable by keyword already, by meaning once this ends.
async fn embed_here(
    index: Arc<SearchIndex>,
    embedder: Arc<Embedder>,
    first: Vec<ConnectorId>,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let done = Arc::new(AtomicU64::new(0));
    let total = Arc::new(AtomicU64::new(0));
    let task = {
        let (done, total) = (done.clone(), total.clone());
        tokio::task::spawn_blocking(move || {
            embed_all_pending(
                &index,
                &embedder,
                &first,
                &AtomicBool::new(false),
                |d, t| {
                    done.store(d, Ordering::Relaxed);
                    total.store(t, Ordering::Relaxed);
                },
            )
        })
    };
    let mut display = ProgressDisplay::new();
    while !task.is_finished() {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let (done, total) = (done.load(Ordering::Relaxed), total.load(Ordering::Relaxed));
        if total > 0 {
            display.show_line(&format!(
                "computing embeddings: {done} of {total} documents"
            ));
        }
    }
    display.finish();
    let embedded = task.await??;
    if embedded > 0 {
        println!(
            "Computed the embeddings of {embedded} documents in {:.1} s.",
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

/// The lines of `connector status` on its vectors: per kind, in the queue's order.
fn print_embedding(c: &Connector, kinds: Option<&[EmbeddingKindView]>) {
    let Some(kinds) = kinds else {
        return;
    };
    let first = match c.embed_first {
        true => ", before other connectors",
        false => "",
    };
    println!("  embedding (prose first{first}):");
    for k in kinds {
        let partly = match k.first_passages {
            0 => String::new(),
            n => format!(", {n} by their first passages"),
        };
        println!(
            "    {:<6} {} of {} documents{partly}",
            k.kind, k.embedded, k.documents
        );
    }
}

/// Follows a sync the server runs, until it has finished one that started after `asked`.
async fn follow(store: &Store, connector: &Connector, asked: i64) -> anyhow::Result<()> {
    let mut display = ProgressDisplay::new();
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let c = store
            .connector(&connector.id)
            .await?
            .with_context(|| format!("connector {:?} was removed", connector.name))?;
        let done = c.schedule.sync_requested_ms.is_none()
            && c.status != ConnectorStatus::Syncing
            && c.last_sync_ms.is_some_and(|t| t >= asked);
        if done {
            display.finish();
            if let Some(error) = c.last_error.filter(|_| c.status == ConnectorStatus::Error) {
                bail!("the sync of {:?} failed: {error}", c.name);
            }
            println!(
                "Synced {:?}: {} listed, {} indexed, {} without text; {} documents.",
                c.name, c.progress.listed, c.progress.indexed, c.progress.failed, c.doc_count
            );
            return Ok(());
        }
        if c.status == ConnectorStatus::Syncing {
            display.show(&c);
        }
    }
}

/// `quarry connector status NAME`.
async fn status(paths: &Paths, store: &Store, name: &str, json: bool) -> anyhow::Result<()> {
    let c = store.connector_by_name(name).await?;
    let by_kind = embedding_by_kind(paths, &c.id);
    let failed = store.failed_docs(&c.id, FAILED_SHOWN).await?;
    let no_text = store.docs_without_text(&c.id, FAILED_SHOWN).await?;
    let no_text_count = store.count_docs_without_text(&c.id).await?;
    let held_back = store.held_back_docs(&c.id, FAILED_SHOWN).await?;
    let redacted = store.count_redacted(&c.id).await?;
    let unjudged = store.unjudged_docs(&c.id, FAILED_SHOWN).await?;
    let unjudged_count = store.count_unjudged(&c.id).await?;
    let noted = |count: u64, docs: &[NotedDoc]| NotedDocsView {
        count,
        documents: docs.iter().map(NotedDocView::new).collect(),
    };
    if json {
        let answer = ConnectorStatusView {
            connector: ConnectorView::for_user(&c),
            last_full_sync_time: c.listing.last_full_ms.map(rfc3339),
            failed_documents: failed.iter().map(FailedDocView::new).collect(),
            no_text_layer: noted(no_text_count, &no_text),
            held_back: noted(c.held_back_count, &held_back),
            unjudged_files: noted(unjudged_count, &unjudged),
            redacted_count: redacted,
            embed_first: c.embed_first,
            embedding_by_kind: by_kind,
        };
        println!("{}", serde_json::to_string(&answer)?);
        return Ok(());
    }
    println!("{} ({}), {}", printable(&c.name), c.id, c.status.as_str());
    println!("  documents:  {}", c.doc_count);
    println!(
        "  last sync:  {}",
        c.last_sync_ms.map_or("never".to_owned(), rfc3339)
    );
    println!(
        "  full sync:  {}",
        c.listing.last_full_ms.map_or("never".to_owned(), rfc3339)
    );
    println!(
        "  progress:   {} listed, {} indexed, {} failed{}",
        c.progress.listed,
        c.progress.indexed,
        c.progress.failed,
        c.progress
            .remaining
            .map_or(String::new(), |r| format!(", about {r} to go"))
    );
    if let Some(error) = &c.last_error {
        println!("  last error: {}", printable(error));
    }
    print_embedding(&c, by_kind.as_deref());
    println!("  credentials: {}", credential_words(c.credentials.mode));
    for pattern in &c.credentials.released {
        println!("    released: {}", printable(pattern));
    }
    if redacted > 0 {
        println!(
            "  redacted: {redacted} document(s) indexed with their secrets replaced (their files are not served)"
        );
    }
    print_noted(
        &format!(
            "held back, not searchable, readable or downloadable ({}; `quarry connector release {:?} PATH` indexes one as it is)",
            c.held_back_count, c.name
        ),
        c.held_back_count,
        &held_back,
    );
    print_noted(
        &format!(
            "files not served, not checked for credentials ({unjudged_count}; `quarry connector release {:?} PATH` serves one as it is)",
            c.name
        ),
        unjudged_count,
        &unjudged,
    );
    if !failed.is_empty() {
        println!("  text not extracted (found by title and path only):");
        for f in &failed {
            println!("    {}: {}", printable(&f.path), printable(&f.note));
        }
    }
    print_noted(
        &format!(
            "no text layer, found by title and path only ({no_text_count}; scanned pages and \
             images are not read yet)"
        ),
        no_text_count,
        &no_text,
    );
    Ok(())
}

/// A list of documents under `header`, each with its note, when there are any (`count` in
/// all, of which `docs` are shown).
fn print_noted(header: &str, count: u64, docs: &[NotedDoc]) {
    if count == 0 {
        return;
    }
    println!("  {header}:");
    for d in docs {
        println!("    {}: {}", printable(&d.path), printable(&d.note));
    }
    if count > docs.len() as u64 {
        println!("    and {} more", count - docs.len() as u64);
    }
}

/// What a credential mode means, in a line.
fn credential_words(mode: CredentialMode) -> &'static str {
    match mode {
        CredentialMode::Hold => "held back (files that are or hold credentials are not indexed)",
        CredentialMode::Redact => {
            "redacted (secrets replaced in the text; credential files and originals not served)"
        }
        CredentialMode::Off => "NOT checked (credentials are indexed and served as they are)",
    }
}

/// What turning the credential check off or to redaction means, before it is done.
const OFF_WARNING: &str = "Turning the credential check off indexes private keys, tokens and \
passwords in this connector's files as they are: every integration it is shared with can find \
them by search, read them and download the files.";
const REDACT_NOTE: &str = "Redacting indexes the text of files that hold secrets with each \
secret replaced by a marker, and never serves their original files; files that are credentials \
as a whole (keys, keystores, password exports) stay held back. A secret the rules do not know \
stays in the text.";

/// `quarry connector credentials NAME hold|redact|off`.
async fn credentials(store: &Store, name: &str, mode: &str, yes: bool) -> anyhow::Result<()> {
    let Some(mode) = CredentialMode::parse(mode) else {
        bail!("{mode:?}: choose hold, redact or off");
    };
    match mode {
        CredentialMode::Off => {
            eprintln!("{OFF_WARNING}");
            if !yes && !crate::ask::confirm("Turn the check off?")? {
                bail!("left as it was (pass --yes to turn it off without this question)");
            }
        }
        CredentialMode::Redact => eprintln!("{REDACT_NOTE}"),
        CredentialMode::Hold => {}
    }
    let connector = store.set_credential_mode(name, mode, now_ms()).await?;
    println!(
        "{:?}: credentials {}. A running server judges its documents again now.",
        connector.name,
        credential_words(mode)
    );
    Ok(())
}

/// Failed documents, and documents without a text layer, `connector status` shows at most.
const FAILED_SHOWN: u32 = 100;

/// Adds a connector and says what it was granted (or prints its id and name as JSON).
async fn add(
    paths: &Paths,
    store: &Store,
    request: ConnectorRequest,
    json: bool,
) -> anyhow::Result<()> {
    let plugins = load_plugins(paths)?;
    let mut request = request;
    from_working_folder(&plugins, &mut request)?;
    offer_usual_folders(&plugins, &request)?;
    let connector = add_connector(store, &plugins, request).await?;
    if json {
        println!(
            "{}",
            serde_json::to_string(&NamedConnector::of(&connector))?
        );
        return Ok(());
    }
    println!(
        "Added connector {:?} ({}) with plugin {}.",
        connector.name, connector.id, connector.plugin_id
    );
    for folder in connector.grant.dirs.values() {
        println!("  It may read {folder} (read-only).");
    }
    for own in own_folders_inside(&plugins, &connector) {
        println!(
            "  Left out: {}, one of Quarry's own folders (never listed, never read).",
            own.display()
        );
    }
    let streams = plugins
        .get(&connector.plugin_id)
        .is_some_and(|p| p.manifest().capabilities.streams);
    for host in &connector.grant.hosts {
        if let Some(clear) = Grant::in_clear(host) {
            println!(
                "  It may reach {clear} UNENCRYPTED, as you allowed: the password and data cross the network readable."
            );
        } else if streams {
            println!("  It may reach {host}, encrypted (TLS checked by Quarry), or over HTTP.");
        } else {
            println!("  It may reach {host} over HTTP.");
        }
    }
    println!(
        "A running server syncs it now; otherwise: quarry connector sync {:?} --wait",
        connector.name
    );
    Ok(())
}

/// A required folder setting not given whose manifest says where such folders usually are
/// (a browser's profiles): the folders found there, offered with the command that adds each.
fn offer_usual_folders(plugins: &PluginSet, request: &ConnectorRequest) -> anyhow::Result<()> {
    let Some(plugin) = plugins.get(&request.plugin_id) else {
        return Ok(());
    };
    let Some(field) = plugin
        .manifest()
        .config
        .iter()
        .find(|f| f.required && !f.suggest.is_empty() && !request.values.contains_key(&f.key))
    else {
        return Ok(());
    };
    let home = std::env::var_os("HOME")
        .map(std::path::PathBuf::from)
        .unwrap_or_default();
    let found = quarry_runtime::suggest::folders(&home, &field.suggest);
    if found.is_empty() {
        bail!(
            "`{}` is required, and none was found where such folders usually are ({}); give one with --set {}=FOLDER",
            field.key,
            field.suggest.join(", "),
            field.key
        );
    }
    let mut offer = format!(
        "`{}` is required ({}). Found on this machine:\n",
        field.key,
        field.display_name()
    );
    for folder in &found {
        offer.push_str(&format!(
            "  quarry connector add plugin {} --name {} --set {}={}\n",
            request.plugin_id,
            shell_word(&request.name),
            field.key,
            shell_word(&folder.to_string_lossy())
        ));
    }
    offer.push_str("Run the line of the one to add (each is added only when you ask).");
    bail!(offer)
}

/// `text` as one shell word.
fn shell_word(text: &str) -> String {
    if text
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/._-+:@".contains(&b))
    {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// Makes the relative paths of a request's folder and certificate settings absolute, from the
/// working folder, as a path on the command line means.
fn from_working_folder(plugins: &PluginSet, request: &mut ConnectorRequest) -> anyhow::Result<()> {
    let Some(plugin) = plugins.get(&request.plugin_id) else {
        return Ok(());
    };
    for field in &plugin.manifest().config {
        if !matches!(field.kind, FieldKind::Directory | FieldKind::Certificate) {
            continue;
        }
        if let Some(value) = request.values.get_mut(&field.key) {
            let absolute = std::path::absolute(value.as_str())
                .with_context(|| format!("{}: cannot resolve {value:?}", field.key))?;
            *value = absolute.to_string_lossy().into_owned();
        }
    }
    Ok(())
}

/// `key=value` settings from the command line; a value of `-` is read from standard input.
pub(crate) fn read_settings(pairs: &[String]) -> anyhow::Result<BTreeMap<String, String>> {
    let mut values = BTreeMap::new();
    for pair in pairs {
        let Some((key, value)) = pair.split_once('=') else {
            bail!("--set {pair:?}: write it as key=value");
        };
        let value = if value == "-" {
            let mut line = String::new();
            std::io::stdin()
                .read_line(&mut line)
                .with_context(|| format!("reading {key} from standard input"))?;
            line.trim_end_matches(['\r', '\n']).to_owned()
        } else {
            value.to_owned()
        };
        if values.insert(key.trim().to_owned(), value).is_some() {
            bail!("--set {key}: given twice");
        }
    }
    Ok(values)
}
