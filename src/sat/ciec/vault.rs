//! The CIEC as the service keeps it: sealed on the entity's row with its
//! `credential_status`. Opening it for a call, what a check has to do, and recording a
//! verdict unless the password changed meanwhile.

use super::conversation::Credential;
use crate::crypto::Cipher;
use crate::db::{self, entities::Entity, Conn};
use crate::domain::entity::CredentialStatus;
use crate::sat::{Due, Readiness, SatError, Secret, Verdict};

const NAME: &str = "CIEC";

/// What the channel opened: the login, and the sealed form it came from.
pub(super) struct Opened {
    pub credential: Credential,
    ciphertext: Vec<u8>,
}

pub(super) fn readiness(entity: &Entity) -> Readiness {
    match entity.credential_status {
        CredentialStatus::Valid => Readiness::Ready,
        CredentialStatus::Pending => Readiness::Pending,
        CredentialStatus::Invalid => Readiness::Unusable,
    }
}

pub(super) fn open(cipher: &Cipher, entity: &Entity) -> anyhow::Result<Secret> {
    let opened = Opened {
        credential: Credential {
            tax_id: entity.tax_id.clone(),
            password: cipher.open(&entity.ciec_ciphertext)?,
        },
        ciphertext: entity.ciec_ciphertext.clone(),
    };
    Ok(Secret::new(&entity.tax_id, opened))
}

/// A pending CIEC is checked; a checked one waits for a new password.
pub(super) fn due(cipher: &Cipher, entity: &Entity) -> anyhow::Result<Due> {
    Ok(match entity.credential_status {
        CredentialStatus::Pending => Due::Check(open(cipher, entity)?),
        _ => Due::Nothing,
    })
}

pub(super) fn opened(secret: &Secret) -> Result<&Opened, SatError> {
    secret.opened(NAME)
}

pub(super) fn record(
    tx: &Conn,
    entity_id: &str,
    secret: &Secret,
    verdict: Verdict,
) -> anyhow::Result<bool> {
    let opened = opened(secret)?;
    let status = match verdict {
        Verdict::Valid => CredentialStatus::Valid,
        Verdict::Invalid | Verdict::Expired => CredentialStatus::Invalid,
    };
    let Some(mut current) = db::entities::get_any(tx, entity_id)? else {
        return Ok(false);
    };
    if current.ciec_ciphertext != opened.ciphertext || current.credential_status == status {
        return Ok(false);
    }
    current.credential_status = status;
    current.updated_at = crate::time::now();
    db::entities::update(tx, &current)?;
    Ok(true)
}
