"""The statements of the PostgreSQL session store; each one is a transaction of its own (autocommit).

Writes that need not survive a crash of the database server (claims, releases, appends with ``durable=False``)
set ``synchronous_commit`` off for their own transaction only (``set_config(..., true)`` inside the statement), so
they do not wait for the WAL flush: they still survive the death of the process that made them, which is all the
log contract asks of them. Durable appends commit with the server's setting (``on`` by default).
"""

_ASYNC = "(SELECT set_config('synchronous_commit', 'off', true)) AS async_commit"

READ_LOG = """
SELECT l.log_id, l.next_seq, r.seq, r.record, r.crc
FROM strandslike_logs AS l
LEFT JOIN strandslike_records AS r ON r.log_id = l.log_id
WHERE l.session_id = %(session_id)s AND l.kind = %(kind)s AND l.owner_id = %(owner_id)s
ORDER BY r.seq
"""

# A claim succeeds if the log is exactly at the version read and nobody holds it, or its holder is dead: its
# owner's session lock is free (the transaction-level try-lock takes it only until this statement commits). A
# claim already holding this token is this very claim, retried after its connection died before the answer came
# (the retry is then harmless).
_FREE = (
    "(l.claim_owner IS NULL OR l.claim_token = %(token)s"
    " OR (l.claim_owner <> %(owner)s AND pg_try_advisory_xact_lock(l.claim_owner)))"
)

CLAIM = f"""
UPDATE strandslike_logs AS l
SET claim_owner = %(owner)s, claim_token = %(token)s, claimed_at = now()
FROM {_ASYNC}
WHERE l.session_id = %(session_id)s AND l.kind = %(kind)s AND l.owner_id = %(owner_id)s
  AND l.log_id = %(log_id)s AND l.next_seq = %(next_seq)s AND {_FREE}
RETURNING l.log_id
"""

CLAIM_NEW = f"""
INSERT INTO strandslike_logs AS l (session_id, kind, owner_id, claim_owner, claim_token, claimed_at)
SELECT %(session_id)s, %(kind)s, %(owner_id)s, %(owner)s, %(token)s, now() FROM {_ASYNC}
ON CONFLICT (session_id, kind, owner_id) DO UPDATE
SET claim_owner = EXCLUDED.claim_owner, claim_token = EXCLUDED.claim_token, claimed_at = now()
WHERE l.next_seq = 0 AND {_FREE}
RETURNING l.log_id
"""

CLAIM_STATE = """
SELECT log_id, next_seq, claim_owner FROM strandslike_logs
WHERE session_id = %(session_id)s AND kind = %(kind)s AND owner_id = %(owner_id)s
"""

RELEASE = f"""
UPDATE strandslike_logs AS l SET claim_owner = NULL, claim_token = NULL, claimed_at = NULL
FROM {_ASYNC}
WHERE l.log_id = %(log_id)s AND l.claim_token = %(token)s
"""

# One statement: check the claim (fencing) and the version, move the version on, insert the records. If the claim
# was lost, the UPDATE matches no row and nothing is inserted.
_APPEND = """
WITH claimed AS (
    UPDATE strandslike_logs AS l SET next_seq = l.next_seq + %(count)s, updated_at = now()
    {extra}
    WHERE l.log_id = %(log_id)s AND l.claim_token = %(token)s AND l.next_seq = %(next_seq)s
    RETURNING l.log_id
)
INSERT INTO strandslike_records (log_id, seq, record, crc)
SELECT claimed.log_id, %(next_seq)s + batch.ord - 1, batch.record, batch.crc
FROM claimed, unnest(%(records)s::text[], %(crcs)s::bigint[]) WITH ORDINALITY AS batch (record, crc, ord)
"""
APPEND_DURABLE = _APPEND.format(extra="")
APPEND = _APPEND.format(extra=f"FROM {_ASYNC}")

CREATE_SESSION = """
INSERT INTO strandslike_sessions (session_id, record) VALUES (%(session_id)s, %(record)s)
ON CONFLICT (session_id) DO NOTHING
RETURNING session_id
"""

READ_SESSION = "SELECT record FROM strandslike_sessions WHERE session_id = %(session_id)s"

LIST_SESSIONS = 'SELECT session_id FROM strandslike_sessions ORDER BY session_id COLLATE "C"'

LIST_LOGS = """
SELECT kind, owner_id FROM strandslike_logs WHERE session_id = %(session_id)s AND next_seq > 0
"""

DELETE_LOGS = "DELETE FROM strandslike_logs WHERE session_id = %(session_id)s"
DELETE_SESSION = "DELETE FROM strandslike_sessions WHERE session_id = %(session_id)s"
