//! TLS to PostgreSQL with libpq's `sslmode` and `sslrootcert`, so a connection string
//! that works with psql works here. tokio-postgres's own parser knows only
//! `disable`/`prefer`/`require` and rejects `sslrootcert`: both are read (and taken out)
//! here, in the URL form and in the key=value form, and the rest goes to its parser.
//!
//! | sslmode       | TLS                           | certificate                      |
//! |---------------|-------------------------------|----------------------------------|
//! | `disable`     | never                         |                                  |
//! | `allow`       | as `prefer` (see `Mode`)      | as `prefer`                      |
//! | `prefer`      | when the server offers it (†) | not verified (\*)                |
//! | `require`     | always                        | not verified (\*)                |
//! | `verify-ca`   | always                        | its chain, to the roots          |
//! | `verify-full` | always                        | its chain, and the host name     |
//!
//! The roots are `sslrootcert`'s certificates (a PEM file), else the public web roots
//! (`webpki-roots`); `sslrootcert=system` names those and makes `verify-full` the
//! default, as in libpq 16. (\*) As libpq, given a `sslrootcert` file, `prefer` and
//! `require` verify the chain too. (†) As libpq, a failed handshake under `prefer`
//! connects again without TLS (logged once). Handshake signatures are always checked: a
//! connection that does not verify the certificate is still one with its key's owner.
//! `ssl_min_protocol_version` is read too (rustls speaks 1.2 and 1.3); libpq's other
//! TLS settings are refused by name, or ignored where they change nothing here.
//!
//! The connection string may carry a password: no error here quotes it.

use super::session::Session;
use anyhow::Context;
use postgres::config::SslMode;
use postgres::{Client, NoTls};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore};
use rustls::{Error as TlsError, SignatureScheme};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio_postgres::Config;
use tokio_postgres_rustls::MakeRustlsConnect;

/// What every failure to reach the database starts with.
pub const CANNOT_CONNECT: &str = "cannot connect to the PostgreSQL database of --database-url";
/// What a connection string the parser refuses is (never the string itself).
const NOT_A_URL: &str = "--database-url is not a PostgreSQL connection URL";

/// Where to connect and how: the server's settings and the TLS connector, made once per
/// `--database-url` and used by every connection (the pool's, `Single`, the listener).
pub struct Target {
    config: Config,
    tls: MakeRustlsConnect,
    /// Under `prefer` (and `allow`), the same without TLS: what libpq connects with when
    /// the TLS handshake fails (a certificate whose key rustls cannot use, a server too
    /// old for TLS 1.2), rather than not at all.
    plain: Option<Config>,
    /// Whether that fallback was logged (once per process, not per connection).
    warned: AtomicBool,
}

impl Target {
    /// Reads `url` (a `postgres://` URL or libpq's key=value string).
    pub fn from_url(url: &str) -> anyhow::Result<Target> {
        let (rest, ssl) = split(url)?;
        let mut config: Config = rest.parse().map_err(|_| anyhow::anyhow!(NOT_A_URL))?;
        if config.get_application_name().is_none() {
            config.application_name("cfdi-extract");
        }
        let (mode, verify) = ssl.resolve()?;
        config.ssl_mode(match mode {
            Mode::Disable => SslMode::Disable,
            Mode::Allow | Mode::Prefer => SslMode::Prefer,
            Mode::Require | Mode::VerifyCa | Mode::VerifyFull => SslMode::Require,
        });
        // tokio-postgres names the TLS server after `host` and refuses TLS without one;
        // libpq, given only `hostaddr`, checks the certificate against that address.
        if config.get_hosts().is_empty() && mode != Mode::Disable {
            let addresses: Vec<String> = config
                .get_hostaddrs()
                .iter()
                .map(|a| a.to_string())
                .collect();
            for address in addresses {
                config.host(&address);
            }
        }
        let tls = if mode == Mode::Disable {
            // Never used: tokio-postgres does not ask for TLS under `disable`.
            connector(Verify::Nothing, false)?
        } else {
            connector(verify.load()?, ssl.tls13_only)?
        };
        let plain = matches!(mode, Mode::Allow | Mode::Prefer).then(|| {
            let mut plain = config.clone();
            plain.ssl_mode(SslMode::Disable);
            plain
        });
        Ok(Target {
            config,
            tls,
            plain,
            warned: AtomicBool::new(false),
        })
    }

