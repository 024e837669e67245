//! Admin access to the settings page: the admin token, sessions (a cookie's secret and the
//! page's CSRF token) and one-time login links. Only SHA-256 hashes of the secrets are stored (a
//! copy of the data folder signs nobody in); a session or link is found by its hash, and the
//! token's hash is compared in constant time.

use crate::db::{scalar, sql};
use sha2::{Digest, Sha256};

use crate::keys::{hashes_equal, random_secret};
use crate::{Store, StoreError};

/// A signed-in admin session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdminSession {
    /// The token the page sends back with every change (`X-CSRF-Token`).
    pub csrf: String,
    /// When the session ends.
    pub expires_ms: i64,
}

/// A new session: the secret for the cookie (shown once) and the session.
#[derive(Clone, PartialEq, Eq)]
pub struct NewAdminSession {
    /// The cookie's value.
    pub secret: String,
    /// What the store keeps of it.
    pub session: AdminSession,
}

impl std::fmt::Debug for NewAdminSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NewAdminSession(redacted)")
    }
}

fn hash(secret: &str) -> Vec<u8> {
    Sha256::digest(secret.as_bytes()).to_vec()
}

impl Store {
    /// Starts a session lasting `ttl_ms`; also forgets sessions and links that have ended.
    pub async fn create_admin_session(
        &self,
        now_ms: i64,
        ttl_ms: i64,
    ) -> Result<NewAdminSession, StoreError> {
        let secret = random_secret()?;
        let session = AdminSession {
            csrf: random_secret()?,
            expires_ms: now_ms.saturating_add(ttl_ms),
        };
        let mut tx = self.write_tx().await?;
        sql("DELETE FROM admin_sessions WHERE expires_ms <= ?")
            .bind(now_ms)
            .execute(&mut *tx)
            .await?;
        sql("DELETE FROM admin_login_links WHERE expires_ms <= ?")
            .bind(now_ms)
            .execute(&mut *tx)
            .await?;
        sql(
            "INSERT INTO admin_sessions (secret_hash, csrf, created_ms, expires_ms)
             VALUES (?, ?, ?, ?)",
        )
        .bind(hash(&secret))
        .bind(&session.csrf)
        .bind(now_ms)
        .bind(session.expires_ms)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(NewAdminSession { secret, session })
    }

    /// The session whose cookie holds `secret`, if it exists and has not ended.
    pub async fn admin_session(
        &self,
        secret: &str,
        now_ms: i64,
    ) -> Result<Option<AdminSession>, StoreError> {
        let row = sql(
            "SELECT csrf, expires_ms FROM admin_sessions WHERE secret_hash = ? AND expires_ms > ?",
        )
        .bind(hash(secret))
        .bind(now_ms)
        .fetch_optional(&self.pool)
        .await?;
        row.map(|row| {
            Ok(AdminSession {
                csrf: row.try_get("csrf")?,
                expires_ms: row.try_get("expires_ms")?,
            })
        })
        .transpose()
    }

