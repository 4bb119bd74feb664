-- cfdi-extract schema, version 8 (src/db/migrate.rs steps older databases forward).
-- Applied idempotently at every start (CREATE ... IF NOT EXISTS); later versions add
-- numbered steps in src/db/migrate.rs and bump PRAGMA user_version.
-- Timestamps set by the service are fixed-width UTC text ("2026-11-21T10:15:30.123456Z"),
-- so text comparison orders them. Money is decimal text, never REAL.

CREATE TABLE IF NOT EXISTS orgs (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    created_at  TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS users (
    id             TEXT PRIMARY KEY,
    org_id         TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    email          TEXT NOT NULL UNIQUE,          -- stored lower-cased
    password_hash  TEXT NOT NULL,                 -- argon2id PHC string
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS entities (
    id                 TEXT PRIMARY KEY,
    org_id             TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    tax_id             TEXT NOT NULL,
    name               TEXT NOT NULL,
    ciec_ciphertext    BLOB NOT NULL,             -- nonce || ChaCha20-Poly1305 ciphertext
    credential_status  TEXT NOT NULL CHECK (credential_status IN ('pending', 'valid', 'invalid')),
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL,
    UNIQUE (org_id, tax_id)
);
CREATE INDEX IF NOT EXISTS entities_org_id ON entities (org_id, id);

CREATE TABLE IF NOT EXISTS extractions (
    id                  TEXT PRIMARY KEY,
    org_id              TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    entity_id           TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    status              TEXT NOT NULL CHECK (status IN ('pending', 'running', 'finished', 'failed')),
    period_from         TEXT NOT NULL,
    period_to           TEXT NOT NULL,
    download_type       TEXT NOT NULL CHECK (download_type IN ('issued', 'received')),
    started_at          TEXT,
    finished_at         TEXT,
    failed_reason       TEXT CHECK (failed_reason IN ('invalid_credentials', 'credentials_not_validated', 'sat_unavailable', 'internal_error',
                                                  'sat_request_limit', 'sat_request_rejected')),
    channel             TEXT CHECK (channel IN ('ciec', 'efirma')), -- decided when the run starts
    invoices_found      INTEGER NOT NULL DEFAULT 0,
    invoices_processed  INTEGER NOT NULL DEFAULT 0,
    progress            INTEGER NOT NULL DEFAULT 0, -- listing entries handled so far (resume point)
    created_at          TEXT NOT NULL,
    updated_at          TEXT NOT NULL,
    schedule_id         TEXT, -- the schedule that started it (no foreign key: runs outlive it)
    document_class      TEXT NOT NULL DEFAULT 'invoices' CHECK (document_class IN ('invoices', 'retentions')),
    uuids               TEXT, -- JSON array: the CFDI a run by UUID fetches (options.uuids); NULL: the period's
    uuids_not_found     TEXT  -- JSON array, once a run by UUID ended: those the SAT did not give
);
CREATE INDEX IF NOT EXISTS extractions_org_id ON extractions (org_id, id);
CREATE INDEX IF NOT EXISTS extractions_entity ON extractions (entity_id, id);
CREATE INDEX IF NOT EXISTS extractions_schedule ON extractions (schedule_id, status)
    WHERE schedule_id IS NOT NULL;

-- Documents a run met whose UUID names another document already stored: the stored
-- one is kept and the run says so (`conflicts` on the extraction object).
CREATE TABLE IF NOT EXISTS extraction_conflicts (
    extraction_id   TEXT NOT NULL REFERENCES extractions(id) ON DELETE CASCADE,
    uuid            TEXT NOT NULL,
    reason          TEXT NOT NULL,
    PRIMARY KEY (extraction_id, uuid)
) WITHOUT ROWID;

-- An entity may have several schedules (`db::schedules` refuses two that would start
-- the same run at the same slot). Exactly one timing is set: every_seconds, daily_at, or
-- monthly_day with monthly_at; a monthly one extracts calendar months (months_before),
-- the others lookback_days. Times are UTC timestamps.
CREATE TABLE IF NOT EXISTS schedules (
    id              TEXT PRIMARY KEY,
    org_id          TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    entity_id       TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    directions      TEXT NOT NULL, -- JSON array: ["issued"], ["received"] or both
    every_seconds   INTEGER,
    daily_at        TEXT,          -- HH:MM, America/Mexico_City
    lookback_days   INTEGER NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('active', 'paused')),
    paused_reason   TEXT,
    next_run_at     TEXT NOT NULL,
    last_run_at     TEXT,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    monthly_day     INTEGER,       -- 1 to 31: a shorter month's last day
    monthly_at      TEXT,          -- HH:MM, America/Mexico_City
    months_before   INTEGER,
    document_classes TEXT          -- JSON array; NULL: ["invoices"]
);
CREATE INDEX IF NOT EXISTS schedules_org_id ON schedules (org_id, id);
CREATE INDEX IF NOT EXISTS schedules_due ON schedules (status, next_run_at);
CREATE INDEX IF NOT EXISTS schedules_entity ON schedules (entity_id);

-- One row per (entity, fiscal UUID). xml_processed = 0 is the metadata-only state:
-- known from the authority's listing, not visible through the API.
CREATE TABLE IF NOT EXISTS invoices (
    id                  TEXT PRIMARY KEY,
    org_id              TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    entity_id           TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    uuid                TEXT NOT NULL,
    direction           TEXT NOT NULL CHECK (direction IN ('issued', 'received')),
    xml_processed       INTEGER NOT NULL DEFAULT 0,
    type                TEXT CHECK (type IN ('I', 'E', 'T', 'N', 'P')),
    version             TEXT,
    series              TEXT,
    folio               TEXT,
    issued_at           TEXT,
    certified_at        TEXT,
    issuer_tax_id       TEXT,
    issuer_name         TEXT,
    issuer_tax_regime   TEXT,
    receiver_tax_id     TEXT,
    receiver_name       TEXT,
    receiver_cfdi_use   TEXT,
    currency            TEXT,
    exchange_rate       TEXT,
    subtotal            TEXT,
    discount            TEXT,
    taxes_transferred   TEXT,
    taxes_withheld      TEXT,
    total               TEXT,
    payment_method      TEXT,
    payment_form        TEXT,
    status              TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'cancelled')),
    cancelled_at        TEXT,
    has_pdf             INTEGER NOT NULL DEFAULT 0,
    paid_amount         TEXT,
    due_amount          TEXT,
    last_payment_date   TEXT,
    fully_paid_at       TEXT,
    payment_conflicts   INTEGER NOT NULL DEFAULT 0,
    outstanding         INTEGER NOT NULL DEFAULT 0, -- due_amount > 0, decided exactly in Rust
    items_json          TEXT,                     -- the first 1,000 concepts (JSON array)
    items_count         INTEGER,                  -- all concepts; the rest are in invoice_item_pages
    payments_json       TEXT,
    stated_taxes_json   TEXT,                     -- cfdi::StatedTaxes; NULL when none
    created_at          TEXT NOT NULL,
    updated_at          TEXT NOT NULL,
    -- The SAT's status service's last answer (sat::status) and the next check's plan.
    sat_state           TEXT CHECK (sat_state IN ('active', 'cancelled', 'not_found', 'not_registered')),
    sat_cancellable     TEXT CHECK (sat_cancellable IN ('not_cancellable', 'without_acceptance', 'with_acceptance')),
    sat_cancellation_status TEXT CHECK (sat_cancellation_status IN ('in_process', 'deadline_passed',
                            'cancelled_with_acceptance', 'cancelled_without_acceptance', 'rejected')),
    sat_efos            TEXT CHECK (sat_efos IN ('listed', 'not_listed', 'unknown')),
    sat_checked_at      TEXT,
    sat_not_found_since TEXT,                     -- the first of the answers in a row that did not find it
    sat_check_at        TEXT,                     -- the next check; NULL: none planned
    sat_check_urgent    INTEGER NOT NULL DEFAULT 0, -- asked for on demand: ahead of the planned ones
    credited_uuid       TEXT,                     -- the one UUID its 01/03 relations name (db/invoices/relations.rs)
    -- The seal's verification (`seal::verify`, version 25): NULL until verified (what
    -- was stored before is verified in the background, `jobs::seals`).
    seal_status         TEXT CHECK (seal_status IN ('valid', 'invalid', 'unverified')),
    seal_awaits         TEXT,                     -- the SAT certificate its stamp waits for
    seal_key            TEXT,                     -- its `seal` object in seal_objects (version 27)
    UNIQUE (entity_id, uuid)
);
-- Listing is newest issued_at first within an organization; the partial indexes keep
-- metadata-only rows out of every listing path.
CREATE INDEX IF NOT EXISTS invoices_org_issued ON invoices (org_id, issued_at DESC, id DESC) WHERE xml_processed = 1;
CREATE INDEX IF NOT EXISTS invoices_entity_issued ON invoices (entity_id, issued_at DESC, id DESC) WHERE xml_processed = 1;
CREATE INDEX IF NOT EXISTS invoices_org_uuid ON invoices (org_id, uuid);
-- Incremental reads (`updated_since`, `order=updated_at_asc`): the changes after a point,
-- in the order they were made, read off an index with no sort.
CREATE INDEX IF NOT EXISTS invoices_org_updated ON invoices (org_id, updated_at, id) WHERE xml_processed = 1;
CREATE INDEX IF NOT EXISTS invoices_entity_updated ON invoices (entity_id, updated_at, id) WHERE xml_processed = 1;
-- The status checker's queue: on-demand checks first, then the planned ones by time.
CREATE INDEX IF NOT EXISTS invoices_sat_check ON invoices (sat_check_urgent DESC, sat_check_at)
    WHERE sat_check_at IS NOT NULL;
