//! TLS to the server with rustls, by libpq's `sslmode` table
//! (docs/POSTGRES.md, "TLS").
//!
//! | `sslmode` | encryption | server certificate checked |
//! |---|---|---|
//! | `disable` | never | — |
//! | `prefer` (default) | when the server accepts it; cleartext only when the server answers the TLS request with "no" | against the root certificates if there are any (`sslrootcert`, or `~/.postgresql/root.crt`), else not at all |
//! | `require` | always | as `prefer` (with root certificates libpq's `require` is `verify-ca`) |
//! | `verify-ca` | always | chain to a trusted root |
//! | `verify-full` | always | chain to a trusted root, and the host name (or IP address) the client connected to |
//!
//! `sslrootcert=PATH` names PEM root certificates; `sslrootcert=system`
//! the operating system's, and then (as in libpq 16) `sslmode` defaults to
//! `verify-full` and may not be weaker. A `verify-*` mode without root
//! certificates is refused before connecting, as libpq does. Two choices
//! are stricter than libpq: a root certificate file named by `sslrootcert`
//! that cannot be read is an error in every mode (libpq then silently
//! skips verification for `prefer` and `require`), and `prefer` never
//! retries in cleartext after a TLS handshake that failed (only after the
//! server declined TLS). Over a Unix socket TLS is never used, as in libpq.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};
use serde::Serialize;
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::error::{PgError, Result};

/// libpq's `sslmode` values this client supports (`allow`, which tries
/// cleartext first, is refused).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SslMode {
    /// Never encrypt.
    Disable,
    /// Encrypt when the server accepts it (libpq's default).
    Prefer,
    /// Always encrypt.
    Require,
    /// Always encrypt; the certificate must chain to a trusted root.
    VerifyCa,
    /// Always encrypt; trusted chain, and the certificate names the host.
    VerifyFull,
}

impl SslMode {
    /// Reads a `sslmode` value.
    pub fn parse(value: &str) -> Option<SslMode> {
        Some(match value {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => return None,
        })
    }

    /// The value as libpq writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

/// Where trusted root certificates come from (`sslrootcert`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RootCerts {
    /// PEM certificates in this file.
    File(PathBuf),
    /// The operating system's trusted roots (`sslrootcert=system`).
    System,
}

impl RootCerts {
    /// Reads a `sslrootcert` value.
    pub fn parse(value: &str) -> RootCerts {
        match value {
            "system" => RootCerts::System,
            path => RootCerts::File(PathBuf::from(path)),
        }
    }

    /// The value as written in a URL.
    pub fn as_setting(&self) -> String {
        match self {
            RootCerts::File(path) => path.display().to_string(),
            RootCerts::System => "system".to_owned(),
        }
    }
}

/// What the server's certificate is checked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verification {
    /// Nothing: encrypted against eavesdropping, not against a server
    /// that impersonates the real one.
    None,
    /// It chains to a trusted root.
    Chain,
    /// It chains to a trusted root and names the host connected to.
    ChainAndHostName,
}

impl Verification {
    /// In words, for reports.
    pub fn describe(self) -> &'static str {
        match self {
            Verification::None => "not verified",
            Verification::Chain => "certificate chain verified",
            Verification::ChainAndHostName => "certificate chain and host name verified",
        }
    }
}

/// The TLS settings as written (`sslmode`, `sslrootcert`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsSettings {
    /// `sslmode`, if given.
    pub mode: Option<SslMode>,
    /// `sslrootcert`, if given.
    pub root: Option<RootCerts>,
}

/// What a connection will do: the mode in force, the roots, the checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsPlan {
    /// The mode in force (given, or the default).
    pub mode: SslMode,
    /// The trusted roots, when the certificate is checked.
    pub root: Option<RootCerts>,
    /// What the server's certificate is checked for.
    pub verification: Verification,
}

/// libpq's default root certificate file, `~/.postgresql/root.crt`.
pub fn default_root_file() -> Option<PathBuf> {
    home::home_dir().map(|home| home.join(".postgresql").join("root.crt"))
}

