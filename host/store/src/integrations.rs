//! Integrations: who may use the API, with which key, under which quota, seeing which connectors.

use crate::db::{Conn, Row, scalar, sql};
use quarry_core::ConnectorId;

use crate::keys::{self, ApiKey};
use crate::{Store, StoreError, UsageMonth};

/// Requests per month on the free plan.
pub const FREE_PLAN_REQUESTS: u64 = 10_000;
/// Longest integration or connector name, in characters.
pub(crate) const MAX_NAME_CHARS: usize = 64;

/// The monthly request limit of an integration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quota {
    /// At most this many requests per UTC month.
    Limited(u64),
    /// No limit.
    Unlimited,
}

impl Quota {
    /// The free plan's quota.
    pub const FREE: Quota = Quota::Limited(FREE_PLAN_REQUESTS);

    fn plan(self) -> &'static str {
        match self {
            Quota::Limited(FREE_PLAN_REQUESTS) => "free",
            Quota::Limited(_) => "custom",
            Quota::Unlimited => "unlimited",
        }
    }
}

/// What the user answered to the data sharing prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sharing {
    /// Every connector, including ones added later.
    All,
    /// Only these connectors.
    Selected(Vec<ConnectorId>),
    /// Nothing: every data endpoint answers DATA_SHARING_DECLINED.
    Declined,
}

impl Sharing {
    fn column(&self) -> &'static str {
        match self {
            Sharing::All => "all",
            Sharing::Selected(_) => "selected",
            Sharing::Declined => "declined",
        }
    }

    /// True if this answer lets the integration see `connector`.
    pub fn allows(&self, connector: &ConnectorId) -> bool {
        match self {
            Sharing::All => true,
            Sharing::Selected(ids) => ids.contains(connector),
            Sharing::Declined => false,
        }
    }
}

/// An integration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Integration {
    /// `in_` and random characters.
    pub id: String,
    /// Unique name, without regard to case.
    pub name: String,
    /// When it was created.
    pub created_ms: i64,
    /// `free`, `custom` or `unlimited`.
    pub plan: String,
    /// Its monthly request limit.
    pub quota: Quota,
    /// What it may see.
    pub sharing: Sharing,
}

/// An integration with its usage, for lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntegrationSummary {
    /// The integration.
    pub integration: Integration,
    /// Requests counted this UTC month.
    pub requests_this_month: u64,
    /// When one of its keys was last used.
    pub last_used_ms: Option<i64>,
    /// Keys that are neither revoked nor expired.
    pub active_keys: u32,
}

