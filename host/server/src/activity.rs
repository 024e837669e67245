//! `quarry activity`: which integration read what, when, and how much (the audit log).

use std::collections::HashMap;

use anyhow::Context;
use quarry_core::times::{parse_instant, rfc3339};
use quarry_store::{AuditFilter, Store, now_ms};
use serde_json::json;

use crate::cli::ActivityArgs;

/// Prints the audit log, newest first.
pub async fn run(store: &Store, args: &ActivityArgs) -> anyhow::Result<()> {
    let integrations: HashMap<String, String> = store
        .integrations(now_ms())
        .await?
        .into_iter()
        .map(|s| (s.integration.id, s.integration.name))
        .collect();
    let connectors: HashMap<String, String> = store
        .connectors()
        .await?
        .into_iter()
        .map(|c| (c.id.to_string(), c.name))
        .collect();
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
    let name = |map: &HashMap<String, String>, id: &str| {
        map.get(id).cloned().unwrap_or_else(|| id.to_owned())
    };
    if args.json {
        let rows: Vec<_> = entries
            .iter()
            .map(|e| {
                json!({
                    "time": rfc3339(e.time_ms),
                    "request_id": e.request_id,
                    "integration": name(&integrations, &e.integration_id),
                    "endpoint": e.endpoint,
                    "connector": e.connector_id.as_deref().map(|c| name(&connectors, c)),
                    "doc_id": e.doc_id,
                    "bytes": e.bytes,
                    "status": e.status,
                })
            })
            .collect();
        println!("{}", serde_json::Value::Array(rows));
        return Ok(());
    }
    if entries.is_empty() {
        println!("No activity.");
        return Ok(());
    }
    println!(
        "{:<24}  {:<20} {:>6} {:>10}  {:<44} CONNECTOR / DOCUMENT",
        "TIME", "INTEGRATION", "STATUS", "BYTES", "ENDPOINT"
    );
    for e in &entries {
        let target = match (&e.connector_id, &e.doc_id) {
            (Some(c), Some(d)) => format!("{} / {d}", name(&connectors, c)),
            (Some(c), None) => name(&connectors, c),
            _ => String::new(),
        };
        println!(
            "{:<24}  {:<20} {:>6} {:>10}  {:<44} {target}",
            rfc3339(e.time_ms),
            name(&integrations, &e.integration_id),
            e.status,
            e.bytes,
            e.endpoint
        );
    }
    Ok(())
}