impl TlsSettings {
    /// The plan by libpq's table; `default_root` is used when no
    /// `sslrootcert` is given and the file exists.
    pub fn plan(&self, default_root: Option<&Path>) -> Result<TlsPlan> {
        let system = self.root == Some(RootCerts::System);
        let mode = self.mode.unwrap_or(if system {
            SslMode::VerifyFull
        } else {
            SslMode::Prefer
        });
        if system && mode != SslMode::VerifyFull {
            return Err(PgError::Tls(format!(
                "sslmode={} may not be used with sslrootcert=system (use verify-full)",
                mode.as_str()
            )));
        }
        let root = self.root.clone().or_else(|| {
            default_root
                .filter(|file| file.is_file())
                .map(|file| RootCerts::File(file.to_path_buf()))
        });
        let verification = match mode {
            SslMode::Disable => Verification::None,
            SslMode::Prefer | SslMode::Require if root.is_some() => Verification::Chain,
            SslMode::Prefer | SslMode::Require => Verification::None,
            SslMode::VerifyCa | SslMode::VerifyFull if root.is_none() => {
                return Err(PgError::Tls(format!(
                    "sslmode={} needs root certificates, and ~/.postgresql/root.crt does not exist: \
                     name a file with sslrootcert=PATH, use the system's trusted roots with \
                     sslrootcert=system, or choose an sslmode that does not verify the server",
                    mode.as_str()
                )));
            }
            SslMode::VerifyCa => Verification::Chain,
            SslMode::VerifyFull => Verification::ChainAndHostName,
        };
        let root = (verification != Verification::None)
            .then_some(root)
            .flatten();
        Ok(TlsPlan {
            mode,
            root,
            verification,
        })
    }
}

impl TlsPlan {
    /// The client's own mode: it knows `disable`, `prefer` and `require`;
    /// the checks of `verify-*` are the connector's.
    pub(crate) fn client_mode(&self) -> postgres::config::SslMode {
        match self.mode {
            SslMode::Disable => postgres::config::SslMode::Disable,
            SslMode::Prefer => postgres::config::SslMode::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => {
                postgres::config::SslMode::Require
            }
        }
    }

    /// The rustls connector for this plan: the roots loaded, the
    /// certificate checked as [`TlsPlan::verification`] says.
    pub(crate) fn connector(&self) -> Result<MakeRustlsConnect> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let roots = match &self.root {
            Some(root) => Some(Arc::new(load_roots(root)?)),
            None => None,
        };
        let verifier = Arc::new(PgServerVerifier {
            roots,
            check_host_name: self.verification == Verification::ChainAndHostName,
            algorithms: provider.signature_verification_algorithms,
        });
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| PgError::Tls(format!("setting up TLS: {e}")))?
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth();
        Ok(MakeRustlsConnect::new(config))
    }
}

/// How a connection is secured: as the server sees it (`pg_stat_ssl` of
/// the connection's own backend) and as the client checked the server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConnectionSecurity {
    /// The connection is encrypted (TLS).
    pub encrypted: bool,
    /// The TLS version (`TLSv1.3`), when encrypted.
    pub protocol: Option<String>,
    /// The cipher suite, when encrypted.
    pub cipher: Option<String>,
    /// The `sslmode` in force.
    pub sslmode: SslMode,
    /// What the server's certificate was checked for (`none` when not
    /// encrypted).
    pub verification: Verification,
}

impl ConnectionSecurity {
    /// In words: `encrypted (TLSv1.3, TLS_AES_256_GCM_SHA384; certificate
    /// chain and host name verified)` or `not encrypted (…why)`.
    pub fn describe(&self) -> String {
        if self.encrypted {
            let mut what: Vec<&str> = [self.protocol.as_deref(), self.cipher.as_deref()]
                .into_iter()
                .flatten()
                .collect();
            let checked = match self.verification {
                Verification::None => "server certificate not verified",
                other => other.describe(),
            };
            what.push(checked);
            let details = what.join(", ");
            return format!("encrypted ({details}; sslmode={})", self.sslmode.as_str());
        }
        let why = match self.sslmode {
            SslMode::Disable => "sslmode=disable",
            SslMode::Prefer => "sslmode=prefer and the server does not offer TLS",
            _ => "a Unix socket, where TLS is never used",
        };
        format!("not encrypted ({why})")
    }
}

