//! `quarry serve`: the API, and the sync scheduler that keeps connectors in step.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use quarry_api::{AdminConfig, ApiConfig, AppState, ConnectionLimits, router};
use quarry_index::{IndexError, SearchIndex};
use quarry_runtime::{Runtime, RuntimeConfig};
use quarry_store::{ConnectorScope, Store};
use quarry_sync::{EmbeddingOrder, Scheduler, Syncer};
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::admin::{first_admin_token, login_link, note_server_url};
use crate::background::{Background, Embedding, Schedulers, raised};
use crate::cli::ServeArgs;
use crate::service_manager::ServiceManager;
use crate::setup::{
    Paths, load_embedder, load_ocr, load_plugins_with, open_store, recheck_for_credentials,
    runtime_config,
};

/// Plugin instances beyond those of syncs and downloads: checking a connector's settings in the
/// settings page.
const SPARE_INSTANCES: u32 = 8;
/// The instance the OCR queue reads scans with.
const OCR_INSTANCES: u32 = 1;

/// Plugin instances that may exist at once: the syncs, the downloads, the watched sources
/// (each waits in one while its server is quiet), and a few for checking settings. A download
/// beyond its bound is refused before it takes an instance, and no more sources are watched
/// than their budget, so none starves a sync.
fn instance_budget(args: &ServeArgs) -> u32 {
    let watched = u32::try_from(quarry_sync::MAX_WATCHED).unwrap_or(u32::MAX);
    args.parallel_syncs + args.limits().downloads + watched + SPARE_INSTANCES + OCR_INSTANCES
}

/// Serves until interrupted (Ctrl-C or SIGTERM), then stops within a few seconds whatever its
/// clients do: see the end of this function.
pub async fn run(paths: &Paths, args: &ServeArgs) -> anyhow::Result<()> {
    let store = open_store(paths).await?;
    let index = open_or_rebuild_index(paths, &store).await?;
    // A team host's index follows the team's log; the follower stops with `serve`.
    let (index, _follower) = match paths.database {
        Some(_) => {
            let (index, follower) = crate::team_index::join(&store, index).await?;
            (index, Some(follower))
        }
        None => (Arc::new(index), None),
    };
    let mut runtime = Runtime::new(RuntimeConfig {
        max_instances: instance_budget(args),
        ..runtime_config(paths)
    })?;
    let ocr = load_ocr(paths);
    if let Some(ocr) = &ocr {
        runtime = runtime.with_ocr(ocr.clone());
    }
    let runtime = Arc::new(runtime);
    let plugins = load_plugins_with(&runtime, paths)?;
    let rechecked = recheck_for_credentials(&store, &index).await?;
    let sealed = quarry_sync::seal_stored_secrets(&store, &plugins).await?;
    if sealed > 0 {
        tracing::info!("sealed the secret settings of {sealed} connector(s) stored in clear");
    }
    let embedder = load_embedder(paths);
    let (embedding_order, embedding) = embedding_work(&store, &index, embedder.as_ref()).await?;
    let syncer = Arc::new(Syncer::new(
        store.clone(),
        index.clone(),
        plugins.clone(),
        tokio::runtime::Handle::current(),
    ));
    // Quarry's own files may sit inside a watched folder: their changes are not the user's.
    let own_files = runtime.protected().paths().to_vec();
    let schedulers = schedulers(paths, args, &syncer, embedding_order, own_files);
    let work = Background::new(&store, syncer, ocr, embedding, schedulers).await?;

    let listener = TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let address = listener.local_addr()?;
    let config = ApiConfig::new(address, args.public_url.as_deref())
        .with_stdio_command(crate::mcp::stdio_command(paths))
        .with_renderer(paths.renderer.clone());
    let first_token = first_admin_token(paths, &store).await?;
    let admin = AdminConfig {
        plugins_dir: paths.installed_plugins(),
        staging_dir: paths.plugin_staging(),
        lock_path: paths.plugins_lock(),
        runtime,
    };
    let state = AppState::new(
        store.clone(),
        index,
        plugins,
        config.clone(),
        embedder,
        admin,
        args.limits(),
    );
    note_server_url(paths, &config.public_url);
    if let Some(held) = rechecked {
        println!("{held}");
    }
    announce(paths, &store, &config.public_url, first_token.as_deref()).await?;
    let descriptors = crate::descriptors::raise_limit();
    let connections = ConnectionLimits {
        max_connections: crate::descriptors::connection_cap(
            args.max_connections as usize,
            descriptors,
        ),
        ..ConnectionLimits::default()
    };
    tracing::info!(
        max_connections = connections.max_connections,
        descriptors,
        "connections are capped"
    );
    let _desktop = crate::desktop::start(paths, args.desktop_search, state.clone()).await;
    let manager = ServiceManager::from_env();
    manager.notify(&format!("READY=1\nSTATUS=serving {}", config.public_url));
    let _watchdog = manager
        .watchdog_beat()
        .map(|beat| tokio::spawn(keep_watchdog(manager, beat, store.clone())));
    serve_until_stopped(listener, state, connections, work, store).await
}

