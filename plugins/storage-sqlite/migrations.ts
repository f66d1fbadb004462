import type Database from "better-sqlite3";

export interface Migration {
  /** What the step changes, for error messages. */
  description: string;
  up(db: Database.Database): void;
}

/**
 * The schema history. Entry i brings the database to version i + 1 (recorded in `PRAGMA user_version`).
 * Append only: a released step is never edited, a change is a new step.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    description: "sessions, messages with full-text index, events, feed",
    up(db) {
      db.exec(`
        CREATE TABLE sessions (
          id TEXT PRIMARY KEY,
          title TEXT,
          pinned INTEGER NOT NULL DEFAULT 0,
          persona TEXT NOT NULL,
          model TEXT NOT NULL,
          cwd TEXT NOT NULL,
          mode TEXT NOT NULL DEFAULT 'build',
          is_sandbox INTEGER NOT NULL DEFAULT 0,
          share_token TEXT,
          message_count INTEGER NOT NULL DEFAULT 0,
          -- last message seq handed out: appends never scan, and an undone seq is never reused
          msg_seq INTEGER NOT NULL DEFAULT 0,
          event_seq_reserved INTEGER NOT NULL DEFAULT 0,
          usage TEXT NOT NULL,
          meta TEXT NOT NULL DEFAULT '{}',
          created_at TEXT NOT NULL,
          updated_at TEXT NOT NULL
        );
        CREATE INDEX sessions_list_order ON sessions (pinned DESC, updated_at DESC, id DESC);
        CREATE UNIQUE INDEX sessions_share_token ON sessions (share_token) WHERE share_token IS NOT NULL;

        -- "id" is only a stable rowid for the external-content FTS table (a plain rowid may change on VACUUM);
        -- the natural key is (session_id, seq).
        CREATE TABLE messages (
          id INTEGER PRIMARY KEY,
          session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
          seq INTEGER NOT NULL,
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
          -- user/assistant text ('' otherwise), the FTS source; never updated once written
          search_text TEXT NOT NULL DEFAULT '',
          -- 1 when the row counts towards sessions.message_count
          counts INTEGER NOT NULL DEFAULT 0,
          UNIQUE (session_id, seq)
        );
        CREATE INDEX messages_user_turns ON messages (session_id, seq) WHERE role = 'user';
        CREATE INDEX messages_in_context ON messages (session_id, seq) WHERE in_context = 1;
        CREATE INDEX messages_client_id ON messages (session_id, client_message_id)
          WHERE client_message_id IS NOT NULL;

        CREATE VIRTUAL TABLE messages_fts USING fts5 (
          search_text,
          content = 'messages',
          content_rowid = 'id',
          tokenize = 'unicode61 remove_diacritics 2',
          prefix = '2 3'
        );
        -- An external-content index must be told the exact old text on delete; triggers keep that in one place
        -- and also cover deletes cascading from sessions.
        CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages WHEN new.search_text <> '' BEGIN
          INSERT INTO messages_fts (rowid, search_text) VALUES (new.id, new.search_text);
        END;
        CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages WHEN old.search_text <> '' BEGIN
          INSERT INTO messages_fts (messages_fts, rowid, search_text) VALUES ('delete', old.id, old.search_text);
        END;
        CREATE TRIGGER messages_fts_update AFTER UPDATE OF search_text ON messages BEGIN
          INSERT INTO messages_fts (messages_fts, rowid, search_text)
            SELECT 'delete', old.id, old.search_text WHERE old.search_text <> '';
          INSERT INTO messages_fts (rowid, search_text) SELECT new.id, new.search_text WHERE new.search_text <> '';
        END;

        CREATE TABLE events (
          session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
          seq INTEGER NOT NULL,
          ts TEXT NOT NULL,
          type TEXT NOT NULL,
          json TEXT NOT NULL,
          ephemeral INTEGER NOT NULL DEFAULT 0,
          PRIMARY KEY (session_id, seq)
        ) WITHOUT ROWID;

        CREATE TABLE feed (
          seq INTEGER PRIMARY KEY,
          ts TEXT NOT NULL,
          type TEXT NOT NULL,
          json TEXT NOT NULL
        );
      `);
    },
  },
  {
    description: "a trigram index of session titles (GET /sessions?q= without a scan of every title)",
    up(db) {
      db.exec(`
        -- "n" is the stable rowid of the external-content index; one row per session, removed with it.
        CREATE TABLE session_titles (
          n INTEGER PRIMARY KEY,
          session_id TEXT NOT NULL UNIQUE REFERENCES sessions (id) ON DELETE CASCADE,
          title TEXT NOT NULL
        );
        CREATE VIRTUAL TABLE session_titles_fts USING fts5 (
          title,
          content = 'session_titles',
          content_rowid = 'n',
          tokenize = 'trigram'
        );
        CREATE TRIGGER session_titles_fts_insert AFTER INSERT ON session_titles BEGIN
          INSERT INTO session_titles_fts (rowid, title) VALUES (new.n, new.title);
        END;
        CREATE TRIGGER session_titles_fts_delete AFTER DELETE ON session_titles BEGIN
          INSERT INTO session_titles_fts (session_titles_fts, rowid, title) VALUES ('delete', old.n, old.title);
        END;
        CREATE TRIGGER session_titles_fts_update AFTER UPDATE OF title ON session_titles BEGIN
          INSERT INTO session_titles_fts (session_titles_fts, rowid, title) VALUES ('delete', old.n, old.title);
          INSERT INTO session_titles_fts (rowid, title) VALUES (new.n, new.title);
        END;
        CREATE TRIGGER sessions_title_insert AFTER INSERT ON sessions BEGIN
          INSERT INTO session_titles (session_id, title) VALUES (new.id, coalesce(new.title, ''));
        END;
        CREATE TRIGGER sessions_title_update AFTER UPDATE OF title ON sessions BEGIN
          UPDATE session_titles SET title = coalesce(new.title, '') WHERE session_id = new.id;
        END;
        INSERT INTO session_titles (session_id, title) SELECT id, coalesce(title, '') FROM sessions;
      `);
    },
  },
  {
    description:
      "an index of the sessions' working directories (the sessions of a project without a scan); titles indexed " +
      "lower-cased as LIKE compares them (a search's total counted from the title index alone)",
    up(db) {
      db.exec(`
        CREATE INDEX sessions_cwd ON sessions (cwd, id);

        -- The title index matched exactly what LIKE matches: SQLite's lower() and LIKE both fold ASCII letters
        -- only, so a case-sensitive trigram index of lower(title) finds a lower-cased term exactly where LIKE does
        -- (the default tokenizer also folds other letters, e.g. the Kelvin sign to "k", which LIKE does not).
        -- Lower-cased through the old index's triggers, which keep working on the new index (same name).
        DROP TRIGGER sessions_title_insert;
        DROP TRIGGER sessions_title_update;
        UPDATE session_titles SET title = lower(title);
        DROP TABLE session_titles_fts;
        CREATE VIRTUAL TABLE session_titles_fts USING fts5 (
          title,
          content = 'session_titles',
          content_rowid = 'n',
          tokenize = 'trigram case_sensitive 1'
        );
        INSERT INTO session_titles_fts (session_titles_fts) VALUES ('rebuild');
        CREATE TRIGGER sessions_title_insert AFTER INSERT ON sessions BEGIN
          INSERT INTO session_titles (session_id, title) VALUES (new.id, lower(coalesce(new.title, '')));
        END;
        CREATE TRIGGER sessions_title_update AFTER UPDATE OF title ON sessions BEGIN
          UPDATE session_titles SET title = lower(coalesce(new.title, '')) WHERE session_id = new.id;
        END;
      `);
    },
  },
  {
    description: "the full-text indexes merged between writes, not inside them (see index-merger.ts)",
    up(db) {
      db.exec(`
        INSERT INTO messages_fts (messages_fts, rank) VALUES ('automerge', 0);
        INSERT INTO session_titles_fts (session_titles_fts, rank) VALUES ('automerge', 0);
      `);
    },
  },
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings the database up to SCHEMA_VERSION, one transaction per step so a failure leaves the last good version.
 * A database written by a newer build is refused rather than guessed at.
 */
export function migrate(db: Database.Database, file: string, migrations: readonly Migration[] = MIGRATIONS): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > migrations.length) {
    throw new Error(
      `The session database ${file} has schema version ${current}, but this agentd supports up to ` +
        `${migrations.length}. It was written by a newer agentd: upgrade agentd, or use another AGENTD_HOME.`,
    );
  }
  for (let v = current; v < migrations.length; v++) {
    const step = migrations[v];
    if (!step) continue;
    const apply = db.transaction(() => {
      // Another process may have applied this step since the version was read; the write lock makes this exact.
      if ((db.pragma("user_version", { simple: true }) as number) > v) return;
      step.up(db);
      // user_version lives in the header page, so it commits or rolls back with the step.
      db.pragma(`user_version = ${v + 1}`);
    });
    try {
      apply.immediate();
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      throw new Error(
        `Migrating the session database ${file} to version ${v + 1} (${step.description}) failed: ${reason}`,
      );
    }
  }
}
