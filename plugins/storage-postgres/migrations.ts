import type { PoolClient } from "pg";

export interface PgMigration {
  /** What the step changes, for error messages. */
  description: string;
  sql: string;
}

/**
 * The schema history. Entry i brings the database to version i + 1 (recorded in `agentd_schema`). Append only: a
 * released step is never edited, a change is a new step.
 *
 * Text columns compare byte-wise (`COLLATE "C"`), so a listing orders like SQLite's whatever the database's locale.
 * Booleans are integers (0/1) and JSON is text: the rows map to records exactly like SQLite's (storage-sqlite/rows).
 */
export const PG_MIGRATIONS: readonly PgMigration[] = [
  {
    description: "sessions, messages with a full-text index, events, feed",
    sql: `
      CREATE TABLE sessions (
        id TEXT COLLATE "C" PRIMARY KEY,
        title TEXT,
        pinned INTEGER NOT NULL DEFAULT 0,
        persona TEXT NOT NULL,
        model TEXT NOT NULL,
        cwd TEXT NOT NULL,
        mode TEXT NOT NULL DEFAULT 'build',
        is_sandbox INTEGER NOT NULL DEFAULT 0,
        share_token TEXT,
        message_count INTEGER NOT NULL DEFAULT 0,
        -- last message seq handed out, under the row's lock: dense and unique whichever daemon appends
        msg_seq BIGINT NOT NULL DEFAULT 0,
        event_seq_reserved BIGINT NOT NULL DEFAULT 0,
        usage TEXT NOT NULL,
        meta TEXT NOT NULL DEFAULT '{}',
        created_at TEXT COLLATE "C" NOT NULL,
        updated_at TEXT COLLATE "C" NOT NULL
      );
      CREATE INDEX sessions_list_order ON sessions (pinned DESC, updated_at DESC, id DESC);
      CREATE UNIQUE INDEX sessions_share_token ON sessions (share_token) WHERE share_token IS NOT NULL;

      -- Words as they are, lower-cased, diacritics folded when the server has the (trusted) unaccent extension.
      DO $do$ BEGIN
        CREATE EXTENSION IF NOT EXISTS unaccent;
      EXCEPTION WHEN OTHERS THEN
        RAISE NOTICE 'unaccent is not available: search will not fold diacritics';
      END $do$;
      CREATE TEXT SEARCH CONFIGURATION agentd_search (COPY = simple);
      DO $do$ BEGIN
        IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'unaccent') THEN
          ALTER TEXT SEARCH CONFIGURATION agentd_search
            ALTER MAPPING FOR hword, hword_part, word WITH unaccent, simple;
        END IF;
      END $do$;

      CREATE TABLE messages (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        session_id TEXT COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        seq BIGINT NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        tool_calls TEXT,
        tool_call_id TEXT,
        tool_name TEXT,
        thinking TEXT,
        client_message_id TEXT,
        in_context INTEGER NOT NULL DEFAULT 1,
        created_at TEXT NOT NULL,
        meta TEXT,
        -- user/assistant text ('' otherwise), the full-text source; never updated once written
        search_text TEXT NOT NULL DEFAULT '',
        search TSVECTOR GENERATED ALWAYS AS (to_tsvector('agentd_search', search_text)) STORED,
        -- 1 when the row counts towards sessions.message_count
        counts INTEGER NOT NULL DEFAULT 0,
        UNIQUE (session_id, seq)
      );
      CREATE INDEX messages_user_turns ON messages (session_id, seq) WHERE role = 'user';
      CREATE INDEX messages_in_context ON messages (session_id, seq) WHERE in_context = 1;
      CREATE INDEX messages_client_id ON messages (session_id, client_message_id)
        WHERE client_message_id IS NOT NULL;
      CREATE INDEX messages_search ON messages USING GIN (search);

      -- A search term as a phrase of prefixes, parsed by PostgreSQL's own parser (so "foo-bar" and "v1.2" match
      -- what to_tsvector made of the text); NULL when the term holds nothing indexable.
      CREATE FUNCTION agentd_prefix_query(term TEXT) RETURNS TSQUERY
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
        AS $fn$
          SELECT CASE WHEN numnode(q) = 0 THEN NULL
            ELSE regexp_replace(q::text, '''(?=\\s|$)', ''':*', 'g')::tsquery END
          FROM phraseto_tsquery('agentd_search', term) AS q
        $fn$;

      CREATE TABLE events (
        session_id TEXT COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        seq BIGINT NOT NULL,
        ts TEXT NOT NULL,
        type TEXT NOT NULL,
        json TEXT NOT NULL,
        ephemeral INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (session_id, seq)
      );

      CREATE TABLE feed (
        seq BIGINT PRIMARY KEY,
        ts TEXT NOT NULL,
        type TEXT NOT NULL,
        json TEXT NOT NULL
      );
    `,
  },
  {
    description: "event numbers given in the appending transaction (the feed's counter row)",
    sql: `
      -- sessions.event_seq_reserved is each session's last event number, bumped under the row's lock by the append.
      CREATE TABLE feed_counter (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        last_seq BIGINT NOT NULL
      );
      INSERT INTO feed_counter (id, last_seq) SELECT 1, COALESCE(MAX(seq), 0) FROM feed;
      UPDATE sessions SET event_seq_reserved =
        GREATEST(event_seq_reserved, (SELECT COALESCE(MAX(seq), 0) FROM events WHERE session_id = sessions.id));
    `,
  },
  {
    description: "the team: daemons' heartbeats, one lease per running turn, commands for a turn's owner",
    sql: `
      -- One row per live daemon, renewed by its heartbeat; a row whose heartbeat is older than the lease timeout
      -- names a daemon that is gone.
      CREATE TABLE team_daemons (
        id TEXT COLLATE "C" PRIMARY KEY,
        host TEXT NOT NULL,
        version TEXT NOT NULL,
        started_at TIMESTAMPTZ NOT NULL,
        heartbeat_at TIMESTAMPTZ NOT NULL
      );
      -- The owner of a session's running turn. The row outlives the turn (owner NULL once released): its fence only
      -- grows, so a write that carries an older fence is refused whoever holds the lease now.
      CREATE TABLE turn_leases (
        session_id TEXT COLLATE "C" PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
        owner TEXT COLLATE "C",
        -- the daemon that ran the last turn (it alone knows that turn's answered confirmations)
        last_owner TEXT COLLATE "C",
        fence BIGINT NOT NULL,
        expires_at TIMESTAMPTZ NOT NULL,
        -- the session's last event number when the turn started (a takeover looks for its end after it)
        after_seq BIGINT NOT NULL,
        started_at TIMESTAMPTZ NOT NULL
      );
      CREATE INDEX turn_leases_owned ON turn_leases (owner) WHERE owner IS NOT NULL;
      -- Turn control posted to a daemon that does not own the turn, for the owner to take (SKIP LOCKED) and answer.
      CREATE TABLE turn_commands (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        idem_key TEXT COLLATE "C" NOT NULL UNIQUE,
        target TEXT COLLATE "C" NOT NULL,
        session_id TEXT COLLATE "C" NOT NULL,
        kind TEXT NOT NULL,
        payload TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        claimed_at TIMESTAMPTZ,
        result TEXT,
        done_at TIMESTAMPTZ
      );
      CREATE INDEX turn_commands_open ON turn_commands (target, id) WHERE claimed_at IS NULL;
    `,
  },
  {
    description: "the daemons' documents: settings, approval rules, trust decisions",
    sql: `
      CREATE TABLE documents (
        name TEXT PRIMARY KEY,
        body TEXT NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL
      );
    `,
  },
  {
    description:
      "an index of the sessions' working directories (the sessions of a project without a scan); the number of " +
      "sessions kept in a counter row (a listing's total without counting every row)",
    sql: `
      -- Byte-wise, so a directory's subdirectories are one range of it (see core/paths directoryRange).
      CREATE INDEX sessions_cwd ON sessions ((cwd COLLATE "C"), id);

      CREATE TABLE session_counter (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        n BIGINT NOT NULL
      );
      CREATE FUNCTION agentd_count_sessions() RETURNS TRIGGER LANGUAGE plpgsql AS $fn$
        BEGIN
          UPDATE session_counter SET n = n + CASE WHEN TG_OP = 'INSERT' THEN 1 ELSE -1 END WHERE id = 1;
          RETURN NULL;
        END
      $fn$;
      -- The trigger's lock on sessions holds other writers until this commits: the count below is exact.
      CREATE TRIGGER sessions_count AFTER INSERT OR DELETE ON sessions
        FOR EACH ROW EXECUTE FUNCTION agentd_count_sessions();
      INSERT INTO session_counter (id, n) SELECT 1, COUNT(*) FROM sessions;
    `,
  },
  {
    description:
      "a trigram index of the titles lower-cased as SQLite's LIKE compares them (ASCII letters only), so a title " +
      "search is an index lookup, not a scan (when the server has the trusted pg_trgm extension)",
    sql: `
      DO $do$ BEGIN
        CREATE EXTENSION IF NOT EXISTS pg_trgm;
      EXCEPTION WHEN OTHERS THEN
        RAISE NOTICE 'pg_trgm is not available: a title search reads every title';
      END $do$;
      DO $do$ BEGIN
        IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
          CREATE INDEX sessions_title_trgm ON sessions USING GIN (lower(title COLLATE "C") gin_trgm_ops);
        END IF;
      END $do$;
    `,
  },
  {
    description:
      "the search indexes without a pending list: a title or message written since the last vacuum is in the " +
      "index itself, so a search never reads such entries one by one, and no write stops to merge them",
    // GIN's fast update keeps new entries in a list that every search reads whole, until a vacuum merges it or it
    // reaches 4 MiB and the write that filled it merges it. A rare word's search at 100,000 sessions took 20 ms
    // instead of 2 (titles); a message write that filled the list took 130-170 ms. Written straight into the index,
    // a message costs ~0.4 ms more at the median and never stops longer than ~35 ms (docs/benchmarks.md). The
    // entries already pending are merged now. Only an optimisation: a role that may not alter an index keeps it.
    sql: `
      DO $do$
      DECLARE ix TEXT;
      BEGIN
        FOREACH ix IN ARRAY ARRAY['sessions_title_trgm', 'messages_search'] LOOP
          IF to_regclass(ix) IS NOT NULL THEN
            BEGIN
              EXECUTE format('ALTER INDEX %I SET (fastupdate = off)', ix);
              PERFORM gin_clean_pending_list(to_regclass(ix));
            EXCEPTION WHEN insufficient_privilege THEN
              RAISE NOTICE '% keeps its pending list: %', ix, SQLERRM;
            END;
          END IF;
        END LOOP;
      END $do$;
    `,
  },
  {
    description:
      "the titles lower-cased in a narrow table of their own with a trigram index, kept by a trigger: a search's " +
      "total counts a common word's titles from a few hundred pages instead of every page of the sessions",
    // With the sessions' rows (~330 bytes each) a count rechecked every page of the table: 100,000 sessions are 33 MB,
    // more than a small server's buffers, and the count of a word in a fifth of the titles took 42-58 ms; from this
    // table 22-25 (docs/benchmarks.md, issue 27). The listing's page still walks the sessions in their order.
    sql: `
      CREATE TABLE session_titles (
        session_id TEXT COLLATE "C" PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
        title TEXT COLLATE "C" NOT NULL
      );
      CREATE FUNCTION agentd_session_title() RETURNS trigger LANGUAGE plpgsql AS $fn$
        BEGIN
          INSERT INTO session_titles (session_id, title) VALUES (NEW.id, lower(coalesce(NEW.title, '') COLLATE "C"))
            ON CONFLICT (session_id) DO UPDATE SET title = EXCLUDED.title;
          RETURN NULL;
        END
      $fn$;
      CREATE TRIGGER sessions_title AFTER INSERT OR UPDATE OF title ON sessions
        FOR EACH ROW EXECUTE FUNCTION agentd_session_title();
      INSERT INTO session_titles (session_id, title) SELECT id, lower(coalesce(title, '') COLLATE "C") FROM sessions;
      DO $do$ BEGIN
        IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
          CREATE INDEX session_titles_trgm ON session_titles USING GIN (title gin_trgm_ops) WITH (fastupdate = off);
        END IF;
      END $do$;
    `,
  },
];

