-- The sandbox's own store, `sandbox.db` in the data directory, opened only with
-- `--sat sandbox`: the simulated SAT's memory, never part of the service's database.
-- Entity and extraction ids name rows of the service's database (no foreign key
-- across files).

-- State of the built-in sandbox tax authority: which extraction first listed an
-- invoice (withheld XML and late cancellations depend on it).
CREATE TABLE IF NOT EXISTS listings (
    entity_id            TEXT NOT NULL,
    direction            TEXT NOT NULL,
    uuid                 TEXT NOT NULL,
    first_extraction_id  TEXT NOT NULL,
    PRIMARY KEY (entity_id, direction, uuid)
) WITHOUT ROWID;

-- The sandbox's simulation of the SAT's bulk-download web service (e.firma channel):
-- its requests, answered like the SAT's across restarts. `outcome` is decided when the
-- request is made (`ready`, `rejected`, `expired`, `over_maximum`); `verifications`
-- counts the checks, which move a ready request from accepted to finished.
CREATE TABLE IF NOT EXISTS requests (
    id             TEXT PRIMARY KEY,
    rfc            TEXT NOT NULL,
    entity_id      TEXT NOT NULL,
    extraction_id  TEXT NOT NULL,
    direction      TEXT NOT NULL,
    request_type   TEXT NOT NULL,
    window_start   TEXT NOT NULL,
    window_end     TEXT NOT NULL,
    status_filter  TEXT NOT NULL,
    counterpart    TEXT,
    document_type  TEXT,
    complement     TEXT,
    on_behalf_of   TEXT,
    outcome        TEXT NOT NULL,
    documents      INTEGER NOT NULL,
    verifications  INTEGER NOT NULL DEFAULT 0,
    created_at     TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS requests_params
    ON requests (rfc, direction, request_type, window_start, window_end);

-- How many times each simulated package was downloaded (the SAT allows two).
CREATE TABLE IF NOT EXISTS downloads (
    package_id  TEXT PRIMARY KEY,
    request_id  TEXT NOT NULL REFERENCES requests(id) ON DELETE CASCADE,
    downloads   INTEGER NOT NULL
) WITHOUT ROWID;
