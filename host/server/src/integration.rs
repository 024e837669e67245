//! `quarry integration ...`: create integrations, show their keys once, manage sharing, quotas
//! and keys. A running server sees every change on the integration's next request.

use anyhow::{Context, bail};
use quarry_api::docs_for_integration;
use quarry_core::times::{parse_instant, rfc3339};
use quarry_store::{ApiKey, Integration, Quota, Sharing, Store, now_ms};
use serde_json::json;

use crate::admin::server_url;
use crate::cli::IntegrationCommand;
use crate::setup::Paths;

/// Runs an integration command.
pub async fn run(paths: &Paths, store: &Store, command: IntegrationCommand) -> anyhow::Result<()> {
    match command {
        IntegrationCommand::Docs { name, url } => {
            let integration = store.integration(&name).await?;
            let url = url.unwrap_or_else(|| server_url(paths));
            print!("{}", docs(store, &integration, &url, None).await?);
        }
        IntegrationCommand::Create {
            name,
            share,
            quota,
            expires,
            json,
            docs: with_docs,
        } => {
            let sharing = parse_sharing(store, &share).await?;
            let quota = match quota {
                Some(q) => parse_quota(&q)?,
                None => Quota::FREE,
            };
            let expires = expires.as_deref().map(parse_expiry).transpose()?;
            let (integration, key) = store
                .create_integration(&name, &sharing, quota, expires, now_ms())
                .await?;
            print_key(&integration, &key, json, "Created");
            if with_docs {
                let url = server_url(paths);
                println!();
                print!(
                    "{}",
                    docs(store, &integration, &url, Some(key.expose())).await?
                );
            }
        }
        IntegrationCommand::List { json } => {
            let list = store.integrations(now_ms()).await?;
            if json {
                let mut rows = Vec::with_capacity(list.len());
                for s in &list {
                    let i = &s.integration;
                    rows.push(json!({
                        "integration_id": i.id,
                        "name": i.name,
                        "created": rfc3339(i.created_ms),
                        "plan": i.plan,
                        "monthly_quota": quota_json(i.quota),
                        "requests_this_month": s.requests_this_month,
                        "last_used": s.last_used_ms.map(rfc3339),
                        "active_keys": s.active_keys,
                        "sharing": sharing_json(store, &i.sharing).await?,
                    }));
                }
                println!("{}", serde_json::Value::Array(rows));
            } else if list.is_empty() {
                println!(
                    "No integrations yet: `quarry integration create NAME --share all` makes one."
                );
            } else {
                println!(
                    "{:<24} {:<10} {:>10} {:>12}  {:<20}  SHARING",
                    "NAME", "PLAN", "QUOTA", "USED", "LAST USED"
                );
                for s in &list {
                    let i = &s.integration;
                    println!(
                        "{:<24} {:<10} {:>10} {:>12}  {:<20}  {}",
                        i.name,
                        i.plan,
                        quota_text(i.quota),
                        s.requests_this_month,
                        s.last_used_ms.map_or("never".to_owned(), rfc3339),
                        sharing_text(store, &i.sharing).await?
                            + if s.active_keys == 0 {
                                " (no active key)"
                            } else {
                                ""
                            },
                    );
                }
            }
        }
        IntegrationCommand::Rotate {
            name,
            expires,
            json,
        } => {
            let expires = expires.as_deref().map(parse_expiry).transpose()?;
            let key = store.rotate_key(&name, expires, now_ms()).await?;
            let integration = store.integration(&name).await?;
            print_key(&integration, &key, json, "Rotated the key of");
        }
        IntegrationCommand::Revoke { name } => {
            let revoked = store.revoke_keys(&name, now_ms()).await?;
            let integration = store.integration(&name).await?;
            println!(
                "Revoked {revoked} key(s) of {:?}: they stop working at once. `quarry integration rotate {:?}` makes a new one.",
                integration.name, integration.name
            );
        }
        IntegrationCommand::Share { name, share } => {
            let sharing = parse_sharing(store, &share).await?;
            store.set_sharing(&name, &sharing).await?;
            let integration = store.integration(&name).await?;
            println!(
                "{:?} now sees: {}",
                integration.name,
                sharing_text(store, &integration.sharing).await?
            );
        }
        IntegrationCommand::Quota { name, quota } => {
            let quota = parse_quota(&quota)?;
            store.set_quota(&name, quota).await?;
            let integration = store.integration(&name).await?;
            println!(
                "{:?}: {} requests per month ({} plan)",
                integration.name,
                quota_text(quota),
                integration.plan
            );
        }
    }
    Ok(())
}