impl Store {
    /// Creates an integration with its first key, which is returned to be shown once.
    pub async fn create_integration(
        &self,
        name: &str,
        sharing: &Sharing,
        quota: Quota,
        key_expires_ms: Option<i64>,
        now_ms: i64,
    ) -> Result<(Integration, ApiKey), StoreError> {
        let name = check_name(name, "integration")?;
        let id = keys::random_id("in_")?;
        let mut tx = self.write_tx().await?;
        let inserted = sql(
            "INSERT INTO integrations (id, name, created_ms, plan, monthly_quota, sharing)
             VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(&id)
        .bind(&name)
        .bind(now_ms)
        .bind(quota.plan())
        .bind(quota_column(quota))
        .bind(sharing.column())
        .execute(&mut *tx)
        .await;
        if let Err(e) = inserted {
            return Err(unique_violation(e, "integration", &name));
        }
        write_selection(&mut tx, &id, sharing).await?;
        let key = insert_key(&mut tx, &id, key_expires_ms, now_ms).await?;
        tx.commit().await?;
        let integration = Integration {
            id,
            name,
            created_ms: now_ms,
            plan: quota.plan().to_owned(),
            quota,
            sharing: sharing.clone(),
        };
        Ok((integration, key))
    }

    /// The integration named `name` (without regard to case).
    pub async fn integration(&self, name: &str) -> Result<Integration, StoreError> {
        let row = sql("SELECT * FROM integrations WHERE lower(name) = lower(?)")
            .bind(name.trim())
            .fetch_optional(&self.pool)
            .await?;
        match row {
            Some(row) => self.integration_from_row(&row).await,
            None => Err(StoreError::NotFound {
                what: "integration",
                name: name.to_owned(),
                known: self.integration_names().await?,
            }),
        }
    }

    /// Every integration with its usage this month, by name.
    pub async fn integrations(&self, now_ms: i64) -> Result<Vec<IntegrationSummary>, StoreError> {
        let month = UsageMonth::at(now_ms);
        let rows = sql("SELECT i.*,
                    (SELECT requests FROM usage u WHERE u.integration_id = i.id AND u.month = ?)
                        AS requests,
                    (SELECT max(last_used_ms) FROM api_keys k WHERE k.integration_id = i.id)
                        AS last_used_ms,
                    (SELECT count(*) FROM api_keys k WHERE k.integration_id = i.id
                        AND k.revoked_ms IS NULL AND (k.expires_ms IS NULL OR k.expires_ms > ?))
                        AS active_keys
             FROM integrations i ORDER BY lower(i.name), i.name")
        .bind(&month.key)
        .bind(now_ms)
        .fetch_all(&self.pool)
        .await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            out.push(IntegrationSummary {
                integration: self.integration_from_row(&row).await?,
                requests_this_month: row
                    .try_get::<Option<i64>, _>("requests")?
                    .map_or(0, |n| u64::try_from(n).unwrap_or(0)),
                last_used_ms: row.try_get("last_used_ms")?,
                active_keys: u32::try_from(row.try_get::<i64, _>("active_keys")?).unwrap_or(0),
            });
        }
        Ok(out)
    }

    /// Changes what an integration may see; takes effect on its next request.
    pub async fn set_sharing(&self, name: &str, sharing: &Sharing) -> Result<(), StoreError> {
        let integration = self.integration(name).await?;
        let mut tx = self.write_tx().await?;
        sql("UPDATE integrations SET sharing = ? WHERE id = ?")
            .bind(sharing.column())
            .bind(&integration.id)
            .execute(&mut *tx)
            .await?;
        write_selection(&mut tx, &integration.id, sharing).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Changes an integration's monthly quota; takes effect on its next request.
    pub async fn set_quota(&self, name: &str, quota: Quota) -> Result<(), StoreError> {
        let integration = self.integration(name).await?;
        sql("UPDATE integrations SET plan = ?, monthly_quota = ? WHERE id = ?")
            .bind(quota.plan())
            .bind(quota_column(quota))
            .bind(&integration.id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Revokes every key of the integration and makes a new one, returned to be shown once.
    pub async fn rotate_key(
        &self,
        name: &str,
        key_expires_ms: Option<i64>,
        now_ms: i64,
    ) -> Result<ApiKey, StoreError> {
        let integration = self.integration(name).await?;
        let mut tx = self.write_tx().await?;
        revoke_all(&mut tx, &integration.id, now_ms).await?;
        let key = insert_key(&mut tx, &integration.id, key_expires_ms, now_ms).await?;
        tx.commit().await?;
        Ok(key)
    }

    /// Revokes every key of the integration; returns how many were active.
    pub async fn revoke_keys(&self, name: &str, now_ms: i64) -> Result<u64, StoreError> {
        let integration = self.integration(name).await?;
        let mut tx = self.write_tx().await?;
        let revoked = revoke_all(&mut tx, &integration.id, now_ms).await?;
        tx.commit().await?;
        Ok(revoked)
    }

    /// The integration a key belongs to, if the key is well-formed, known, not revoked and not
    /// expired. The stored hash is compared in constant time. Never says which check failed.
    pub async fn authenticate(
        &self,
        key: &str,
        now_ms: i64,
    ) -> Result<Option<(Integration, String)>, StoreError> {
        let Some(parts) = keys::parse(key) else {
            return Ok(None);
        };
        let row = sql("SELECT k.hash, k.expires_ms, k.revoked_ms, i.*
             FROM api_keys k JOIN integrations i ON i.id = k.integration_id
             WHERE k.lookup = ?")
        .bind(&parts.lookup)
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else {
            // Compare anyway, so an unknown key takes as long as a wrong one.
            keys::hashes_equal(&parts.hash, &[0u8; 32]);
            return Ok(None);
        };
        let stored: Vec<u8> = row.try_get("hash")?;
        let matches = keys::hashes_equal(&parts.hash, &stored);
        let revoked: Option<i64> = row.try_get("revoked_ms")?;
        let expires: Option<i64> = row.try_get("expires_ms")?;
        if !matches || revoked.is_some() || expires.is_some_and(|e| e <= now_ms) {
            return Ok(None);
        }
        Ok(Some((self.integration_from_row(&row).await?, parts.lookup)))
    }

    /// Records when keys were last used: (lookup, time) pairs.
    pub async fn touch_keys(&self, uses: &[(String, i64)]) -> Result<(), StoreError> {
        let mut tx = self.write_tx().await?;
        for (lookup, time_ms) in uses {
            sql("UPDATE api_keys
                    SET last_used_ms = CASE WHEN last_used_ms > ?1 THEN last_used_ms ELSE ?1 END
                  WHERE lookup = ?2")
            .bind(time_ms)
            .bind(lookup)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The sharing answer for a list of connector names (`Selected`); an unknown name is an
    /// error that lists the known ones.
    pub async fn sharing_of(&self, names: &[String]) -> Result<Sharing, StoreError> {
        let mut ids = Vec::with_capacity(names.len());
        for name in names {
            ids.push(self.connector_by_name(name).await?.id);
        }
        ids.sort();
        ids.dedup();
        Ok(Sharing::Selected(ids))
    }

    async fn integration_names(&self) -> Result<Vec<String>, StoreError> {
        Ok(
            scalar("SELECT name FROM integrations ORDER BY lower(name), name")
                .fetch_all(&self.pool)
                .await?,
        )
    }

    async fn integration_from_row(&self, row: &Row) -> Result<Integration, StoreError> {
        let id: String = row.try_get("id")?;
        let quota = match row.try_get::<Option<i64>, _>("monthly_quota")? {
            Some(n) => Quota::Limited(u64::try_from(n).unwrap_or(0)),
            None => Quota::Unlimited,
        };
        let sharing = match row.try_get::<String, _>("sharing")?.as_str() {
            "all" => Sharing::All,
            "selected" => {
                let ids: Vec<String> = scalar(
                    "SELECT s.connector_id FROM integration_connectors s
                     JOIN connectors c ON c.id = s.connector_id
                     WHERE s.integration_id = ? AND c.removed_ms IS NULL
                     ORDER BY s.connector_id",
                )
                .bind(&id)
                .fetch_all(&self.pool)
                .await?;
                Sharing::Selected(
                    ids.into_iter()
                        .filter_map(|id| ConnectorId::parse(id).ok())
                        .collect(),
                )
            }
            _ => Sharing::Declined,
        };
        Ok(Integration {
            id,
            name: row.try_get("name")?,
            created_ms: row.try_get("created_ms")?,
            plan: row.try_get("plan")?,
            quota,
            sharing,
        })
    }
}

fn quota_column(quota: Quota) -> Option<i64> {
    match quota {
        Quota::Limited(n) => Some(i64::try_from(n).unwrap_or(i64::MAX)),
        Quota::Unlimited => None,
    }
}

async fn write_selection(
    conn: &mut Conn,
    integration_id: &str,
    sharing: &Sharing,
) -> Result<(), StoreError> {
    sql("DELETE FROM integration_connectors WHERE integration_id = ?")
        .bind(integration_id)
        .execute(&mut *conn)
        .await?;
    if let Sharing::Selected(ids) = sharing {
        for id in ids {
            sql(
                "INSERT INTO integration_connectors (integration_id, connector_id)
                 VALUES (?, ?) ON CONFLICT DO NOTHING",
            )
            .bind(integration_id)
            .bind(id.as_str())
            .execute(&mut *conn)
            .await?;
        }
    }
    Ok(())
}

async fn insert_key(
    conn: &mut Conn,
    integration_id: &str,
    expires_ms: Option<i64>,
    now_ms: i64,
) -> Result<ApiKey, StoreError> {
    let (key, parts) = keys::generate()?;
    sql(
        "INSERT INTO api_keys (lookup, integration_id, hash, created_ms, expires_ms)
         VALUES (?, ?, ?, ?, ?)",
    )
    .bind(&parts.lookup)
    .bind(integration_id)
    .bind(parts.hash.as_slice())
    .bind(now_ms)
    .bind(expires_ms)
    .execute(&mut *conn)
    .await?;
    Ok(key)
}

async fn revoke_all(conn: &mut Conn, integration_id: &str, now_ms: i64) -> Result<u64, StoreError> {
    let done =
        sql("UPDATE api_keys SET revoked_ms = ? WHERE integration_id = ? AND revoked_ms IS NULL")
            .bind(now_ms)
            .bind(integration_id)
            .execute(&mut *conn)
            .await?;
    Ok(done)
}

/// A name, trimmed, checked: 1 to 64 characters, no control characters.
pub(crate) fn check_name(name: &str, what: &str) -> Result<String, StoreError> {
    let name = name.trim();
    let chars = name.chars().count();
    if chars == 0 || chars > MAX_NAME_CHARS || name.chars().any(char::is_control) {
        return Err(StoreError::Invalid(format!(
            "{what} names must be 1 to {MAX_NAME_CHARS} characters without control characters, got {name:?}"
        )));
    }
    Ok(name.to_owned())
}

/// Turns a unique-constraint failure into `NameTaken`.
pub(crate) fn unique_violation(e: sqlx::Error, what: &'static str, name: &str) -> StoreError {
    match &e {
        sqlx::Error::Database(db) if db.is_unique_violation() => StoreError::NameTaken {
            what,
            name: name.to_owned(),
        },
        _ => StoreError::Sql(e),
    }
}