    #[cfg(test)]
    fn config(&self) -> &Config {
        &self.config
    }

    /// A new session of the `postgres` crate's client (the wake listener's: it reads
    /// notifications).
    pub fn connect(&self) -> Result<Client, postgres::Error> {
        let config = postgres::Config::from(self.config.clone());
        match (config.connect(self.tls.clone()), &self.plain) {
            (Err(e), Some(plain)) if handshake_failed(&e) => {
                self.falling_back(&e);
                postgres::Config::from(plain.clone()).connect(NoTls)
            }
            (result, _) => result,
        }
    }

    /// A new session for the pool (`Session`: pipelines).
    pub fn session(&self) -> anyhow::Result<Session> {
        match (
            Session::connect(&self.config, self.tls.clone()),
            &self.plain,
        ) {
            (Err(e), Some(plain)) if failed_handshake(&e) => {
                self.falling_back(&e);
                Session::connect(plain, NoTls)
            }
            (result, _) => result,
        }
    }

    fn falling_back(&self, e: &dyn std::fmt::Display) {
        if !self.warned.swap(true, Ordering::Relaxed) {
            log::warn!(
                "the TLS handshake with PostgreSQL failed ({e}); connecting without \
                 TLS, as libpq does under sslmode=prefer (sslmode=require or \
                 verify-full refuse instead)"
            );
        }
    }
}

/// `handshake_failed` for an error carrying a client's error.
fn failed_handshake(e: &anyhow::Error) -> bool {
    e.chain()
        .filter_map(|cause| cause.downcast_ref::<postgres::Error>())
        .any(handshake_failed)
}

/// True when `e` is rustls refusing the handshake (not the network failing under it).
fn handshake_failed(e: &postgres::Error) -> bool {
    std::error::Error::source(e)
        .and_then(|cause| cause.downcast_ref::<std::io::Error>())
        .and_then(|io| io.get_ref())
        .is_some_and(|inner| inner.is::<TlsError>())
}

/// libpq's `sslmode` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Disable,
    /// libpq tries without TLS first, then with it; tokio-postgres has no such order, so
    /// `allow` connects as `prefer` does: the same servers accept it, encrypted where
    /// they can be.
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

const MODES: &str = "disable, allow, prefer, require, verify-ca, verify-full";

impl Mode {
    fn parse(value: &str) -> anyhow::Result<Mode> {
        Ok(match value {
            "disable" => Mode::Disable,
            "allow" => Mode::Allow,
            "prefer" => Mode::Prefer,
            "require" => Mode::Require,
            "verify-ca" => Mode::VerifyCa,
            "verify-full" => Mode::VerifyFull,
            other => anyhow::bail!("--database-url: unknown sslmode {other:?} (one of: {MODES})"),
        })
    }
}

/// The TLS parameters read out of a connection string.
#[derive(Debug, Default, PartialEq, Eq)]
struct Ssl {
    mode: Option<Mode>,
    rootcert: Option<String>,
    /// `ssl_min_protocol_version=TLSv1.3`; rustls never goes below 1.2 anyway.
    tls13_only: bool,
}

/// libpq's TLS settings this client does not have: refused by name rather than as an
/// unknown option.
const REFUSED: [&str; 7] = [
    "sslcert",
    "sslkey",
    "sslpassword",
    "sslcrl",
    "sslcrldir",
    "ssl_max_protocol_version",
    "requiressl",
];

