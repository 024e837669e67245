//! `quarry activity`: which integration read what, when, and how much (the audit log).

use anyhow::Context;
use quarry_api::views::AuditEntryView;
use quarry_core::terminal::printable;
use quarry_core::times::parse_instant;
use quarry_store::{AuditFilter, Store, now_ms};

use crate::cli::ActivityArgs;

/// Prints the audit log, newest first.
pub async fn run(store: &Store, args: &ActivityArgs) -> anyhow::Result<()> {
    let integrations = store.integrations(now_ms()).await?;
    let connectors = store.connectors().await?;
    let filter = AuditFilter {
        integration_id: match &args.integration {
            Some(name) => Some(store.integration(name).await?.id),
            None => None,
        },
        connector_id: match &args.connector {
            Some(name) => Some(store.connector_by_name(name).await?.id.to_string()),
            None => None,
        },
        since_ms: args
            .since
            .as_deref()
            .map(|s| {
                parse_instant(s).with_context(|| {
                    format!("--since must be a date (2026-11-01) or an RFC 3339 time, got {s:?}")
                })
            })
            .transpose()?,
        limit: Some(args.limit),
    };
    let entries = store.audit(&filter).await?;
    let lost = store.lost_audit_entries().await?;
    if lost > 0 {
        eprintln!(
            "note: {lost} request(s) could not be recorded in this log (its queue overflowed or the database failed; see the server's log)"
        );
    }
    // What integrations never got to read: the files held back from the index.
    let held: Vec<String> = connectors
        .iter()
        .filter(|c| c.held_back_count > 0)
        .map(|c| format!("{} in {}", c.held_back_count, printable(&c.name)))
        .collect();
    if !held.is_empty() && !args.json {
        println!(
            "Held back from the index (credentials, links to Quarry's own data; no integration can read them): {}. `quarry connector status NAME` says which and why.",
            held.join(", ")
        );
    }
    let rows: Vec<AuditEntryView> = entries
        .iter()
        .map(|e| AuditEntryView::new(e, &integrations, &connectors))
        .collect();
    if args.json {
        println!("{}", serde_json::to_string(&rows)?);
        return Ok(());
    }
    if rows.is_empty() {
        println!("No activity.");
        return Ok(());
    }
    println!(
        "{:<24}  {:<20} {:>6} {:>10}  {:<44} CONNECTOR / DOCUMENT",
        "TIME", "INTEGRATION", "STATUS", "BYTES", "ENDPOINT"
    );
    for e in rows {
        // A removed integration or connector is shown by its id.
        let connector = e.connector.or(e.connector_id);
        let target = match (connector, &e.doc_id) {
            (Some(c), Some(d)) => format!("{c} / {d}"),
            (Some(c), None) => c,
            _ => String::new(),
        };
        println!(
            "{:<24}  {:<20} {:>6} {:>10}  {:<44} {target}",
            e.time,
            e.integration.unwrap_or(e.integration_id),
            e.status,
            e.bytes,
            e.endpoint
        );
    }
    Ok(())
}
