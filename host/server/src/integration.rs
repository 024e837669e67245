//! `quarry integration ...`: create integrations, show their keys once, manage sharing, quotas
//! and keys. A running server sees every change on the integration's next request.

use anyhow::{Context, bail};
use quarry_api::views::{IntegrationSummaryView, IntegrationView, KeyAnswer};
use quarry_api::{docs_for_integration, mcp_http_config};
use quarry_core::times::{parse_instant, rfc3339};
use quarry_store::{ApiKey, Integration, Quota, Sharing, Store, now_ms};

use crate::admin::server_url;
use crate::cli::IntegrationCommand;
use crate::mcp::stdio_command;
use crate::setup::Paths;

/// Runs an integration command.
pub async fn run(paths: &Paths, store: &Store, command: IntegrationCommand) -> anyhow::Result<()> {
    match command {
        IntegrationCommand::Docs { name, url } => {
            let integration = store.integration(&name).await?;
            let url = url.unwrap_or_else(|| server_url(paths));
            print!("{}", docs(paths, store, &integration, &url, None).await?);
            Ok(())
        }
        IntegrationCommand::Create {
            name,
            share,
            quota,
            expires,
            json,
            docs,
        } => create(paths, store, &name, (&share, quota, expires), json, docs).await,
        IntegrationCommand::List { json } => list(store, json).await,
        IntegrationCommand::Rotate {
            name,
            expires,
            json,
        } => rotate(paths, store, &name, expires, json).await,
        IntegrationCommand::Revoke { name } => revoke(store, &name).await,
        IntegrationCommand::Share { name, share } => share_with(store, &name, &share).await,
        IntegrationCommand::Quota { name, quota } => set_quota(store, &name, &quota).await,
    }
}

/// `quarry integration create NAME --share ...`.
async fn create(
    paths: &Paths,
    store: &Store,
    name: &str,
    (share, quota, expires): (&str, Option<String>, Option<String>),
    json: bool,
    with_docs: bool,
) -> anyhow::Result<()> {
    let sharing = parse_sharing(store, share).await?;
    let quota = match quota {
        Some(q) => parse_quota(&q)?,
        None => Quota::FREE,
    };
    let expires = expires.as_deref().map(parse_expiry).transpose()?;
    let (integration, key) = store
        .create_integration(name, &sharing, quota, expires, now_ms())
        .await?;
    print_key(paths, store, &integration, &key, json, "Created").await?;
    if with_docs {
        let url = server_url(paths);
        println!();
        print!(
            "{}",
            docs(paths, store, &integration, &url, Some(key.expose())).await?
        );
    }
    Ok(())
}

/// `quarry integration list`.
async fn list(store: &Store, json: bool) -> anyhow::Result<()> {
    let list = store.integrations(now_ms()).await?;
    if json {
        let connectors = store.connectors().await?;
        let rows: Vec<IntegrationSummaryView> = list
            .iter()
            .map(|s| IntegrationSummaryView::new(s, &connectors))
            .collect();
        println!("{}", serde_json::to_string(&rows)?);
        return Ok(());
    }
    if list.is_empty() {
        println!("No integrations yet: `quarry integration create NAME --share all` makes one.");
        return Ok(());
    }
    println!(
        "{:<24} {:<10} {:>10} {:>12}  {:<20}  SHARING",
        "NAME", "PLAN", "QUOTA", "USED", "LAST USED"
    );
    for s in &list {
        let i = &s.integration;
        let no_key = if s.active_keys == 0 {
            " (no active key)"
        } else {
            ""
        };
        println!(
            "{:<24} {:<10} {:>10} {:>12}  {:<20}  {}{no_key}",
            i.name,
            i.plan,
            quota_text(i.quota),
            s.requests_this_month,
            s.last_used_ms.map_or("never".to_owned(), rfc3339),
            sharing_text(store, &i.sharing).await?,
        );
    }
    Ok(())
}

/// `quarry integration rotate NAME`.
async fn rotate(
    paths: &Paths,
    store: &Store,
    name: &str,
    expires: Option<String>,
    json: bool,
) -> anyhow::Result<()> {
    let expires = expires.as_deref().map(parse_expiry).transpose()?;
    let key = store.rotate_key(name, expires, now_ms()).await?;
    let integration = store.integration(name).await?;
    print_key(paths, store, &integration, &key, json, "Rotated the key of").await
}

/// `quarry integration revoke NAME`.
async fn revoke(store: &Store, name: &str) -> anyhow::Result<()> {
    let revoked = store.revoke_keys(name, now_ms()).await?;
    let integration = store.integration(name).await?;
    println!(
        "Revoked {revoked} key(s) of {:?}: they stop working at once. `quarry integration rotate {:?}` makes a new one.",
        integration.name, integration.name
    );
    Ok(())
}

/// `quarry integration share NAME SHARE`.
async fn share_with(store: &Store, name: &str, share: &str) -> anyhow::Result<()> {
    let sharing = parse_sharing(store, share).await?;
    store.set_sharing(name, &sharing).await?;
    let integration = store.integration(name).await?;
    println!(
        "{:?} now sees: {}",
        integration.name,
        sharing_text(store, &integration.sharing).await?
    );
    Ok(())
}

/// `quarry integration quota NAME QUOTA`.
async fn set_quota(store: &Store, name: &str, quota: &str) -> anyhow::Result<()> {
    let quota = parse_quota(quota)?;
    store.set_quota(name, quota).await?;
    let integration = store.integration(name).await?;
    println!(
        "{:?}: {} requests per month ({} plan)",
        integration.name,
        quota_text(quota),
        integration.plan
    );
    Ok(())
}

/// The integration's generated API documentation.
async fn docs(
    paths: &Paths,
    store: &Store,
    integration: &Integration,
    base_url: &str,
    key: Option<&str>,
) -> anyhow::Result<String> {
    let connectors = store.connectors().await?;
    Ok(docs_for_integration(
        base_url,
        &stdio_command(paths),
        integration,
        &connectors,
        key,
    ))
}

/// Prints a new key: as the settings page's answer with `--json` (the integration, the key and
/// its documentation), else for a person.
async fn print_key(
    paths: &Paths,
    store: &Store,
    integration: &Integration,
    key: &ApiKey,
    json: bool,
    verb: &str,
) -> anyhow::Result<()> {
    if json {
        let connectors = store.connectors().await?;
        let url = server_url(paths);
        let answer = KeyAnswer {
            integration: IntegrationView::new(integration, &connectors),
            api_key: key.expose().to_owned(),
            docs: docs_for_integration(
                &url,
                &stdio_command(paths),
                integration,
                &connectors,
                Some(key.expose()),
            ),
            mcp_config: mcp_http_config(&url, key.expose()),
        };
        println!("{}", serde_json::to_string(&answer)?);
        return Ok(());
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
    Ok(())
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