impl Ssl {
    /// Takes `key` if it is one of libpq's TLS settings (true), reading `value`.
    fn take(
        &mut self,
        key: &str,
        value: impl FnOnce() -> anyhow::Result<String>,
    ) -> anyhow::Result<bool> {
        match key {
            "sslmode" => self.mode = Some(Mode::parse(&value()?)?),
            "sslrootcert" => self.rootcert = Some(value()?),
            "ssl_min_protocol_version" => {
                self.tls13_only = match value()?.as_str() {
                    "TLSv1" | "TLSv1.1" | "TLSv1.2" => false,
                    "TLSv1.3" => true,
                    other => anyhow::bail!(
                        "--database-url: unknown ssl_min_protocol_version {other:?} (one of: \
                         TLSv1, TLSv1.1, TLSv1.2, TLSv1.3)"
                    ),
                }
            }
            // The host name goes in SNI as in libpq's default; compression is gone from
            // TLS (and libpq ignores it): neither changes anything here.
            "sslsni" | "sslcompression" => {}
            // libpq's default, `allow`, sends a certificate only if it has one: none here.
            "sslcertmode" => match value()?.as_str() {
                "disable" | "allow" => {}
                _ => anyhow::bail!(
                    "--database-url: sslcertmode=require is not supported (no client certificates)"
                ),
            },
            key if REFUSED.contains(&key) => anyhow::bail!(
                "--database-url: {key} is not supported (client certificates, certificate \
                 revocation lists and a maximum TLS version are not; TLS is read from sslmode, \
                 sslrootcert and ssl_min_protocol_version)"
            ),
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// How the server's certificate is checked, before its roots are read.
#[derive(Debug, PartialEq, Eq)]
enum Wanted {
    Nothing,
    Chain(Roots),
    Full(Roots),
}

#[derive(Debug, PartialEq, Eq)]
enum Roots {
    /// The public web roots.
    Web,
    /// A PEM file's certificates.
    File(String),
}

enum Verify {
    Nothing,
    Chain(RootCertStore),
    Full(RootCertStore),
}

impl Ssl {
    /// The mode and what it verifies, as libpq decides them.
    fn resolve(&self) -> anyhow::Result<(Mode, Wanted)> {
        let system = self.rootcert.as_deref() == Some("system");
        let mode = match self.mode {
            Some(mode) => mode,
            None if system => Mode::VerifyFull,
            None => Mode::Prefer,
        };
        if system && mode != Mode::VerifyFull {
            anyhow::bail!(
                "--database-url: sslrootcert=system needs sslmode=verify-full (as in libpq)"
            );
        }
        let roots = match self.rootcert.as_deref() {
            None | Some("system") => Roots::Web,
            Some(file) => Roots::File(file.to_string()),
        };
        let given = matches!(roots, Roots::File(_));
        let wanted = match mode {
            Mode::Disable => Wanted::Nothing,
            Mode::VerifyFull => Wanted::Full(roots),
            Mode::VerifyCa => Wanted::Chain(roots),
            // libpq verifies the chain whenever a root certificate file is given.
            Mode::Allow | Mode::Prefer | Mode::Require if given => Wanted::Chain(roots),
            Mode::Allow | Mode::Prefer | Mode::Require => Wanted::Nothing,
        };
        Ok((mode, wanted))
    }
}

impl Wanted {
    fn load(self) -> anyhow::Result<Verify> {
        Ok(match self {
            Wanted::Nothing => Verify::Nothing,
            Wanted::Chain(roots) => Verify::Chain(roots.load()?),
            Wanted::Full(roots) => Verify::Full(roots.load()?),
        })
    }
}

impl Roots {
    fn load(self) -> anyhow::Result<RootCertStore> {
        match self {
            Roots::Web => Ok(RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            }),
            Roots::File(file) => read_roots(&file)
                .with_context(|| format!("cannot read the sslrootcert file {file}"))
                .context(CANNOT_CONNECT),
        }
    }
}

fn read_roots(file: &str) -> anyhow::Result<RootCertStore> {
    let pem = std::fs::read(file)?;
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&pem) {
        roots
            .add(cert.context("not a PEM file of certificates")?)
            .context("a certificate rustls does not accept as a root")?;
    }
    anyhow::ensure!(!roots.is_empty(), "no certificate in it (PEM expected)");
    Ok(roots)
}

/// The client's TLS settings: the ring provider (ureq's), TLS 1.2 and 1.3, ALPN
/// `postgresql` (what PostgreSQL 17's direct negotiation asks for; older servers ignore
/// it), and the certificate checked as `verify` says.
fn connector(verify: Verify, tls13_only: bool) -> anyhow::Result<MakeRustlsConnect> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let web_pki = |roots: RootCertStore| {
        WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
            .build()
            .context("cannot use the root certificates")
    };
    let verifier: Arc<dyn ServerCertVerifier> = match verify {
        Verify::Nothing => Arc::new(AnyCertificate {
            algorithms: provider.signature_verification_algorithms,
        }),
        Verify::Chain(roots) => Arc::new(ChainOnly(web_pki(roots)?)),
        Verify::Full(roots) => web_pki(roots)?,
    };
    let versions: &[&rustls::SupportedProtocolVersion] = if tls13_only {
        &[&rustls::version::TLS13]
    } else {
        rustls::DEFAULT_VERSIONS
    };
    let mut config = ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(versions)
        .context("the TLS provider")?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"postgresql".to_vec()];
    Ok(MakeRustlsConnect::new(config))
}