/// The sync schedulers: one of every connector for a data folder. On a team database, one of
/// the connectors of any host (run by the host holding the sync turn), and one of the
/// connectors living on this host (its own folders), run all along.
fn schedulers(
    paths: &Paths,
    args: &ServeArgs,
    syncer: &Arc<Syncer>,
    order: EmbeddingOrder,
    own_files: Vec<std::path::PathBuf>,
) -> Schedulers {
    let scheduler = || {
        Scheduler::new(syncer.clone(), args.parallel_syncs as usize)
            .watching(own_files.clone())
            .keeping_disk_reserve(&paths.data_dir)
    };
    match paths.database {
        // A change another process writes to the data folder's database wakes the scheduler.
        None => Schedulers {
            main: Arc::new(
                scheduler()
                    .ordering_embeddings(order)
                    .woken_by_store_changes(&paths.data_dir.join(quarry_store::DB_FILE)),
            ),
            homed: None,
        },
        // A team database is looked at every tick.
        Some(_) => Schedulers {
            main: Arc::new(
                scheduler()
                    .ordering_embeddings(order)
                    .scoped(ConnectorScope::AnyHost),
            ),
            homed: Some(Arc::new(
                scheduler().scoped(ConnectorScope::LivingOn(paths.host_name.clone())),
            )),
        },
    }
}

/// What computes vectors in the background (with the syncs: [`Background`]). Documents are
/// searchable by keyword as soon as a sync writes them; their vectors follow, in the order the
/// scheduler keeps from the store (the connectors put first).
async fn embedding_work(
    store: &Store,
    index: &Arc<SearchIndex>,
    embedder: Option<&Arc<quarry_embed::Embedder>>,
) -> anyhow::Result<(EmbeddingOrder, Option<Embedding>)> {
    let order = EmbeddingOrder::default();
    order.set_first(store.connectors_embedded_first().await?);
    let work = embedder.map(|embedder| Embedding {
        index: index.clone(),
        embedder: embedder.clone(),
        order: order.clone(),
    });
    Ok((order, work))
}

/// Tells the service manager the service is alive every `beat` for as long as the database
/// answers within a beat: a service whose runtime or database hangs is restarted by its unit.
async fn keep_watchdog(manager: ServiceManager, beat: Duration, store: Store) {
    let mut ticks = tokio::time::interval(beat);
    loop {
        ticks.tick().await;
        match tokio::time::timeout(beat, store.ping()).await {
            Ok(Ok(())) => manager.notify("WATCHDOG=1"),
            Ok(Err(e)) => tracing::warn!("the database did not answer the watchdog's query: {e}"),
            Err(_) => tracing::warn!(
                "the database did not answer the watchdog's query within {} s",
                beat.as_secs_f32()
            ),
        }
    }
}