-- Checks asked for on demand, by organization: the checker takes them in turns.
CREATE INDEX IF NOT EXISTS invoices_sat_on_demand ON invoices (org_id, sat_check_at)
    WHERE sat_check_urgent = 1;
CREATE INDEX IF NOT EXISTS invoices_org_sat_state ON invoices (org_id, sat_state) WHERE sat_state IS NOT NULL;
-- Each invoice's counterparty (the receiver of an issued one, the issuer of a received
-- one) as the 69-B list keys it: a list load finds the invoices of the taxpayers it
-- changed (its events) without scanning every invoice inside its write transaction.
CREATE INDEX IF NOT EXISTS invoices_counterparty
    ON invoices (upper(iif(direction = 'issued', receiver_tax_id, issuer_tax_id))) WHERE xml_processed = 1;
-- The documents that may credit an invoice (`credited_amount`), found by its UUID one row
-- each, however many relations they write.
CREATE INDEX IF NOT EXISTS invoices_credited ON invoices (entity_id, credited_uuid)
    WHERE credited_uuid IS NOT NULL;
-- The seal verifier's queues (`jobs::seals`): documents never verified, and those whose
-- stamp waits for a SAT certificate.
CREATE INDEX IF NOT EXISTS invoices_seal_pending ON invoices (id) WHERE seal_status IS NULL AND xml_processed = 1;
CREATE INDEX IF NOT EXISTS invoices_seal_awaits ON invoices (seal_awaits) WHERE seal_awaits IS NOT NULL;