    /// Ends the session whose cookie holds `secret` (signing out).
    pub async fn end_admin_session(&self, secret: &str) -> Result<(), StoreError> {
        let _turn = self.write_turn().await;
        sql("DELETE FROM admin_sessions WHERE secret_hash = ?")
            .bind(hash(secret))
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// A new one-time login link code, valid for `ttl_ms`.
    pub async fn create_login_link(&self, now_ms: i64, ttl_ms: i64) -> Result<String, StoreError> {
        let code = random_secret()?;
        let _turn = self.write_turn().await;
        sql("INSERT INTO admin_login_links (code_hash, expires_ms) VALUES (?, ?)")
            .bind(hash(&code))
            .bind(now_ms.saturating_add(ttl_ms))
            .execute(&self.pool)
            .await?;
        Ok(code)
    }

    /// Makes a new admin token, replacing the old one (which stops working at once). Only its
    /// hash is kept: the token is returned to be shown once.
    pub async fn new_admin_token(&self, now_ms: i64) -> Result<String, StoreError> {
        let token = random_secret()?;
        let _turn = self.write_turn().await;
        sql(
            "INSERT INTO admin_token (id, token_hash, created_ms) VALUES (1, ?, ?)
             ON CONFLICT (id) DO UPDATE SET token_hash = excluded.token_hash,
                                            created_ms = excluded.created_ms",
        )
        .bind(hash(&token))
        .bind(now_ms)
        .execute(&self.pool)
        .await?;
        Ok(token)
    }

    /// Whether an admin token was made.
    pub async fn has_admin_token(&self) -> Result<bool, StoreError> {
        let found: Option<i64> = scalar("SELECT id FROM admin_token WHERE id = 1")
            .fetch_optional(&self.pool)
            .await?;
        Ok(found.is_some())
    }

    /// Whether `candidate` is the admin token (hashes compared in constant time).
    pub async fn is_admin_token(&self, candidate: &str) -> Result<bool, StoreError> {
        let stored: Option<Vec<u8>> = scalar("SELECT token_hash FROM admin_token WHERE id = 1")
            .fetch_optional(&self.pool)
            .await?;
        Ok(stored.is_some_and(|stored| hashes_equal(&stored, &hash(candidate.trim()))))
    }

    /// Uses up a login link code: true if it existed and had not expired. A code works once.
    pub async fn redeem_login_link(&self, code: &str, now_ms: i64) -> Result<bool, StoreError> {
        let _turn = self.write_turn().await;
        let row = sql("DELETE FROM admin_login_links WHERE code_hash = ? RETURNING expires_ms")
            .bind(hash(code))
            .fetch_optional(&self.pool)
            .await?;
        let expires: Option<i64> = row.map(|row| row.try_get("expires_ms")).transpose()?;
        Ok(expires.is_some_and(|expires| expires > now_ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = Store::open(&dir.path().join("q.db"), &dir.path().join("keys"))
            .await
            .expect("open");
        (dir, store)
    }

    #[tokio::test]
    async fn sessions_are_found_by_secret_until_they_end() -> Result<(), StoreError> {
        let (_dir, store) = store().await;
        let new = store.create_admin_session(1_000, 500).await?;
        assert_eq!(
            store.admin_session(&new.secret, 1_200).await?,
            Some(new.session.clone())
        );
        assert_eq!(store.admin_session(&new.secret, 1_500).await?, None);
        assert_eq!(store.admin_session("not-a-secret", 1_200).await?, None);
        let other = store.create_admin_session(2_000, 500).await?;
        assert_ne!(other.session.csrf, new.session.csrf);
        store.end_admin_session(&other.secret).await?;
        assert_eq!(store.admin_session(&other.secret, 2_100).await?, None);
        assert!(!format!("{other:?}").contains(&other.secret));
        Ok(())
    }

    #[tokio::test]
    async fn only_the_newest_admin_token_signs_in_and_only_its_hash_is_kept()
    -> Result<(), StoreError> {
        let (dir, store) = store().await;
        assert!(!store.has_admin_token().await?);
        assert!(!store.is_admin_token("").await?);
        let first = store.new_admin_token(1).await?;
        assert!(store.is_admin_token(&first).await?);
        assert!(store.is_admin_token(&format!(" {first}\n")).await?);
        let second = store.new_admin_token(2).await?;
        assert!(!store.is_admin_token(&first).await?, "replaced");
        assert!(store.is_admin_token(&second).await?);
        store.close().await;
        let db = std::fs::read(dir.path().join("q.db")).expect("database");
        let wal = std::fs::read(dir.path().join("q.db-wal")).unwrap_or_default();
        for bytes in [db, wal] {
            assert!(!bytes.windows(second.len()).any(|w| w == second.as_bytes()));
        }
        Ok(())
    }

    #[tokio::test]
    async fn login_links_work_once_and_expire() -> Result<(), StoreError> {
        let (_dir, store) = store().await;
        let code = store.create_login_link(1_000, 100).await?;
        assert!(!store.redeem_login_link("wrong", 1_010).await?);
        assert!(store.redeem_login_link(&code, 1_010).await?);
        assert!(!store.redeem_login_link(&code, 1_020).await?);
        let late = store.create_login_link(1_000, 100).await?;
        assert!(!store.redeem_login_link(&late, 1_100).await?);
        Ok(())
    }
}
