//! Packed plugins in OCI registries, in the CNCF layout for WebAssembly: the manifest's one
//! layer is the component (`application/wasm`), so `wkg oci pull` and ORAS-style tools get it;
//! its config (`application/vnd.wasm.config.v0+json`) has the layout's fields and, under
//! `dev.quarry.plugin`, the packed file's other entries (manifest, README, licence, signature).
//! Pulling puts the packed file together again, byte for byte, so its sha256 is that of the
//! file pushed. The config's time is fixed: the same packed file pushes to the same digest.

mod client;
mod reference;

use base64::Engine as _;
use reqwest::{Method, StatusCode};
use serde::{Deserialize, Serialize};

pub use client::Credentials;
pub use reference::{Reference, is_sha256_digest};

use crate::error::PackageError;
use crate::fetch::Fetcher;
use crate::pack::{Entry, Pack, sha256_digest};
use client::{Registry, content_type, registry_error};

/// The manifest's media type (OCI image manifest).
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// The config's media type in the CNCF WebAssembly layout.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// The component layer's media type.
pub const WASM_MEDIA_TYPE: &str = "application/wasm";
/// The media type of an index's one layer (`index.rs`).
pub const INDEX_MEDIA_TYPE: &str = "application/vnd.quarry.plugin-index.v1+json";
/// The empty config of an artifact that needs none (OCI 1.1).
const EMPTY_MEDIA_TYPE: &str = "application/vnd.oci.empty.v1+json";
/// The largest config read: the manifest, README, licence and signature in base64.
const MAX_CONFIG_BYTES: u64 = 4 << 20;
/// The largest manifest read.
const MAX_MANIFEST_BYTES: u64 = 1 << 20;

/// An OCI descriptor.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Descriptor {
    media_type: String,
    digest: String,
    size: u64,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    annotations: std::collections::BTreeMap<String, String>,
}

/// An OCI image manifest.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Manifest {
    schema_version: u32,
    #[serde(default)]
    media_type: Option<String>,
    config: Descriptor,
    layers: Vec<Descriptor>,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    annotations: std::collections::BTreeMap<String, String>,
}

/// A packed file entry other than the component, in the config.
#[derive(Debug, Serialize, Deserialize)]
struct ConfigEntry {
    name: String,
    base64: String,
}

/// The config: the CNCF layout's fields and Quarry's.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Config {
    created: String,
    architecture: String,
    os: String,
    layer_digests: Vec<String>,
    #[serde(rename = "dev.quarry.plugin")]
    quarry: Vec<ConfigEntry>,
}

/// What a push left in the registry.
pub struct Pushed {
    /// The manifest's digest, `sha256:...`: `oci://registry/name@<digest>` pins it.
    pub digest: String,
    /// Where it is, by that digest.
    pub pinned: Reference,
}

/// Pushes `pack` to `reference` (whose last part must be the plugin's id).
pub async fn push(
    fetcher: Fetcher,
    pack: &Pack,
    reference: &Reference,
) -> Result<Pushed, PackageError> {
    check_name(pack, reference)?;
    let (manifest, blobs) = artifact(pack)?;
    put_artifact(fetcher, reference, &manifest, &blobs).await
}

/// Pushes an index (`index.rs`'s JSON) to `reference`: an artifact whose one layer is the
/// index, as `oras push REF index.json:application/vnd.quarry.plugin-index.v1+json` makes.
pub async fn push_index(
    fetcher: Fetcher,
    index: &[u8],
    reference: &Reference,
) -> Result<Pushed, PackageError> {
    let config = b"{}".to_vec();
    let manifest = Manifest {
        schema_version: 2,
        media_type: Some(MANIFEST_MEDIA_TYPE.into()),
        config: Descriptor {
            media_type: EMPTY_MEDIA_TYPE.into(),
            digest: sha256_digest(&config),
            size: config.len() as u64,
            annotations: Default::default(),
        },
        layers: vec![Descriptor {
            media_type: INDEX_MEDIA_TYPE.into(),
            digest: sha256_digest(index),
            size: index.len() as u64,
            annotations: [(
                "org.opencontainers.image.title".to_owned(),
                "index.json".to_owned(),
            )]
            .into(),
        }],
        annotations: Default::default(),
    };
    let manifest =
        serde_json::to_vec(&manifest).map_err(|e| PackageError::Plugin(e.to_string()))?;
    let blobs = [Blob::new(config), Blob::new(index.to_vec())];
    put_artifact(fetcher, reference, &manifest, &blobs).await
}

/// The index at `reference`: its artifact's layer of the index's media type, at most `max`
/// bytes.
pub async fn pull_index(
    fetcher: Fetcher,
    reference: &Reference,
    max: u64,
) -> Result<Vec<u8>, PackageError> {
    let mut registry = Registry::new(fetcher, reference)?;
    let (manifest, url, _) = fetch_manifest(&mut registry, reference).await?;
    let layer = manifest
        .layers
        .iter()
        .find(|l| l.media_type == INDEX_MEDIA_TYPE)
        .ok_or_else(|| PackageError::Fetch {
            url: url.to_string(),
            message: format!(
                "not a plugin index: no layer of {INDEX_MEDIA_TYPE}; push one with `quarry plugin index push`"
            ),
        })?;
    fetch_blob(&mut registry, layer, max).await
}