/// The integration's generated API documentation.
async fn docs(
    store: &Store,
    integration: &Integration,
    base_url: &str,
    key: Option<&str>,
) -> anyhow::Result<String> {
    let connectors = store.connectors().await?;
    Ok(docs_for_integration(
        base_url,
        integration,
        &connectors,
        key,
    ))
}

fn print_key(integration: &Integration, key: &ApiKey, json: bool, verb: &str) {
    if json {
        println!(
            "{}",
            json!({
                "integration_id": integration.id,
                "name": integration.name,
                "api_key": key.expose(),
            })
        );
        return;
    }
    println!(
        "{verb} integration {:?} ({}).",
        integration.name, integration.id
    );
    println!();
    println!("API key (shown only now; store it somewhere safe):");
    println!("  {}", key.expose());
    println!();
    println!(
        "Quota: {} requests per month ({} plan).",
        quota_text(integration.quota),
        integration.plan
    );
    println!("Use it as: Authorization: Bearer <API_KEY>");
}

/// `all`, `none`, or connector names separated by commas.
async fn parse_sharing(store: &Store, spec: &str) -> anyhow::Result<Sharing> {
    match spec.trim() {
        "all" => Ok(Sharing::All),
        "none" => Ok(Sharing::Declined),
        "" => bail!("--share must be all, none, or connector names separated by commas"),
        names => {
            let names: Vec<String> = names
                .split(',')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_owned)
                .collect();
            Ok(store.sharing_of(&names).await?)
        }
    }
}

/// A number of requests, or `unlimited`.
fn parse_quota(spec: &str) -> anyhow::Result<Quota> {
    let spec = spec.trim();
    if spec.eq_ignore_ascii_case("unlimited") {
        return Ok(Quota::Unlimited);
    }
    spec.parse::<u64>()
        .map(Quota::Limited)
        .with_context(|| format!("the quota must be a whole number or unlimited, got {spec:?}"))
}

/// A date (midnight UTC) or RFC 3339 time in the future.
fn parse_expiry(spec: &str) -> anyhow::Result<i64> {
    let ms = parse_instant(spec.trim()).with_context(|| {
        format!("--expires must be a date (2027-01-31) or an RFC 3339 time, got {spec:?}")
    })?;
    if ms <= now_ms() {
        bail!("--expires must be in the future, got {spec}");
    }
    Ok(ms)
}

fn quota_text(quota: Quota) -> String {
    match quota {
        Quota::Limited(n) => n.to_string(),
        Quota::Unlimited => "unlimited".to_owned(),
    }
}

fn quota_json(quota: Quota) -> serde_json::Value {
    match quota {
        Quota::Limited(n) => json!(n),
        Quota::Unlimited => json!("unlimited"),
    }
}

/// The names of the selected connectors that still exist.
async fn selected_names(
    store: &Store,
    ids: &[quarry_core::ConnectorId],
) -> anyhow::Result<Vec<String>> {
    Ok(store
        .connectors()
        .await?
        .into_iter()
        .filter(|c| ids.contains(&c.id))
        .map(|c| c.name)
        .collect())
}

/// `"all"`, `"none"` or the list of names.
async fn sharing_json(store: &Store, sharing: &Sharing) -> anyhow::Result<serde_json::Value> {
    Ok(match sharing {
        Sharing::All => json!("all"),
        Sharing::Declined => json!("none"),
        Sharing::Selected(ids) => json!(selected_names(store, ids).await?),
    })
}

async fn sharing_text(store: &Store, sharing: &Sharing) -> anyhow::Result<String> {
    Ok(match sharing {
        Sharing::All => "all connectors".to_owned(),
        Sharing::Declined => "nothing (sharing declined)".to_owned(),
        Sharing::Selected(ids) => {
            let names = selected_names(store, ids).await?;
            if names.is_empty() {
                "no connector (the selected ones were removed)".to_owned()
            } else {
                names.join(", ")
            }
        }
    })
}