-- The SAT's 69-B list (`sat::list_69b`): every load is a version; the entries are the
-- last one's, keyed by RFC (a load replaces them in one transaction).
CREATE TABLE IF NOT EXISTS efos_lists (
    id          INTEGER PRIMARY KEY,
    loaded_at   TEXT NOT NULL,
    updated_to  TEXT,                -- the list's own cut-off date ("actualizada al ...")
    source      TEXT NOT NULL,       -- the file or URL it came from
    sha256      TEXT NOT NULL,
    entries     INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS efos_entries (
    rfc             TEXT PRIMARY KEY,
    list_id         INTEGER NOT NULL REFERENCES efos_lists(id),
    name            TEXT NOT NULL,
    situation       TEXT NOT NULL CHECK (situation IN ('presumed', 'disproved', 'definitive', 'favorable_ruling')),
    presumed_sat    TEXT, presumed_dof   TEXT,
    disproved_sat   TEXT, disproved_dof  TEXT,
    definitive_sat  TEXT, definitive_dof TEXT,
    favorable_sat   TEXT, favorable_dof  TEXT
) WITHOUT ROWID;

-- Concepts past the first 1,000 of an invoice, in pages of 1,000, so no read loads a
-- huge document's items whole.
CREATE TABLE IF NOT EXISTS invoice_item_pages (
    invoice_id  TEXT NOT NULL REFERENCES invoices(id) ON DELETE CASCADE,
    page        INTEGER NOT NULL,   -- items [page * 1000, page * 1000 + 1000)
    items_json  TEXT NOT NULL,
    PRIMARY KEY (invoice_id, page)
) WITHOUT ROWID;

-- The CfdiRelacionados of each processed invoice (TipoRelacion and UUID), in document
-- order, read both ways: an invoice's own (by invoice_id) and those naming it (by entity
-- and UUID), so a related document links whenever it arrives (db/invoices/relations.rs).
-- Each way is read a page at a time in its order off an index: the primary key, and
-- `invoice_relations_named`, which carries the naming invoice's date for its order.
CREATE TABLE IF NOT EXISTS invoice_relations (
    invoice_id     TEXT NOT NULL REFERENCES invoices(id) ON DELETE CASCADE,
    position       INTEGER NOT NULL,
    entity_id      TEXT NOT NULL,
    relation_type  TEXT,
    related_uuid   TEXT NOT NULL,
    invoice_issued_at TEXT NOT NULL DEFAULT '',   -- invoice_id's issued_at (it never changes)
    PRIMARY KEY (invoice_id, position)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS invoice_relations_named
    ON invoice_relations (entity_id, related_uuid, invoice_issued_at, invoice_id, position);
-- How many of each invoice's relations name each UUID: how many name an invoice is a sum
-- over the documents naming it, not a count of their relations (one may name it 100,000
-- times).
CREATE TABLE IF NOT EXISTS invoice_relation_counts (
    invoice_id     TEXT NOT NULL REFERENCES invoices(id) ON DELETE CASCADE,
    related_uuid   TEXT NOT NULL,
    entity_id      TEXT NOT NULL,
    times          INTEGER NOT NULL,
    PRIMARY KEY (invoice_id, related_uuid)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS invoice_relation_counts_named
    ON invoice_relation_counts (entity_id, related_uuid, invoice_id, times);
-- A load under way, in its own transaction (`db::list_69b::replace`): the rows of the
-- list being loaded, then which taxpayers it changes. Both are empty outside a load.
CREATE TABLE IF NOT EXISTS efos_staging (
    rfc             TEXT PRIMARY KEY,
    name            TEXT NOT NULL,
    situation       TEXT NOT NULL,
    presumed_sat    TEXT, presumed_dof   TEXT,
    disproved_sat   TEXT, disproved_dof  TEXT,
    definitive_sat  TEXT, definitive_dof TEXT,
    favorable_sat   TEXT, favorable_dof  TEXT
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS efos_changes (
    rfc             TEXT PRIMARY KEY,
    name            TEXT NOT NULL,
    previous        TEXT,            -- NULL: newly listed
    situation       TEXT             -- NULL: no longer listed
) WITHOUT ROWID;

-- Invoices an extraction (or one imported file) changed, with the first snapshot of
-- what `invoice.updated` compares (NULL: not visible then). When the extraction ends,
-- each becomes at most one invoice event and its row is deleted (events::invoices).
CREATE TABLE IF NOT EXISTS invoice_changes (
    batch_id     TEXT NOT NULL,                  -- the extraction's id, or an import's
    invoice_id   TEXT NOT NULL REFERENCES invoices(id) ON DELETE CASCADE,
    before_json  TEXT,
    PRIMARY KEY (batch_id, invoice_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS invoice_changes_invoice ON invoice_changes (invoice_id);

-- The original XML and PDF. `codec` says how `content` is encoded (db/documents/codec.rs):
-- 'zstd-cfdi1' (XML) and 'zstd' (PDF) since version 8, 'identity' (as received) for rows
-- written before it and for documents compression does not shrink. A rowid table, not
-- WITHOUT ROWID: its rows stay whole in an 8 KiB page up to 8 KiB and fill whole
-- overflow pages past that, where an index b-tree spills anything over 2 KiB into
-- mostly empty overflow pages (3x the size of 5 KiB documents). Databases from before
-- version 8 keep their WITHOUT ROWID table, with `codec` added last, and 4 KiB pages.
--
-- Since version 9 an XML's issuer certificate (its `Certificado` attribute's value) is
-- taken out before compressing and kept once in `certificates`: `certificate_id` names
-- it, and reading puts it back (db/documents/certificate.rs).
CREATE TABLE IF NOT EXISTS certificates (
    id       INTEGER PRIMARY KEY,
    sha256   BLOB NOT NULL UNIQUE,
    content  BLOB NOT NULL
);

CREATE TABLE IF NOT EXISTS documents (
    invoice_id      TEXT NOT NULL REFERENCES invoices(id) ON DELETE CASCADE,
    kind            TEXT NOT NULL CHECK (kind IN ('xml', 'pdf')),
    codec           TEXT NOT NULL DEFAULT 'identity',
    content         BLOB NOT NULL,
    certificate_id  INTEGER REFERENCES certificates(id),
    PRIMARY KEY (invoice_id, kind)
);

-- CFDI de Retenciones e Información de Pagos: a document class of its own (not an invoice
-- type), one row per (entity, fiscal UUID), stored only once its XML is parsed (since
-- version 13). Scalar columns are what lists filter and sort on; the parts of the
-- document the API shows whole are JSON texts written from `retenciones::Retention`.
CREATE TABLE IF NOT EXISTS retentions (
    id                     TEXT PRIMARY KEY,
    org_id                 TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    entity_id              TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    uuid                   TEXT NOT NULL,
    direction              TEXT NOT NULL CHECK (direction IN ('issued', 'received')),
    version                TEXT NOT NULL,
    internal_folio         TEXT,
    issued_at              TEXT NOT NULL,
    certified_at           TEXT,
    retention_key          TEXT,
    retention_description  TEXT,
    issuer_tax_id          TEXT NOT NULL,
    receiver_tax_id        TEXT,
    counterpart_tax_id     TEXT,              -- the issuer's RFC if received, else the receiver's
    period_year            INTEGER,
    period_start_month     INTEGER,
    period_end_month       INTEGER,
    total_operation        TEXT NOT NULL,     -- exact decimal text
    total_withheld         TEXT,
    issuer_json            TEXT NOT NULL,
    receiver_json          TEXT NOT NULL,
    totals_json            TEXT NOT NULL,
    withheld_json          TEXT NOT NULL,
    complements_json       TEXT NOT NULL,
    related_json           TEXT NOT NULL,
    place_of_issue         TEXT,
    status                 TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'cancelled')),
    cancelled_at           TEXT,
    has_pdf                INTEGER NOT NULL DEFAULT 0,
    created_at             TEXT NOT NULL,
    updated_at             TEXT NOT NULL,
    seal_status            TEXT CHECK (seal_status IN ('valid', 'invalid', 'unverified')),
    seal_awaits            TEXT,
    seal_key               TEXT,
    UNIQUE (entity_id, uuid)
);
CREATE INDEX IF NOT EXISTS retentions_org_issued ON retentions (org_id, issued_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS retentions_org_updated ON retentions (org_id, updated_at, id);
CREATE INDEX IF NOT EXISTS retentions_org_uuid ON retentions (org_id, uuid);
CREATE INDEX IF NOT EXISTS retentions_seal_pending ON retentions (id) WHERE seal_status IS NULL;
CREATE INDEX IF NOT EXISTS retentions_seal_awaits ON retentions (seal_awaits) WHERE seal_awaits IS NOT NULL;

-- What the SAT's listings last said of each retention of an entity (version 15): a
-- retention has no metadata-only row, so a run's listing (stage 1) keeps its status
-- here for the XML stored after it (stage 2), and applies it to one already stored.
CREATE TABLE IF NOT EXISTS retention_listings (
    entity_id     TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    uuid          TEXT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('active', 'cancelled')),
    cancelled_at  TEXT,
    PRIMARY KEY (entity_id, uuid)
) WITHOUT ROWID;

-- Which retentions a batch (an extraction, or one imported file) changed, each with
-- its first snapshot in that batch (version 15): `retention.created` and
-- `retention.updated` are coalesced per batch like the invoices' events.
CREATE TABLE IF NOT EXISTS retention_changes (
    batch_id      TEXT NOT NULL,
    retention_id  TEXT NOT NULL REFERENCES retentions(id) ON DELETE CASCADE,
    before_json   TEXT,
    PRIMARY KEY (batch_id, retention_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS retention_changes_retention ON retention_changes (retention_id);

-- A retention's original XML and PDF, in the shape of `documents` (same codecs, same
-- certificates kept once): a table of its own so each file references its own row.
CREATE TABLE IF NOT EXISTS retention_documents (
    retention_id    TEXT NOT NULL REFERENCES retentions(id) ON DELETE CASCADE,
    kind            TEXT NOT NULL CHECK (kind IN ('xml', 'pdf')),
    codec           TEXT NOT NULL DEFAULT 'identity',
    content         BLOB NOT NULL,
    certificate_id  INTEGER REFERENCES certificates(id),
    PRIMARY KEY (retention_id, kind)
);

-- Related-document entries of payment complements (DoctoRelacionado), one row per
-- distinct entry of a complement. Linked to the paid invoice by (entity_id, related_uuid),
-- so a complement that arrives first waits here for its invoice.
CREATE TABLE IF NOT EXISTS payment_entries (
    payment_invoice_id   TEXT NOT NULL REFERENCES invoices(id) ON DELETE CASCADE,
    entity_id            TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    seq                  INTEGER NOT NULL,       -- position in the complement
    related_uuid         TEXT NOT NULL,
    paid_at              TEXT NOT NULL,
    installment          INTEGER,
    previous_balance     TEXT,
    amount_paid          TEXT,
    outstanding_balance  TEXT,
    currency             TEXT,
    equivalence          TEXT,
    PRIMARY KEY (payment_invoice_id, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS payment_entries_related ON payment_entries (entity_id, related_uuid);

CREATE TABLE IF NOT EXISTS webhooks (
    id          TEXT PRIMARY KEY,
    org_id      TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    url         TEXT NOT NULL,
    token       TEXT NOT NULL,                   -- schema 1 kept it in plain text; now '' (written so: a migrated table has no default)
    token_sealed BLOB,                           -- the token, sealed with the data key
    events      TEXT NOT NULL,                   -- JSON array of event names
    created_at  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS webhooks_org_id ON webhooks (org_id, id);

-- The outbox and the events feed (`GET /v1/events`). `event` has no CHECK: its names
-- come from one Rust enum (`events::Kind`), and a new one then needs no table rebuild.
-- Kept `--event-retention-days`, never while a delivery of it is pending.
CREATE TABLE IF NOT EXISTS events (
    id          TEXT PRIMARY KEY,
    org_id      TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    event       TEXT NOT NULL,
    source      TEXT NOT NULL,                   -- "<collection>/<resource id>"
    payload     TEXT NOT NULL,                   -- the exact JSON body delivered
    created_at  TEXT NOT NULL
);
-- The feed's paths: all of an organization's events, one type, one resource.
CREATE INDEX IF NOT EXISTS events_org ON events (org_id, id);
CREATE INDEX IF NOT EXISTS events_org_event ON events (org_id, event, id);
CREATE INDEX IF NOT EXISTS events_org_source ON events (org_id, source, id);
CREATE INDEX IF NOT EXISTS events_created ON events (created_at);

CREATE TABLE IF NOT EXISTS deliveries (
    id               TEXT PRIMARY KEY,
    webhook_id       TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    event_id         TEXT NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    status           TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    response_status  INTEGER,
    last_error       TEXT,
    last_attempt_at  TEXT,
    next_attempt_at  TEXT,
    created_at       TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS deliveries_webhook ON deliveries (webhook_id, id);
-- Purging an event finds (and cascades to) its deliveries.
CREATE INDEX IF NOT EXISTS deliveries_event ON deliveries (event_id, status);

-- Append-only log of delivery attempts (status 0 = transport error).
CREATE TABLE IF NOT EXISTS delivery_attempts (
    delivery_id      TEXT NOT NULL REFERENCES deliveries(id) ON DELETE CASCADE,
    attempt          INTEGER NOT NULL,
    response_status  INTEGER NOT NULL,
    error            TEXT,
    duration_ms      INTEGER NOT NULL,
    attempted_at     TEXT NOT NULL,
    PRIMARY KEY (delivery_id, attempt)
) WITHOUT ROWID;

-- The durable job queue. serial_key serialises jobs that must run in order
-- (one entity's extractions; one resource's deliveries to one webhook).
CREATE TABLE IF NOT EXISTS jobs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    kind        TEXT NOT NULL CHECK (kind IN ('validate_credential', 'run_extraction', 'deliver_webhook')),
    target_id   TEXT NOT NULL,                   -- entity, extraction or delivery id
    serial_key  TEXT,
    org_id      TEXT,                            -- deliveries: whose (fair claiming)
    request_id  TEXT,                            -- the API request that caused it (logs)
    status      TEXT NOT NULL CHECK (status IN ('queued', 'running')),
    attempts    INTEGER NOT NULL DEFAULT 0,
    run_at      TEXT NOT NULL,
    locked_at   TEXT,
    lease_owner TEXT,                            -- running: the instance that holds it
    lease_until TEXT,                            -- running: until when (db/lease.rs)
    last_error  TEXT,
    created_at  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_due ON jobs (status, run_at, id);
CREATE INDEX IF NOT EXISTS jobs_serial ON jobs (serial_key, id) WHERE serial_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS jobs_target ON jobs (target_id);
-- Each worker pool claims through its own index, never scanning the other's backlog.
CREATE INDEX IF NOT EXISTS jobs_deliveries_due ON jobs (run_at, id, org_id)
    WHERE kind = 'deliver_webhook' AND status = 'queued';
-- Deliveries by organization, for claiming past an organization at its share
-- (db/jobs.rs `claim_delivery`).
CREATE INDEX IF NOT EXISTS jobs_deliveries_org ON jobs (COALESCE(org_id, ''), run_at, id)
    WHERE kind = 'deliver_webhook' AND status = 'queued';
CREATE INDEX IF NOT EXISTS jobs_sat_due ON jobs (run_at, id)
    WHERE kind <> 'deliver_webhook' AND status = 'queued';

-- Service-wide values, e.g. `key_check`: a fingerprint of the encryption key the stored
-- credentials are sealed with, so a missing or different key is refused at start.
-- Failed logins per throttle key, when several instances share the database
-- (db/login_failures.rs; one SQLite process counts in memory).
CREATE TABLE IF NOT EXISTS login_failures (
    key       TEXT PRIMARY KEY,                  -- a:ADDRESS or e:ADDRESS:EMAIL-HASH
    failures  INTEGER NOT NULL,
    since     TEXT NOT NULL                      -- when this count began
) WITHOUT ROWID;

-- Each distinct `seal` object of the documents' verifications (`db::seals`), under its
-- key: the first 16 bytes of its SHA-256 in hex. Documents refer to it by `seal_key`;
-- those of one certificate mostly share one (version 27). Never deleted: a key names
-- one content for good.
CREATE TABLE IF NOT EXISTS seal_objects (
    key     TEXT PRIMARY KEY,
    object  TEXT NOT NULL                         -- compact JSON
) WITHOUT ROWID;

-- The SAT's stamping certificates (NoCertificadoSAT → DER), to verify SelloSAT offline
-- (src/seal, sat::certificates): fetched once from the SAT's repository, or loaded
-- from files. Public certificates: nothing secret.
CREATE TABLE IF NOT EXISTS sat_certificates (
    number     TEXT PRIMARY KEY,                 -- 20 digits, the certificate's serial
    der        BLOB NOT NULL,
    source     TEXT NOT NULL CHECK (source IN ('repository', 'file')),
    stored_at  TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS settings (
    name   TEXT PRIMARY KEY,
    value  TEXT NOT NULL
) WITHOUT ROWID;

-- An entity's e.firma (FIEL), for the SAT's bulk-download web service. The certificate
-- is public; the private key and its password are sealed like the CIEC. `status` is the
-- background check's verdict (an authentication with the service); expiry is derived
-- from valid_to when read.
CREATE TABLE IF NOT EXISTS efirmas (
    entity_id            TEXT PRIMARY KEY REFERENCES entities(id) ON DELETE CASCADE,
    certificate          BLOB NOT NULL,           -- DER
    key_ciphertext       BLOB NOT NULL,           -- sealed encrypted-PKCS#8 DER
    password_ciphertext  BLOB NOT NULL,
    serial_number        TEXT NOT NULL,
    rfc                  TEXT NOT NULL,
    holder_name          TEXT NOT NULL,
    issuer               TEXT NOT NULL,
    valid_from           TEXT NOT NULL,
    valid_to             TEXT NOT NULL,
    status               TEXT NOT NULL CHECK (status IN ('pending', 'valid', 'invalid', 'expired')),
    created_at           TEXT NOT NULL,
    updated_at           TEXT NOT NULL
) WITHOUT ROWID;

-- The e.firma channel's requests to the SAT's bulk-download service: one row per
-- (extraction, kind, window), kept for the days the SAT takes to answer. The job that
-- drives them checks back at next_check_at; nothing is asked twice after a restart.
CREATE TABLE IF NOT EXISTS sat_requests (
    id              TEXT PRIMARY KEY,
    extraction_id   TEXT NOT NULL REFERENCES extractions(id) ON DELETE CASCADE,
    entity_id       TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    kind            TEXT NOT NULL CHECK (kind IN ('metadata', 'cfdi')),
    direction       TEXT NOT NULL CHECK (direction IN ('issued', 'received')),
    window_start    TEXT NOT NULL,               -- Mexico City local time, YYYY-MM-DDTHH:MM:SS
    window_end      TEXT NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('new', 'submitted', 'downloading', 'done', 'split')),
    sat_request_id  TEXT,                        -- the SAT's IdSolicitud
    sat_state       INTEGER,                     -- the SAT's last EstadoSolicitud
    cfdi_count      INTEGER,                     -- NumeroCFDIs
    checks          INTEGER NOT NULL DEFAULT 0,  -- verifications made
    remade          INTEGER NOT NULL DEFAULT 0,  -- times asked again after it expired
    next_check_at   TEXT,
    last_code       INTEGER,                     -- the SAT's last CodEstatus / CodigoEstadoSolicitud
    last_message    TEXT,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    folio           TEXT                         -- a CFDI request by UUID (SolicitaDescargaFolio); NULL: by window
);
CREATE INDEX IF NOT EXISTS sat_requests_extraction ON sat_requests (extraction_id, created_at);
CREATE INDEX IF NOT EXISTS sat_requests_live ON sat_requests (entity_id, kind, direction, window_start, window_end);

-- The packages a finished request offers; each may be downloaded twice at the SAT, so
-- every download is counted before it is made.
CREATE TABLE IF NOT EXISTS sat_packages (
    request_id  TEXT NOT NULL REFERENCES sat_requests(id) ON DELETE CASCADE,
    package_id  TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    downloads   INTEGER NOT NULL DEFAULT 0,
    items_done  INTEGER NOT NULL DEFAULT 0,      -- rows or files stored (the resume point)
    done        INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (request_id, package_id)
) WITHOUT ROWID;

-- An Idempotency-Key of a POST (http/idempotency.rs, db/idempotency.rs): per organization
-- and key, the fingerprint of the first request and its answer (sealed with the data
-- key: a webhook's creation answers its token), written in that request's own
-- transaction and replayed to a retry of the same request; kept 24 hours.
CREATE TABLE IF NOT EXISTS idempotency_keys (
    org_id        TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    key           TEXT NOT NULL,
    request_hash  BLOB NOT NULL,                 -- SHA-256 of method, path and body
    status        INTEGER,                       -- the answer's HTTP status
    response      BLOB,                          -- the answer's JSON body, sealed
    created_at    TEXT NOT NULL,
    PRIMARY KEY (org_id, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idempotency_keys_created ON idempotency_keys (created_at);

-- A supplier's DIOT settings, per taxpayer (entity) and supplier RFC: what a CFDI cannot
-- say (operation type, tax effects, border region, why its IVA is not creditable, a
-- foreign supplier's data). `settings` is the JSON object a PUT wrote
-- (`domain::supplier::Supplier::settings`); a supplier without a row takes the defaults.
CREATE TABLE IF NOT EXISTS suppliers (
    org_id      TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    entity_id   TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    tax_id      TEXT NOT NULL,
    settings    TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (entity_id, tax_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS suppliers_org ON suppliers (org_id, entity_id);