/// Uploads `blobs`, then `manifest` under `reference`'s tag.
async fn put_artifact(
    fetcher: Fetcher,
    reference: &Reference,
    manifest: &[u8],
    blobs: &[Blob],
) -> Result<Pushed, PackageError> {
    if reference.digest.is_some() {
        return Err(PackageError::Refused(format!(
            "{reference}: push to a tag (oci://registry/name:tag); the digest is the registry's to give"
        )));
    }
    let mut registry = Registry::new(fetcher, reference)?;
    for blob in blobs {
        upload_blob(&mut registry, blob).await?;
    }
    let url = registry.url(&format!("manifests/{}", reference.reference()))?;
    let answer = registry
        .send(
            Method::PUT,
            &url,
            &[("Content-Type", MANIFEST_MEDIA_TYPE)],
            Some(manifest),
            MAX_MANIFEST_BYTES,
        )
        .await?;
    if !answer.status.is_success() {
        return Err(registry_error(&url, &answer, "storing the manifest"));
    }
    let digest = sha256_digest(manifest);
    Ok(Pushed {
        pinned: reference.pinned(&digest),
        digest,
    })
}

/// The manifest at `reference`, its address and digest; a reference by digest must match it.
async fn fetch_manifest(
    registry: &mut Registry,
    reference: &Reference,
) -> Result<(Manifest, reqwest::Url, String), PackageError> {
    let url = registry.url(&format!("manifests/{}", reference.reference()))?;
    let answer = registry
        .send(
            Method::GET,
            &url,
            &[("Accept", MANIFEST_MEDIA_TYPE)],
            None,
            MAX_MANIFEST_BYTES,
        )
        .await?;
    if !answer.status.is_success() {
        return Err(registry_error(&url, &answer, "reading the manifest"));
    }
    let digest = sha256_digest(&answer.body);
    if let Some(pinned) = &reference.digest
        && *pinned != digest
    {
        return Err(PackageError::DigestMismatch {
            expected: pinned.clone(),
            actual: digest,
        });
    }
    let manifest = serde_json::from_slice(&answer.body).map_err(|e| PackageError::Fetch {
        url: url.to_string(),
        message: format!(
            "not an OCI image manifest ({e}; it is {})",
            content_type(&answer)
        ),
    })?;
    Ok((manifest, url, digest))
}

/// Pulls the packed plugin at `reference`: the packed file as it was pushed, and the manifest's
/// digest. A reference by digest must match it; every blob must match its descriptor.
pub async fn pull(
    fetcher: Fetcher,
    reference: &Reference,
) -> Result<(Vec<u8>, String), PackageError> {
    let mut registry = Registry::new(fetcher, reference)?;
    let (manifest, url, digest) = fetch_manifest(&mut registry, reference).await?;
    let not_ours = |why: &str| PackageError::Fetch {
        url: url.to_string(),
        message: format!("not a packed Quarry plugin ({why}); push one with `quarry plugin push`"),
    };
    if manifest.config.media_type != CONFIG_MEDIA_TYPE {
        return Err(not_ours(&format!(
            "its config is {}",
            manifest.config.media_type
        )));
    }
    let [layer] = manifest.layers.as_slice() else {
        return Err(not_ours("it has more or less than one layer"));
    };
    if layer.media_type != WASM_MEDIA_TYPE {
        return Err(not_ours(&format!("its layer is {}", layer.media_type)));
    }
    let config = fetch_blob(&mut registry, &manifest.config, MAX_CONFIG_BYTES).await?;
    let config: Config = serde_json::from_slice(&config)
        .map_err(|e| not_ours(&format!("its config has no plugin entries: {e}")))?;
    let component = fetch_blob(&mut registry, layer, quarry_runtime::MAX_COMPONENT_BYTES).await?;
    let packed = reassemble(config, component)?;
    let pack = Pack::parse(&packed)?;
    check_name(&pack, reference)?;
    Ok((packed, digest))
}