/// The index, opened for writing; one of an older layout is rebuilt: from the sources, or on a
/// team host from the team's log (the team's catalog stays as it is).
async fn open_or_rebuild_index(paths: &Paths, store: &Store) -> anyhow::Result<SearchIndex> {
    match SearchIndex::open(&paths.index(), true) {
        Ok(index) => Ok(index),
        Err(IndexError::Outdated {
            found, expected, ..
        }) => {
            let from = match paths.database {
                Some(_) => "the team's index log",
                None => "the sources",
            };
            tracing::warn!(
                "the index has layout {found}, this Quarry uses {expected}: rebuilding it from {from}"
            );
            // The catalog first: should this stop half-way, the next start rebuilds again
            // instead of trusting a catalog that describes documents the index lacks.
            if paths.database.is_none() {
                store.forget_index(quarry_store::now_ms()).await?;
            }
            std::fs::remove_dir_all(paths.index())
                .with_context(|| format!("cannot remove {}", paths.index().display()))?;
            Ok(SearchIndex::open(&paths.index(), true)?)
        }
        Err(IndexError::Busy) => bail!(
            "another `quarry serve` is using {}; stop it first, or pass another --data-dir",
            paths.data_dir.display()
        ),
        Err(e) => Err(e.into()),
    }
}

/// Prints where the service is. The admin token is shown at the first start only, when it is
/// made (`first_token`; Quarry keeps only its hash): later starts run as services whose output
/// ends up in logs; `quarry admin link` prints a sign-in link on request, `quarry admin token` a
/// new token.
async fn announce(
    paths: &Paths,
    store: &Store,
    public_url: &str,
    first_token: Option<&str>,
) -> anyhow::Result<()> {
    println!("data: {}", paths.data_dir.display());
    println!("settings: {public_url}/settings");
    if let Some(token) = first_token {
        let link = login_link(store, public_url).await?;
        println!(
            "admin token: {token}  (shown once: Quarry keeps only its hash; `quarry admin token` makes a new one)"
        );
        println!("one-time sign-in link (15 minutes): {link}");
    } else {
        println!("sign in: `quarry admin link` prints a one-time link to the settings page");
    }
    // Scripts and tests read this line, printed last, to find the service.
    println!("Quarry is serving {public_url}");
    Ok(())
}

/// Serves until Ctrl-C or SIGTERM, then shuts down in bounded time.
async fn serve_until_stopped(
    listener: TcpListener,
    state: Arc<AppState>,
    connections: ConnectionLimits,
    work: Background,
    store: Store,
) -> anyhow::Result<()> {
    // Ctrl-C or SIGTERM: stop taking connections, stop syncs at their next document, give
    // requests and syncs a short while to end, write the audit log, and exit. Whatever has not
    // ended by then is cut: a download's client sees a short body, a sync resumes from its
    // checkpoint at the next start (a crash at any instant loses nothing).
    let (signal, signalled) = watch::channel(false);
    tokio::spawn(async move {
        shutdown_signal().await;
        let _ = signal.send(true);
    });
    let scheduler_task = tokio::spawn(work.run(signalled.clone()));
    let serving = quarry_api::serve(
        listener,
        router(state.clone()),
        connections,
        raised(signalled.clone()),
    );
    let cut_off = async {
        raised(signalled.clone()).await;
        tokio::time::sleep(REQUESTS_GRACE).await;
    };
    tokio::select! {
        () = serving => {}
        () = cut_off => tracing::warn!(
            "requests still running {} s after the stop signal are cut off",
            REQUESTS_GRACE.as_secs_f32()
        ),
    }
    ServiceManager::from_env().notify("STOPPING=1");
    tracing::info!("shutting down: stopping syncs");
    if tokio::time::timeout(SYNCS_GRACE, scheduler_task)
        .await
        .is_err()
    {
        tracing::warn!(
            "a sync did not reach its next document in time; it resumes at the next start"
        );
    }
    if tokio::time::timeout(FLUSH_GRACE, state.flush())
        .await
        .is_err()
    {
        tracing::error!("the audit log could not be written in time; its last entries are lost");
    }
    let _ = tokio::time::timeout(FLUSH_GRACE, store.close()).await;
    Ok(())
}

/// How long requests may run on after the stop signal.
const REQUESTS_GRACE: Duration = Duration::from_millis(1500);
/// How long syncs may take to reach their next document after the requests ended.
const SYNCS_GRACE: Duration = Duration::from_millis(1500);
/// How long writing the audit log, then closing the database, may take.
const FLUSH_GRACE: Duration = Duration::from_millis(500);

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}
