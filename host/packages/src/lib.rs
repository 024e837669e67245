//! Plugins as one file, from anywhere, safely: the packed format ([`Pack`]), where packed
//! plugins come from, how they are verified, and the lock of what was installed.

mod address;
mod error;
pub mod fetch;
pub mod index;
pub mod lock;
pub mod oci;
pub mod pack;
pub mod signature;
pub mod source;
mod state;
pub mod trust;

pub use address::check_web_url;
pub use error::PackageError;
pub use fetch::Fetcher;
pub use index::{INDEXES_FILE, Index, Indexes};
pub use lock::{LOCK_FILE, Lock, Locked, Verification};
pub use pack::{PACK_EXTENSION, Pack, sha256_digest};
pub use reqwest::Url;
pub use signature::{PublicKey, SecretKey};
pub use source::Source;
pub use trust::{TRUST_FILE, Trusted};