/// `prefer` and `require` without roots: any certificate, but the handshake still
/// proves the server holds its key.
#[derive(Debug)]
struct AnyCertificate {
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, TlsError> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain to the roots (validity dates included), not the host name.
/// rustls's verifier checks the name last, after the chain, so its name error alone is
/// let through.
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, TlsError> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(TlsError::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

// ---------------------------------------------------------------------------------------
// Reading sslmode and sslrootcert out of the connection string

/// `url` without its `sslmode` and `sslrootcert`, and their values (the last of each,
/// as tokio-postgres and libpq take the last).
fn split(url: &str) -> anyhow::Result<(String, Ssl)> {
    let url = url.trim();
    let rest = ["postgres://", "postgresql://"]
        .iter()
        .find_map(|p| url.strip_prefix(p));
    match rest {
        Some(rest) => split_url(url, url.len() - rest.len()),
        None => split_keywords(url),
    }
}

/// The URL form: the query's `key=value` pairs, percent-encoded, joined by `&`. Where
/// the query starts is found as tokio-postgres finds it: after the first `@` (the
/// credentials, whose password may hold a `?`), the first `?`.
fn split_url(url: &str, after_scheme: usize) -> anyhow::Result<(String, Ssl)> {
    let rest = &url[after_scheme..];
    let after_credentials = rest.find('@').map_or(0, |at| at + 1);
    let Some(question) = rest[after_credentials..].find('?') else {
        return Ok((url.to_string(), Ssl::default()));
    };
    let query_at = after_scheme + after_credentials + question;
    let mut ssl = Ssl::default();
    let mut kept = Vec::new();
    for pair in url[query_at + 1..].split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8()
                .map(|s| s.into_owned())
                .map_err(|_| anyhow::anyhow!(NOT_A_URL))
        };
        let taken = match decode(key) {
            Ok(key) => ssl.take(&key, || decode(value))?,
            Err(_) => false,
        };
        if !taken {
            kept.push(pair);
        }
    }
    let mut out = url[..query_at].to_string();
    if !kept.is_empty() {
        out.push('?');
        out.push_str(&kept.join("&"));
    }
    Ok((out, ssl))
}

/// The key=value form (`host=db sslmode=verify-full`), read as tokio-postgres's parser
/// reads it: `key = value` separated by white space, a value either bare (up to white
/// space) or in single quotes, `\` escaping the next character in either. The pairs
/// read out are cut from the text; the rest is left as written. A string this does not
/// read is handed on whole, for tokio-postgres's parser to refuse.
fn split_keywords(s: &str) -> anyhow::Result<(String, Ssl)> {
    let Some(pairs) = keyword_pairs(s) else {
        return Ok((s.to_string(), Ssl::default()));
    };
    let mut ssl = Ssl::default();
    let mut out = String::new();
    let mut from = 0;
    for (span, key, value) in pairs {
        if !ssl.take(key, || Ok(value))? {
            continue;
        }
        out.push_str(&s[from..span.start]);
        out.push(' ');
        from = span.end;
    }
    out.push_str(&s[from..]);
    Ok((out, ssl))
}

