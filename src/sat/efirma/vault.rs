//! The e.firma as the service keeps it: its files sealed in `efirmas`, one per entity,
//! with the checked status (`db::efirmas`). Opening it for a call, what a check has to
//! do (a pending one is asked of the SAT; a lapsed certificate is recorded `expired`
//! without asking), and recording a verdict unless the files changed meanwhile.

use super::credential::Efirma;
use crate::crypto::Cipher;
use crate::db::{self, efirmas::SealedEfirma, entities::Entity, Conn};
use crate::domain::efirma::EfirmaStatus;
use crate::sat::{Due, Readiness, SatError, Secret, Verdict};

const NAME: &str = "e.firma";

/// What the channel opened: the files, unsealed, and their sealed form.
pub(super) struct Opened {
    certificate: Vec<u8>,
    key: Vec<u8>,
    password: String,
    sealed: SealedEfirma,
}

pub(super) fn readiness(entity: &Entity) -> Readiness {
    match entity.efirma.as_ref().map(|f| f.current_status()) {
        Some(EfirmaStatus::Valid) => Readiness::Ready,
        Some(EfirmaStatus::Pending) => Readiness::Pending,
        _ => Readiness::Unusable,
    }
}

/// The stored files, unsealed; None when the entity has none, or it has lapsed.
pub(super) fn open(
    conn: &Conn,
    cipher: &Cipher,
    entity: &Entity,
) -> anyhow::Result<Option<Secret>> {
    let lapsed = entity
        .efirma
        .as_ref()
        .is_none_or(|f| f.current_status() == EfirmaStatus::Expired);
    if lapsed {
        return Ok(None);
    }
    unseal(conn, cipher, entity)
}

fn unseal(conn: &Conn, cipher: &Cipher, entity: &Entity) -> anyhow::Result<Option<Secret>> {
    let Some(sealed) = db::efirmas::sealed(conn, &entity.id)? else {
        return Ok(None);
    };
    let opened = Opened {
        certificate: sealed.certificate.clone(),
        key: cipher.open_bytes(&sealed.key_ciphertext)?,
        password: cipher.open(&sealed.password_ciphertext)?,
        sealed,
    };
    Ok(Some(Secret::new(&entity.tax_id, opened)))
}

/// A pending e.firma is checked with the SAT; one whose certificate lapsed since its
/// last check is recorded `expired`.
pub(super) fn due(conn: &Conn, cipher: &Cipher, entity: &Entity) -> anyhow::Result<Due> {
    let Some(summary) = &entity.efirma else {
        return Ok(Due::Nothing);
    };
    let current = summary.current_status();
    if current != EfirmaStatus::Pending && current == summary.status {
        return Ok(Due::Nothing);
    }
    let Some(secret) = unseal(conn, cipher, entity)? else {
        return Ok(Due::Nothing);
    };
    Ok(match current {
        EfirmaStatus::Expired => Due::Record(secret, Verdict::Expired),
        _ => Due::Check(secret),
    })
}

/// The stored e.firma, parsed (it passed every check when uploaded; the clock is not
/// checked here: expiry is the vault's decision).
pub(super) fn efirma(secret: &Secret) -> anyhow::Result<Efirma> {
    let opened: &Opened = secret.opened(NAME)?;
    Efirma::reopen(
        &opened.certificate,
        &opened.key,
        &opened.password,
        secret.tax_id(),
    )
    .map_err(|e| anyhow::anyhow!("the stored e.firma no longer parses: {e}"))
}

pub(super) fn record(
    tx: &Conn,
    entity_id: &str,
    secret: &Secret,
    verdict: Verdict,
) -> anyhow::Result<bool> {
    let opened: &Opened = secret
        .opened(NAME)
        .map_err(|e: SatError| anyhow::anyhow!(e))?;
    let status = match verdict {
        Verdict::Valid => EfirmaStatus::Valid,
        Verdict::Invalid => EfirmaStatus::Invalid,
        Verdict::Expired => EfirmaStatus::Expired,
    };
    db::efirmas::set_status(tx, entity_id, &opened.sealed, status)
}