export const PG_SCHEMA_VERSION = PG_MIGRATIONS.length;

/** The advisory lock every daemon takes to migrate: two daemons starting at once migrate once. */
const MIGRATION_LOCK = 0x61_67_65_6e; // "agen"

/**
 * Brings the database up to the last version under a session-level advisory lock, one transaction per step, so a
 * failure leaves the last good version and a daemon starting meanwhile waits, then finds nothing left to do. A
 * database written by a newer build is refused rather than guessed at.
 */
export async function migratePg(client: PoolClient, migrations: readonly PgMigration[] = PG_MIGRATIONS): Promise<void> {
  await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
  try {
    await client.query("CREATE TABLE IF NOT EXISTS agentd_schema (version INTEGER NOT NULL)");
    const res = await client.query<{ version: number }>("SELECT version FROM agentd_schema");
    const current = res.rows[0]?.version ?? 0;
    if (res.rows.length === 0) await client.query("INSERT INTO agentd_schema (version) VALUES (0)");
    if (current > migrations.length) {
      throw new Error(
        `the database has schema version ${current}, but this agentd supports up to ${migrations.length}: ` +
          "it was written by a newer agentd; upgrade agentd",
      );
    }
    for (let v = current; v < migrations.length; v++) {
      const step = migrations[v];
      if (!step) continue;
      try {
        await client.query("BEGIN");
        await client.query(step.sql);
        await client.query("UPDATE agentd_schema SET version = $1", [v + 1]);
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK").catch(() => {});
        const reason = err instanceof Error ? err.message : String(err);
        throw new Error(`migrating to version ${v + 1} (${step.description}) failed: ${reason}`);
      }
    }
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]).catch(() => {});
  }
}