/// Reads how `client`'s connection is secured, by `plan`.
pub(crate) fn connection_security(
    client: &mut impl postgres::GenericClient,
    plan: &TlsPlan,
) -> Result<ConnectionSecurity> {
    use crate::error::Context as _;
    let row = client
        .query_opt(
            "SELECT ssl, version, cipher FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .context("reading how the connection is secured")?;
    let (encrypted, protocol, cipher) = match row {
        Some(row) => (row.get::<_, bool>(0), row.get(1), row.get(2)),
        None => (false, None, None),
    };
    Ok(ConnectionSecurity {
        encrypted,
        protocol,
        cipher,
        sslmode: plan.mode,
        verification: if encrypted {
            plan.verification
        } else {
            Verification::None
        },
    })
}

fn load_roots(root: &RootCerts) -> Result<RootCertStore> {
    let mut store = RootCertStore::empty();
    match root {
        RootCerts::File(file) => {
            let certificates = CertificateDer::pem_file_iter(file)
                .and_then(|certs| certs.collect::<std::result::Result<Vec<_>, _>>())
                .map_err(|e| {
                    PgError::Tls(format!(
                        "reading the root certificates in {} (sslrootcert): {e}",
                        file.display()
                    ))
                })?;
            let (added, _) = store.add_parsable_certificates(certificates);
            if added == 0 {
                return Err(PgError::Tls(format!(
                    "{} (sslrootcert) holds no usable certificate",
                    file.display()
                )));
            }
        }
        RootCerts::System => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _) = store.add_parsable_certificates(found.certs);
            if added == 0 {
                return Err(PgError::Tls(format!(
                    "sslrootcert=system: no trusted root certificate found on this system \
                     ({} error(s) reading the system's store; on Debian, install ca-certificates)",
                    found.errors.len()
                )));
            }
        }
    }
    Ok(store)
}

/// Checks the server's certificate as the plan says. The handshake's own
/// signatures are always checked (with the provider's algorithms), so the
/// server must hold the key of the certificate it shows.
#[derive(Debug)]
struct PgServerVerifier {
    /// The trusted roots; `None`: the certificate is not checked.
    roots: Option<Arc<RootCertStore>>,
    check_host_name: bool,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for PgServerVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        let Some(roots) = &self.roots else {
            return Ok(ServerCertVerified::assertion());
        };
        let certificate = rustls::server::ParsedCertificate::try_from(end_entity)?;
        rustls::client::verify_server_cert_signed_by_trust_anchor(
            &certificate,
            roots,
            intermediates,
            now,
            self.algorithms.all,
        )?;
        if self.check_host_name {
            rustls::client::verify_server_name(&certificate, server_name)?;
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(mode: Option<SslMode>, root: Option<RootCerts>, default: bool) -> Result<TlsPlan> {
        let here = std::env::current_dir().unwrap().join("Cargo.toml");
        TlsSettings { mode, root }.plan(default.then_some(here.as_path()))
    }

    #[test]
    fn the_modes_check_what_libpq_checks() {
        use SslMode::*;
        use Verification as V;
        let file = || Some(RootCerts::File("ca.pem".into()));
        for (mode, root, default, verification) in [
            (None, None, false, V::None),
            (Some(Disable), file(), false, V::None),
            (Some(Prefer), None, false, V::None),
            (Some(Prefer), file(), false, V::Chain),
            (Some(Require), None, false, V::None),
            (Some(Require), file(), false, V::Chain),
            (Some(Require), None, true, V::Chain),
            (Some(VerifyCa), file(), false, V::Chain),
            (Some(VerifyCa), None, true, V::Chain),
            (Some(VerifyFull), file(), false, V::ChainAndHostName),
            (None, Some(RootCerts::System), false, V::ChainAndHostName),
        ] {
            assert_eq!(
                plan(mode, root.clone(), default).unwrap().verification,
                verification,
                "{mode:?} {root:?} {default}"
            );
        }
        for (mode, root) in [
            (Some(VerifyCa), None),
            (Some(VerifyFull), None),
            (Some(Require), Some(RootCerts::System)),
            (Some(VerifyCa), Some(RootCerts::System)),
        ] {
            let error = plan(mode, root.clone(), false).unwrap_err();
            assert_eq!(
                error.kind(),
                hermes_state_types::ErrorKind::InvalidInput,
                "{mode:?} {root:?}"
            );
        }
    }
}