/// Each `key = value` of a key=value string: its span, key and unescaped value.
fn keyword_pairs(s: &str) -> Option<Vec<(std::ops::Range<usize>, &str, String)>> {
    let mut pairs = Vec::new();
    fn skip_ws(it: &mut std::iter::Peekable<std::str::CharIndices<'_>>) {
        while it.next_if(|(_, c)| c.is_whitespace()).is_some() {}
    }
    let mut it = s.char_indices().peekable();
    loop {
        skip_ws(&mut it);
        let Some(&(start, _)) = it.peek() else {
            return Some(pairs);
        };
        let mut key_end = start;
        while let Some((i, c)) = it.next_if(|(_, c)| !c.is_whitespace() && *c != '=') {
            key_end = i + c.len_utf8();
        }
        if key_end == start {
            return None;
        }
        skip_ws(&mut it);
        it.next_if(|(_, c)| *c == '=')?;
        skip_ws(&mut it);
        let quoted = it.next_if(|(_, c)| *c == '\'').is_some();
        let mut value = String::new();
        let mut end = None;
        while let Some(&(i, c)) = it.peek() {
            if !quoted && c.is_whitespace() {
                end = Some(i);
                break;
            }
            it.next();
            match c {
                '\'' if quoted => {
                    end = Some(i + 1);
                    break;
                }
                '\\' => {
                    if let Some((_, next)) = it.next() {
                        value.push(next);
                    }
                }
                c => value.push(c),
            }
        }
        let end = match end {
            Some(end) => end,
            // An unterminated quote.
            None if quoted => return None,
            None => s.len(),
        };
        if !quoted && value.is_empty() {
            return None;
        }
        pairs.push((start..end, &s[start..key_end], value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use postgres::config::Host;

    const SECRET: &str = "hunter2-s3cret";

    fn mode(url: &str) -> Option<Mode> {
        split(url).expect("split").1.mode
    }

    #[test]
    fn the_url_form_loses_sslmode_and_sslrootcert_and_keeps_the_rest() {
        let (rest, ssl) = split(
            "postgres://u:p@db.example:5432/app?sslmode=verify-full&application_name=x&sslrootcert=%2Fetc%2Fca.pem",
        )
        .expect("split");
        assert_eq!(
            rest,
            "postgres://u:p@db.example:5432/app?application_name=x"
        );
        assert_eq!(
            ssl,
            Ssl {
                mode: Some(Mode::VerifyFull),
                rootcert: Some("/etc/ca.pem".into()),
                tls13_only: false,
            }
        );
        let (rest, ssl) = split("postgresql://db/app?sslmode=require").expect("split");
        assert_eq!(rest, "postgresql://db/app");
        assert_eq!(ssl.mode, Some(Mode::Require));
        let (rest, ssl) = split("postgres://db/app").expect("split");
        assert_eq!(rest, "postgres://db/app");
        assert_eq!(ssl, Ssl::default());
        // The last one counts; the key may be percent-encoded.
        assert_eq!(
            mode("postgres://db/app?sslmode=disable&ssl%6Dode=verify-ca"),
            Some(Mode::VerifyCa)
        );
    }

    #[test]
    fn a_question_mark_in_the_password_does_not_start_the_query() {
        let (rest, ssl) =
            split("postgres://u:pa?ss@db/app?sslmode=require&connect_timeout=3").expect("split");
        assert_eq!(rest, "postgres://u:pa?ss@db/app?connect_timeout=3");
        assert_eq!(ssl.mode, Some(Mode::Require));
        let target = Target::from_url("postgres://u:pa?ss@db/app?sslmode=require").expect("parses");
        assert_eq!(target.config().get_password(), Some(&b"pa?ss"[..]));
        assert_eq!(target.config().get_dbname(), Some("app"));
    }

    #[test]
    fn the_keyword_form_loses_them_too() {
        let (rest, ssl) = split(
            "host=db sslmode = verify-full  user=u sslrootcert='/my certs/ca.pem' password='a b\\'c'",
        )
        .expect("split");
        assert_eq!(ssl.mode, Some(Mode::VerifyFull));
        assert_eq!(ssl.rootcert.as_deref(), Some("/my certs/ca.pem"));
        let config: Config = rest.parse().expect("tokio-postgres reads the rest");
        assert_eq!(config.get_hosts(), [Host::Tcp("db".into())]);
        assert_eq!(config.get_user(), Some("u"));
        assert_eq!(config.get_password(), Some(&b"a b'c"[..]));
        assert_eq!(mode("sslmode=disable host=db"), Some(Mode::Disable));
        assert_eq!(mode("host=db"), None);
    }

    #[test]
    fn every_libpq_mode_is_read_and_an_unknown_one_names_them() {
        for (text, want, tokio) in [
            ("disable", Mode::Disable, SslMode::Disable),
            ("allow", Mode::Allow, SslMode::Prefer),
            ("prefer", Mode::Prefer, SslMode::Prefer),
            ("require", Mode::Require, SslMode::Require),
            ("verify-ca", Mode::VerifyCa, SslMode::Require),
            ("verify-full", Mode::VerifyFull, SslMode::Require),
        ] {
            assert_eq!(mode(&format!("postgres://db/x?sslmode={text}")), Some(want));
            let target =
                Target::from_url(&format!("postgres://db/x?sslmode={text}")).expect("a known mode");
            assert_eq!(target.config().get_ssl_mode(), tokio, "{text}");
        }
        let default = Target::from_url("postgres://db/x").expect("parses");
        assert_eq!(default.config().get_ssl_mode(), SslMode::Prefer);
        for url in [
            format!("postgres://u:{SECRET}@db/x?sslmode=bogus"),
            format!("host=db password={SECRET} sslmode=bogus"),
        ] {
            let err = format!("{:#}", Target::from_url(&url).err().expect("refused"));
            assert!(err.contains("unknown sslmode \"bogus\""), "{err}");
            assert!(err.contains(MODES), "{err}");
            assert!(!err.contains(SECRET), "{err}");
        }
    }

    #[test]
    fn libpqs_other_tls_settings_are_read_or_refused_by_name() {
        let (rest, ssl) = split(
            "postgres://db/x?sslsni=1&sslcompression=0&sslcertmode=allow&ssl_min_protocol_version=TLSv1.3&connect_timeout=5",
        )
        .expect("split");
        assert_eq!(rest, "postgres://db/x?connect_timeout=5");
        assert!(ssl.tls13_only);
        let (_, ssl) = split("host=db ssl_min_protocol_version=TLSv1.2").expect("split");
        assert!(!ssl.tls13_only);
        for (url, says) in [
            (
                "postgres://db/x?sslcert=/c.pem&sslkey=/k.pem",
                "sslcert is not supported",
            ),
            ("host=db sslkey=/k.pem", "sslkey is not supported"),
            (
                "postgres://db/x?sslcertmode=require",
                "sslcertmode=require is not supported",
            ),
            (
                "postgres://db/x?ssl_min_protocol_version=SSLv3",
                "unknown ssl_min_protocol_version",
            ),
        ] {
            let err = format!("{:#}", Target::from_url(url).err().expect("refused"));
            assert!(err.contains(says), "{url}: {err}");
        }
    }

    #[test]
    fn errors_never_quote_the_password() {
        for url in [
            format!(
                "postgres://u:{SECRET}@db/x?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem"
            ),
            format!("postgres://u:{SECRET}@db/x?nonsense=1"),
            format!("postgres://u:{SECRET}@db/x?sslmode=%FF"),
            format!("host=db password={SECRET} sslrootcert=system sslmode=require"),
            format!("host=db password='{SECRET}"),
        ] {
            let err = format!("{:#}", Target::from_url(&url).err().expect("refused"));
            assert!(!err.contains(SECRET), "{err}");
        }
        let err = Target::from_url(&format!(
            "postgres://u:{SECRET}@db/x?sslmode=verify-ca&sslrootcert=/nonexistent/ca.pem"
        ))
        .err()
        .expect("refused");
        let err = format!("{err:#}");
        assert!(err.starts_with(CANNOT_CONNECT), "{err}");
        assert!(
            err.contains("cannot read the sslrootcert file /nonexistent/ca.pem"),
            "{err}"
        );
    }

    #[test]
    fn a_rootcert_file_makes_libpq_verify_the_chain_and_system_means_the_web_roots() {
        let ssl = |mode: Option<Mode>, rootcert: Option<&str>| Ssl {
            mode,
            rootcert: rootcert.map(str::to_string),
            tls13_only: false,
        };
        let file = || Roots::File("ca.pem".into());
        let cases = [
            (ssl(None, None), Mode::Prefer, Wanted::Nothing),
            (
                ssl(Some(Mode::Require), None),
                Mode::Require,
                Wanted::Nothing,
            ),
            (
                ssl(None, Some("ca.pem")),
                Mode::Prefer,
                Wanted::Chain(file()),
            ),
            (
                ssl(Some(Mode::Require), Some("ca.pem")),
                Mode::Require,
                Wanted::Chain(file()),
            ),
            (
                ssl(Some(Mode::VerifyCa), None),
                Mode::VerifyCa,
                Wanted::Chain(Roots::Web),
            ),
            (
                ssl(Some(Mode::VerifyFull), Some("ca.pem")),
                Mode::VerifyFull,
                Wanted::Full(file()),
            ),
            (
                ssl(None, Some("system")),
                Mode::VerifyFull,
                Wanted::Full(Roots::Web),
            ),
            (
                ssl(Some(Mode::Disable), Some("ca.pem")),
                Mode::Disable,
                Wanted::Nothing,
            ),
        ];
        for (ssl, mode, wanted) in cases {
            assert_eq!(ssl.resolve().expect("resolves"), (mode, wanted), "{ssl:?}");
        }
        let weak = ssl(Some(Mode::Require), Some("system")).resolve();
        assert!(weak.is_err());
    }

    #[test]
    fn a_hostaddr_alone_names_the_server_for_tls() {
        let target = Target::from_url("hostaddr=127.0.0.1 user=u").expect("parses");
        assert_eq!(target.config().get_hosts(), [Host::Tcp("127.0.0.1".into())]);
        let socket = Target::from_url("postgres://u@%2Fvar%2Frun%2Fpostgresql/x").expect("parses");
        assert!(
            matches!(socket.config().get_hosts(), [Host::Unix(_)]),
            "{:?}",
            socket.config().get_hosts()
        );
    }

    /// A server that answers the first connection's SSLRequest with `S` and then
    /// nonsense instead of a TLS handshake, and reports what the next connection (if any,
    /// within a second) sends first.
    fn broken_tls_server() -> (u16, std::thread::JoinHandle<Option<Vec<u8>>>) {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("address").port();
        let server = std::thread::spawn(move || {
            let (mut first, _) = listener.accept().ok()?;
            let mut request = [0u8; 8];
            first.read_exact(&mut request).ok()?;
            first.write_all(b"SHTTP/1.1 400 Bad Request\r\n\r\n").ok()?;
            listener.set_nonblocking(true).ok()?;
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
            let mut second = loop {
                match listener.accept() {
                    Ok((second, _)) => break second,
                    Err(_) if std::time::Instant::now() < deadline => {
                        std::thread::sleep(std::time::Duration::from_millis(10))
                    }
                    Err(_) => return None,
                }
            };
            second.set_nonblocking(false).ok()?;
            let mut start = [0u8; 8];
            second.read_exact(&mut start).ok()?;
            Some(start.to_vec())
        });
        (port, server)
    }

    #[test]
    fn prefer_falls_back_to_plain_when_the_handshake_fails_and_require_does_not() {
        // A StartupMessage: length, then protocol 3.0 (an SSLRequest has 1234.5679).
        let startup = |packet: &[u8]| packet[4..8] == [0, 3, 0, 0];
        let (port, server) = broken_tls_server();
        let target = Target::from_url(&format!(
            "postgres://u@127.0.0.1:{port}/x?connect_timeout=5"
        ))
        .expect("parses");
        assert!(target.connect().is_err(), "nobody speaks PostgreSQL there");
        let second = server.join().expect("server thread");
        assert!(second.as_deref().is_some_and(startup), "{second:?}");

        let (port, server) = broken_tls_server();
        let target = Target::from_url(&format!(
            "postgres://u@127.0.0.1:{port}/x?connect_timeout=5&sslmode=require"
        ))
        .expect("parses");
        let err = target.connect().err().expect("refused");
        assert!(handshake_failed(&err), "{err}");
        assert_eq!(server.join().expect("server thread"), None, "no second try");
    }

    #[test]
    fn the_application_name_defaults_to_ours() {
        let target = Target::from_url("postgres://db/x").expect("parses");
        assert_eq!(target.config().get_application_name(), Some("cfdi-extract"));
        let named = Target::from_url("postgres://db/x?application_name=mine").expect("parses");
        assert_eq!(named.config().get_application_name(), Some("mine"));
    }

    #[test]
    fn a_rootcert_file_without_certificates_is_refused() {
        let dir = tempfile::TempDir::new().expect("temp dir");
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "nothing here\n").expect("write");
        let err = Target::from_url(&format!(
            "postgres://db/x?sslmode=verify-full&sslrootcert={}",
            empty.display()
        ))
        .err()
        .expect("refused");
        assert!(
            format!("{err:#}").contains("no certificate in it"),
            "{err:#}"
        );
    }
}
