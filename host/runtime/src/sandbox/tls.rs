//! The TLS a plugin's streams use: the system's root certificates (`/etc/ssl/certs` and the
//! like, through rustls-native-certs; the web's roots where the system has none) and the
//! certificate authorities of the connector's `certificate` settings. Verification cannot be
//! turned off: no plugin call reaches these settings.

use std::path::Path;
use std::sync::{Arc, LazyLock};

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use super::connection_error::StreamError;

/// Most bytes of a certificate file a connector names.
const MAX_CERTIFICATE_FILE: u64 = 1 << 20;

/// The system's roots, read once.
static SYSTEM_ROOTS: LazyLock<Vec<CertificateDer<'static>>> = LazyLock::new(|| {
    let found = rustls_native_certs::load_native_certs();
    for error in found.errors.iter().take(3) {
        tracing::debug!("system root certificates: {error}");
    }
    found.certs
});

/// The client settings of a connector whose `certificate` settings name `files`. The error
/// names the file and what is wrong with it.
pub(crate) fn client_config(
    files: &[impl AsRef<Path>],
) -> Result<Arc<rustls::ClientConfig>, String> {
    let mut roots = rustls::RootCertStore::empty();
    let (added, _) = roots.add_parsable_certificates(SYSTEM_ROOTS.iter().cloned());
    if added == 0 {
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    }
    for file in files {
        let file = file.as_ref();
        for certificate in read_certificates(file)? {
            roots.add(certificate).map_err(|e| {
                format!(
                    "{}: a certificate there cannot be trusted: {e}",
                    file.display()
                )
            })?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// The certificates of the PEM file `file`: at least one.
fn read_certificates(file: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let text = crate::plugin_files::read_bounded(file, MAX_CERTIFICATE_FILE)
        .map_err(|e| format!("{}: cannot read it: {e}", file.display()))?;
    let certificates: Vec<_> = CertificateDer::pem_slice_iter(&text)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: not a PEM file of certificates: {e}", file.display()))?;
    if certificates.is_empty() {
        return Err(format!(
            "{}: holds no certificate (a PEM file with -----BEGIN CERTIFICATE----- blocks)",
            file.display()
        ));
    }
    Ok(certificates)
}

/// A failed handshake with `host`, in words that name the fix.
pub(crate) fn handshake_error(host: &str, error: &std::io::Error) -> StreamError {
    let tls = error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>());
    let message = match tls {
        Some(rustls::Error::InvalidCertificate(reason)) => format!(
            "{host}: the server's certificate did not verify ({reason:?}); if it is signed by a private certificate authority, give that authority's PEM file in the connector's certificate setting"
        ),
        Some(other) => format!("{host}: the TLS handshake failed: {other}"),
        None => format!("{host}: the TLS handshake failed: {error}"),
    };
    StreamError::Tls(message)
}
