//! `quarry search`: search from the terminal, over every connector: keyword, or with
//! `--semantic` fused with semantic ranking as the API's default.

use anyhow::Context;
use quarry_api::views::{HitView, SearchAnswer};
use quarry_core::terminal::printable;
use quarry_index::{Fusion, Ranking, SearchRequest, SemanticQuery};
use quarry_store::{ConnectorStatus, Store};

use crate::admin::server_url;
use crate::cli::SearchArgs;
use crate::setup::{Paths, load_embedder, open_index};

/// Runs a search and prints the results.
pub async fn run(paths: &Paths, store: &Store, args: &SearchArgs) -> anyhow::Result<()> {
    let connectors = store.connectors().await?;
    let searched = connectors
        .iter()
        .filter(|c| c.status != ConnectorStatus::Disabled)
        .map(|c| c.id.clone())
        .collect();
    let mut request = SearchRequest::new(args.query.clone(), searched, args.limit.clamp(1, 100));
    // Read-only: works while a server holds the index.
    let index = open_index(paths, false)?;
    let embedder = if args.semantic {
        Some(load_embedder(paths).context(
            "--semantic needs the embedding model: run `make setup`, or pass --model-dir",
        )?)
    } else {
        None
    };
    let started = std::time::Instant::now();
    let results = tokio::task::spawn_blocking(move || {
        if let Some(embedder) = embedder {
            request.ranking = Ranking::Fused(
                SemanticQuery {
                    model: embedder.id().to_owned(),
                    vector: embedder.embed_query(&request.query)?,
                },
                Fusion::HYBRID,
            );
        }
        anyhow::Ok(index.search(&request)?)
    })
    .await??;
    if args.json {
        let answer = SearchAnswer {
            results: HitView::list(results.hits, &connectors, &server_url(paths), &args.query),
            total: results.total,
            mode: if args.semantic { "semantic" } else { "keyword" },
            took_ms: started.elapsed().as_millis() as u64,
            warnings: results.warnings,
        };
        println!("{}", serde_json::to_string(&answer)?);
        return Ok(());
    }
    for warning in &results.warnings {
        eprintln!("note: {}", printable(warning));
    }
    if args.semantic {
        println!(
            "{} candidate document(s), by meaning and words",
            results.total
        );
    } else {
        println!("{} matching document(s)", results.total);
    }
    for (i, hit) in results.hits.iter().enumerate() {
        let connector = connectors
            .iter()
            .find(|c| c.id == hit.info.connector)
            .map_or("?", |c| c.name.as_str());
        println!();
        println!(
            "{:>2}. {}  [{}] {}",
            i + 1,
            printable(&hit.info.meta.title),
            printable(connector),
            printable(hit.info.meta.path.as_deref().unwrap_or(""))
        );
        if !hit.snippet.text.is_empty() {
            println!("    {}", printable(&hit.snippet.text));
        }
    }
    Ok(())
}