/// The manifest and the blobs (config, component) of `pack` as an artifact.
fn artifact(pack: &Pack) -> Result<(Vec<u8>, Vec<Blob>), PackageError> {
    let component = pack.component().to_vec();
    let component_digest = sha256_digest(&component);
    let entries: Vec<ConfigEntry> = pack
        .entries()
        .into_iter()
        .filter(|e| e.name != pack.manifest().component)
        .map(|Entry { name, bytes }| ConfigEntry {
            name: name.to_owned(),
            base64: base64::engine::general_purpose::STANDARD.encode(bytes),
        })
        .collect();
    let config = serde_json::to_vec(&Config {
        created: "1970-01-01T00:00:00Z".into(),
        architecture: "wasm".into(),
        os: "wasip2".into(),
        layer_digests: vec![component_digest.clone()],
        quarry: entries,
    })
    .map_err(|e| PackageError::Plugin(e.to_string()))?;
    let m = pack.manifest();
    let manifest = Manifest {
        schema_version: 2,
        media_type: Some(MANIFEST_MEDIA_TYPE.into()),
        config: Descriptor {
            media_type: CONFIG_MEDIA_TYPE.into(),
            digest: sha256_digest(&config),
            size: config.len() as u64,
            annotations: Default::default(),
        },
        layers: vec![Descriptor {
            media_type: WASM_MEDIA_TYPE.into(),
            digest: component_digest,
            size: component.len() as u64,
            annotations: [(
                "org.opencontainers.image.title".to_owned(),
                m.component.clone(),
            )]
            .into(),
        }],
        annotations: [
            ("org.opencontainers.image.title", m.id.as_str()),
            ("org.opencontainers.image.version", m.version.as_str()),
            (
                "org.opencontainers.image.description",
                m.description.as_str(),
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect(),
    };
    let manifest =
        serde_json::to_vec(&manifest).map_err(|e| PackageError::Plugin(e.to_string()))?;
    Ok((manifest, vec![Blob::new(config), Blob::new(component)]))
}

/// The packed file from the config's entries and the component, in the packed order.
fn reassemble(config: Config, component: Vec<u8>) -> Result<Vec<u8>, PackageError> {
    let mut entries = Vec::with_capacity(config.quarry.len() + 1);
    for entry in config.quarry {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&entry.base64)
            .map_err(|e| PackageError::Format(format!("{}: {e}", entry.name)))?;
        entries.push((entry.name, bytes));
    }
    Pack::from_entries_and_component(entries, component)?.to_bytes()
}

/// A blob to upload.
struct Blob {
    digest: String,
    bytes: Vec<u8>,
}

impl Blob {
    fn new(bytes: Vec<u8>) -> Blob {
        Blob {
            digest: sha256_digest(&bytes),
            bytes,
        }
    }
}

/// Uploads `blob` unless the repository has it: `POST uploads/`, then `PUT` to the location
/// given with its digest.
async fn upload_blob(registry: &mut Registry, blob: &Blob) -> Result<(), PackageError> {
    let head = registry.url(&format!("blobs/{}", blob.digest))?;
    let answer = registry.send(Method::HEAD, &head, &[], None, 0).await?;
    if answer.status == StatusCode::OK {
        return Ok(());
    }
    let start = registry.url("blobs/uploads/")?;
    let answer = registry
        .send(
            Method::POST,
            &start,
            &[("Content-Length", "0")],
            Some(&[]),
            64 << 10,
        )
        .await?;
    if answer.status != StatusCode::ACCEPTED {
        return Err(registry_error(&start, &answer, "starting an upload"));
    }
    let location = answer
        .headers
        .get("Location")
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| PackageError::Fetch {
            url: start.to_string(),
            message: "the registry started an upload but said not where".into(),
        })?;
    let mut url = registry.resolve(location)?;
    url.query_pairs_mut().append_pair("digest", &blob.digest);
    let answer = registry
        .send(
            Method::PUT,
            &url,
            &[("Content-Type", "application/octet-stream")],
            Some(&blob.bytes),
            64 << 10,
        )
        .await?;
    if answer.status != StatusCode::CREATED {
        return Err(registry_error(&url, &answer, "uploading a blob"));
    }
    Ok(())
}

/// The blob of `descriptor`, at most `max` bytes, checked against its size and digest.
async fn fetch_blob(
    registry: &mut Registry,
    descriptor: &Descriptor,
    max: u64,
) -> Result<Vec<u8>, PackageError> {
    let url = registry.url(&format!("blobs/{}", descriptor.digest))?;
    if !is_sha256_digest(&descriptor.digest) || descriptor.size > max {
        return Err(PackageError::Fetch {
            url: url.to_string(),
            message: format!(
                "the manifest lists a blob of {} bytes by {:?}; a plugin's are sha256 digests of at most {} MiB",
                descriptor.size,
                descriptor.digest,
                max >> 20
            ),
        });
    }
    let answer = registry
        .send(Method::GET, &url, &[], None, descriptor.size)
        .await?;
    if !answer.status.is_success() {
        return Err(registry_error(&url, &answer, "reading a blob"));
    }
    if sha256_digest(&answer.body) != descriptor.digest
        || answer.body.len() as u64 != descriptor.size
    {
        return Err(PackageError::Fetch {
            url: url.to_string(),
            message: "the blob is not the one its manifest lists (its digest or size differs): the registry's copy is damaged or was changed; nothing was installed".into(),
        });
    }
    Ok(answer.body)
}

/// Refuses a plugin whose id is not the repository's last part: what is installed is what the
/// name said.
fn check_name(pack: &Pack, reference: &Reference) -> Result<(), PackageError> {
    let id = &pack.manifest().id;
    if reference.name() != id {
        return Err(PackageError::Refused(format!(
            "{reference} holds plugin {id:?}, not {:?}: a registry name ends with the plugin's id (push it as oci://{}/{}{id}:{})",
            reference.name(),
            reference.registry,
            reference
                .repository
                .strip_suffix(reference.name())
                .unwrap_or_default(),
            pack.manifest().version
        )));
    }
    Ok(())
}
