import type Database from "better-sqlite3";
import { openDatabase } from "../storage-sqlite/database.js";

export interface MemoryNote {
  id: number;
  content: string;
  /** The project (session cwd) the note belongs to; null for a global note. */
  project: string | null;
  createdAt: string;
}

/**
 * project: this project's notes, then global ones. global: global notes only. all: every project's notes,
 * this project's first.
 */
export type MemoryScope = "project" | "global" | "all";

export interface ScopeFilter {
  scope: MemoryScope;
  /** The current project (session cwd). */
  project: string;
  limit: number;
}

interface NoteRow {
  id: number;
  content: string;
  project: string | null;
  created_at: string;
}

const MIGRATIONS = [
  `CREATE TABLE notes (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     content TEXT NOT NULL,
     project TEXT,
     created_at TEXT NOT NULL
   );
   CREATE INDEX notes_project ON notes(project, id);
   CREATE VIRTUAL TABLE notes_fts USING fts5(content, content='notes', content_rowid='id', tokenize='porter unicode61');
   CREATE TRIGGER notes_ai AFTER INSERT ON notes BEGIN
     INSERT INTO notes_fts(rowid, content) VALUES (new.id, new.content);
   END;
   CREATE TRIGGER notes_ad AFTER DELETE ON notes BEGIN
     INSERT INTO notes_fts(notes_fts, rowid, content) VALUES ('delete', old.id, old.content);
   END;`,
];

/**
 * Turns what the model typed into an FTS5 query that cannot be a syntax error: every whitespace-separated term
 * becomes a quoted string (inner quotes doubled), joined with OR so that bm25 ranks notes matching more terms first.
 */
export function toFtsQuery(input: string): string | undefined {
  const terms = input.split(/\s+/).filter(Boolean).slice(0, 32);
  if (terms.length === 0) return undefined;
  return terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(" OR ");
}

function toNote(row: NoteRow): MemoryNote {
  return { id: row.id, content: row.content, project: row.project, createdAt: row.created_at };
}

/** SQL for a scope; `@project` is bound by the caller. The ORDER BY puts the current project first. */
function scopeSql(scope: MemoryScope): string {
  if (scope === "global") return "n.project IS NULL";
  if (scope === "project") return "(n.project = @project OR n.project IS NULL)";
  return "1";
}

/** The agent's notes across sessions: one SQLite file, safe for concurrent writers (WAL, busy timeout). */
export class MemoryStore {
  private constructor(private readonly db: Database.Database) {}

  static open(file: string): MemoryStore {
    const db = openDatabase(file);
    db.pragma("journal_mode = WAL");
    db.pragma("busy_timeout = 5000");
    const version = db.pragma("user_version", { simple: true }) as number;
    db.transaction(() => {
      for (let v = version; v < MIGRATIONS.length; v++) db.exec(MIGRATIONS[v] ?? "");
      db.pragma(`user_version = ${MIGRATIONS.length}`);
    }).immediate();
    return new MemoryStore(db);
  }

  /** Saves a note; the same text in the same place is not stored twice. */
  save(content: string, project: string | null): { note: MemoryNote; existed: boolean } {
    const save = this.db.transaction(() => {
      const existing = this.db
        .prepare<[string, string | null], NoteRow>("SELECT * FROM notes WHERE content = ? AND project IS ?")
        .get(content, project);
      if (existing) return { note: toNote(existing), existed: true };
      const row = this.db
        .prepare<[string, string | null, string], NoteRow>(
          "INSERT INTO notes(content, project, created_at) VALUES (?, ?, ?) RETURNING *",
        )
        .get(content, project, new Date().toISOString());
      if (!row) throw new Error("the note was not stored");
      return { note: toNote(row), existed: false };
    });
    return save.immediate();
  }

  search(query: string, filter: ScopeFilter): MemoryNote[] {
    const match = toFtsQuery(query);
    if (!match) return [];
    return this.db
      .prepare<{ match: string; project: string; limit: number }, NoteRow>(
        `SELECT n.* FROM notes_fts f JOIN notes n ON n.id = f.rowid
         WHERE notes_fts MATCH @match AND ${scopeSql(filter.scope)}
         ORDER BY (n.project IS @project) DESC, f.rank LIMIT @limit`,
      )
      .all({ match, project: filter.project, limit: filter.limit })
      .map(toNote);
  }

  /** Newest first, the current project's notes before the others. */
  list(filter: ScopeFilter): MemoryNote[] {
    return this.db
      .prepare<{ project: string; limit: number }, NoteRow>(
        `SELECT n.* FROM notes n WHERE ${scopeSql(filter.scope)}
         ORDER BY (n.project IS @project) DESC, n.id DESC LIMIT @limit`,
      )
      .all({ project: filter.project, limit: filter.limit })
      .map(toNote);
  }

  /** Deletes and returns the note, or undefined when there is none with that id. */
  delete(id: number): MemoryNote | undefined {
    const row = this.db.prepare<[number], NoteRow>("DELETE FROM notes WHERE id = ? RETURNING *").get(id);
    return row ? toNote(row) : undefined;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
