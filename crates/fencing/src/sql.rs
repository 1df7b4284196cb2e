//! `sql`, `sql-strict`, `sql-ignore-rows`: the seeds' conditional `UPDATE` executed by real
//! SQLite (in memory), then judged by rows affected.

use fencesim_model::{
    fence::{CompareScope, Durability, Fence, Verdict, WriteRequest},
    lease::LeaseView,
    Token,
};
use fencesim_planted::{active, Mutant};
use rusqlite::{params, Connection, OptionalExtension as _};

/// The seeds' statement with `<=`: the same token may write again (`sql`, `sql-ignore-rows`).
pub const UPDATE_LE: &str =
    "UPDATE jobs SET output = ?1, fence_token = ?2 WHERE job_id = ?3 AND fence_token <= ?4";
/// The seeds' own form, `<`: one write per epoch (`sql-strict`).
pub const UPDATE_LT: &str =
    "UPDATE jobs SET output = ?1, fence_token = ?2 WHERE job_id = ?3 AND fence_token < ?4";
/// [`UPDATE_LE`] comparing against the highest token of every job (`global`).
pub const UPDATE_LE_GLOBAL: &str = "UPDATE jobs SET output = ?1, fence_token = ?2 \
     WHERE job_id = ?3 AND (SELECT MAX(fence_token) FROM jobs) <= ?4";
/// [`UPDATE_LT`] comparing against the highest token of every job (`global`).
pub const UPDATE_LT_GLOBAL: &str = "UPDATE jobs SET output = ?1, fence_token = ?2 \
     WHERE job_id = ?3 AND (SELECT MAX(fence_token) FROM jobs) < ?4";

/// No condition at all: the `none` mode on a real table (live mode's unfenced SQLite store).
pub const UPDATE_UNFENCED: &str =
    "UPDATE jobs SET output = ?1, fence_token = ?2 WHERE job_id = ?3 AND ?4 = ?4";

const CREATE_TABLE: &str = "CREATE TABLE jobs (job_id TEXT PRIMARY KEY, output TEXT NOT NULL, \
     fence_token INTEGER NOT NULL)";
const DROP_TABLE: &str = "DROP TABLE jobs";
/// -1 rather than 0 so that token 0 (a wrapped counter) still passes `fence_token < ?`.
const INSERT_ROW: &str =
    "INSERT OR IGNORE INTO jobs (job_id, output, fence_token) VALUES (?1, '', -1)";
const SELECT_ROW_TOKEN: &str = "SELECT fence_token FROM jobs WHERE job_id = ?1";
const SELECT_MAX_TOKEN: &str = "SELECT MAX(fence_token) FROM jobs";
const SELECT_ROW: &str = "SELECT output, fence_token FROM jobs WHERE job_id = ?1";

/// Which comparison the statement makes and whether rows affected is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SqlVariant {
    /// `fence_token <= ?`, rows affected checked (`sql`).
    Le,
    /// `fence_token < ?`, rows affected checked (`sql-strict`).
    Lt,
    /// `fence_token <= ?`, rows affected ignored: always reports Accepted. Broken on purpose,
    /// so the checker's I3 must catch it (`sql-ignore-rows`).
    LeIgnoreRows,
    /// [`UPDATE_UNFENCED`]: every write lands (live mode's `none` on a real SQLite file).
    Unfenced,
}

/// The `jobs` table in an in-memory SQLite database. Durable keeps the database across
/// `restart` (it plays the disk); volatile drops and recreates the table.
#[derive(Debug)]
pub struct SqlFence {
    variant: SqlVariant,
    durable: bool,
    global: bool,
    connection: Connection,
}

impl SqlFence {
    /// Creates it.
    pub fn new(
        variant: SqlVariant,
        durability: Durability,
        compare: CompareScope,
    ) -> rusqlite::Result<Self> {
        let durable = durability == Durability::Durable;
        let global = compare == CompareScope::Global;
        let connection = Connection::open_in_memory()?;
        connection.execute(CREATE_TABLE, [])?;
        Ok(SqlFence {
            variant,
            durable,
            global,
            connection,
        })
    }

    /// The same table in a SQLite file shared by several processes (live mode): created if
    /// absent, durable by nature, waiting up to 10 s for another writer's lock.
    pub fn open_file(
        path: &std::path::Path,
        variant: SqlVariant,
        compare: CompareScope,
    ) -> rusqlite::Result<Self> {
        let connection = Connection::open(path)?;
        connection.busy_timeout(std::time::Duration::from_secs(10))?;
        connection.execute(
            &CREATE_TABLE.replacen("CREATE TABLE", "CREATE TABLE IF NOT EXISTS", 1),
            [],
        )?;
        Ok(SqlFence {
            variant,
            durable: true,
            global: compare == CompareScope::Global,
            connection,
        })
    }

    /// The exact statement every write executes.
    pub fn statement(&self) -> &'static str {
        match (self.variant, self.global) {
            (SqlVariant::Le | SqlVariant::LeIgnoreRows, false) => UPDATE_LE,
            (SqlVariant::Le | SqlVariant::LeIgnoreRows, true) => UPDATE_LE_GLOBAL,
            (SqlVariant::Lt, false) => UPDATE_LT,
            (SqlVariant::Lt, true) => UPDATE_LT_GLOBAL,
            (SqlVariant::Unfenced, _) => UPDATE_UNFENCED,
        }
    }

    /// A job's row as stored: `(output, fence_token)`, the token -1 before any accepted write.
    pub fn row(&self, job_id: &str) -> Option<(String, i64)> {
        sqlite(
            self.connection
                .query_row(SELECT_ROW, [job_id], |row| Ok((row.get(0)?, row.get(1)?)))
                .optional(),
            SELECT_ROW,
        )
    }

    fn write_row(&mut self, request: &WriteRequest) -> Verdict {
        let token = to_sql_token(request.token);
        let job_id = request.resource.as_str();
        let statement = self.statement();
        let transaction = sqlite(self.connection.transaction(), "BEGIN");
        sqlite(transaction.execute(INSERT_ROW, [job_id]), INSERT_ROW);
        let stored: i64 = sqlite(
            transaction.query_row(SELECT_ROW_TOKEN, [job_id], |row| row.get(0)),
            SELECT_ROW_TOKEN,
        );
        let compared: i64 = if self.global {
            sqlite(
                transaction.query_row(SELECT_MAX_TOKEN, [], |row| row.get(0)),
                SELECT_MAX_TOKEN,
            )
        } else {
            stored
        };
        let rows_affected = sqlite(
            transaction.execute(statement, params![request.payload, token, job_id, token]),
            statement,
        );
        sqlite(transaction.commit(), "COMMIT");
        assert!(
            rows_affected <= 1,
            "job_id is the primary key, yet {rows_affected} rows changed"
        );

        let previous = from_sql_token(stored);
        if active(Mutant::SqlIgnoresRowsAffected) && self.variant == SqlVariant::Le {
            // The planted bug: `sql` does not check rows affected (as `sql-ignore-rows`).
            return Verdict::Accepted { previous };
        }
        if rows_affected == 1
            || matches!(
                self.variant,
                SqlVariant::LeIgnoreRows | SqlVariant::Unfenced
            )
        {
            return Verdict::Accepted { previous };
        }
        let mut reason = format!(
            "{rows_affected} rows affected: presented token {}, stored token {stored}",
            request.token
        );
        if self.global {
            reason.push_str(&format!(", highest stored token {compared}"));
        }
        Verdict::Rejected {
            accepted: from_sql_token(compared),
            reason,
        }
    }
}

impl Fence for SqlFence {
    fn name(&self) -> String {
        match self.variant {
            SqlVariant::Le => "sql",
            SqlVariant::Lt => "sql-strict",
            SqlVariant::LeIgnoreRows => "sql-ignore-rows",
            SqlVariant::Unfenced => "none",
        }
        .to_string()
    }

    fn write(&mut self, request: &WriteRequest, _lease: Option<&dyn LeaseView>) -> Verdict {
        self.write_row(request)
    }

    fn restart(&mut self) {
        if active(Mutant::SqlVolatileKeepsTable) {
            // The planted bug: a volatile database survives the crash.
            return;
        }
        if !self.durable {
            sqlite(self.connection.execute(DROP_TABLE, []), DROP_TABLE);
            sqlite(self.connection.execute(CREATE_TABLE, []), CREATE_TABLE);
        }
    }
}

/// SQLite INTEGER is i64; a token beyond it cannot be stored, which is a configuration bug
/// (token sources are at most 64 bits wide, and `random-id` is 32).
fn to_sql_token(token: Token) -> i64 {
    i64::try_from(token).unwrap_or_else(|_| {
        panic!("sql fence: token {token} exceeds i64::MAX and cannot be stored in SQLite INTEGER")
    })
}

/// -1 (no accepted write yet) becomes `None`.
fn from_sql_token(stored: i64) -> Option<Token> {
    Token::try_from(stored).ok()
}

/// An in-memory database failing mid-write is a broken internal invariant, not an input error.
fn sqlite<T>(result: rusqlite::Result<T>, statement: &str) -> T {
    result.unwrap_or_else(|error| panic!("sql fence: SQLite failed on `{statement}`: {error}"))
}

#[cfg(test)]
mod tests {
    use std::panic::catch_unwind;

    use super::*;
    use crate::check::{check, write, Op::Restart};

    fn fence(variant: SqlVariant, durability: Durability, compare: CompareScope) -> SqlFence {
        SqlFence::new(variant, durability, compare).expect("in-memory SQLite opens")
    }

    /// Seed 000's statement with named parameters made positional and whitespace collapsed.
    fn seed_form(seed: &str, comparison: &str) -> String {
        let mut text = seed.split_whitespace().collect::<Vec<_>>().join(" ");
        text = text.trim_end_matches(';').replacen(":output", "?1", 1);
        text = text
            .replacen(":token", "?2", 1)
            .replacen(":job_id", "?3", 1);
        text = text.replacen(":token", "?4", 1);
        text.replace("fence_token < ?4", &format!("fence_token {comparison} ?4"))
    }

    const SEED_000: &str = "UPDATE jobs
SET output = :output,
    fence_token = :token
WHERE job_id = :job_id
  AND fence_token < :token;";

    #[test]
    fn statements_are_the_seeds_form() {
        assert_eq!(
            fence(
                SqlVariant::Lt,
                Durability::Durable,
                CompareScope::PerResource
            )
            .statement(),
            seed_form(SEED_000, "<")
        );
        assert_eq!(
            fence(
                SqlVariant::Le,
                Durability::Durable,
                CompareScope::PerResource
            )
            .statement(),
            seed_form(SEED_000, "<=")
        );
        assert_eq!(
            fence(
                SqlVariant::LeIgnoreRows,
                Durability::Durable,
                CompareScope::PerResource
            )
            .statement(),
            UPDATE_LE
        );
        assert_eq!(
            fence(SqlVariant::Le, Durability::Durable, CompareScope::Global).statement(),
            seed_form(SEED_000, "<=").replace(
                "fence_token <= ?4",
                "(SELECT MAX(fence_token) FROM jobs) <= ?4"
            )
        );
        assert_eq!(
            fence(SqlVariant::Lt, Durability::Durable, CompareScope::Global).statement(),
            seed_form(SEED_000, "<").replace(
                "fence_token < ?4",
                "(SELECT MAX(fence_token) FROM jobs) < ?4"
            )
        );
    }

    #[test]
    fn names() {
        assert_eq!(
            fence(
                SqlVariant::Le,
                Durability::Durable,
                CompareScope::PerResource
            )
            .name(),
            "sql"
        );
        assert_eq!(
            fence(
                SqlVariant::Lt,
                Durability::Durable,
                CompareScope::PerResource
            )
            .name(),
            "sql-strict"
        );
        assert_eq!(
            fence(
                SqlVariant::LeIgnoreRows,
                Durability::Durable,
                CompareScope::PerResource
            )
            .name(),
            "sql-ignore-rows"
        );
    }

    #[test]
    fn le_rejects_stale_accepts_equal() {
        check(
            &mut fence(
                SqlVariant::Le,
                Durability::Durable,
                CompareScope::PerResource,
            ),
            None,
            &[
                (write("job-1", 42), "accepted"),
                (
                    write("job-1", 41),
                    "rejected accepted=42: 0 rows affected: presented token 41, stored token 42",
                ),
                (write("job-1", 42), "accepted previous=42"),
                (write("job-1", 43), "accepted previous=42"),
            ],
        );
    }

    #[test]
    fn lt_rejects_stale_and_equal() {
        check(
            &mut fence(
                SqlVariant::Lt,
                Durability::Durable,
                CompareScope::PerResource,
            ),
            None,
            &[
                (write("job-1", 42), "accepted"),
                (
                    write("job-1", 42),
                    "rejected accepted=42: 0 rows affected: presented token 42, stored token 42",
                ),
                (
                    write("job-1", 41),
                    "rejected accepted=42: 0 rows affected: presented token 41, stored token 42",
                ),
                (write("job-1", 43), "accepted previous=42"),
            ],
        );
    }

    #[test]
    fn token_zero_passes_the_strict_compare_on_a_new_row() {
        let mut sql = fence(
            SqlVariant::Lt,
            Durability::Durable,
            CompareScope::PerResource,
        );
        check(&mut sql, None, &[(write("job-1", 0), "accepted")]);
        assert_eq!(sql.row("job-1"), Some(("output of op 1".to_string(), 0)));
    }

    #[test]
    fn ignore_rows_reports_accepted_though_no_row_changed() {
        let mut sql = fence(
            SqlVariant::LeIgnoreRows,
            Durability::Durable,
            CompareScope::PerResource,
        );
        check(
            &mut sql,
            None,
            &[
                (write("job-1", 42), "accepted"),
                // 0 rows affected, reported Accepted: the lie the checker must catch.
                (write("job-1", 41), "accepted previous=42"),
            ],
        );
        assert_eq!(sql.row("job-1"), Some(("output of op 1".to_string(), 42)));
    }

    #[test]
    fn rows_affected_zero_rejected_by_sql_accepted_by_ignore_rows() {
        for (variant, expected) in [
            (
                SqlVariant::Le,
                "rejected accepted=9: 0 rows affected: presented token 8, stored token 9",
            ),
            (SqlVariant::LeIgnoreRows, "accepted previous=9"),
        ] {
            check(
                &mut fence(variant, Durability::Durable, CompareScope::PerResource),
                None,
                &[
                    (write("job-1", 9), "accepted"),
                    (write("job-1", 8), expected),
                ],
            );
        }
    }

    #[test]
    fn accepted_write_stores_output_and_token() {
        let mut sql = fence(
            SqlVariant::Le,
            Durability::Durable,
            CompareScope::PerResource,
        );
        check(
            &mut sql,
            None,
            &[
                (write("job-1", 5), "accepted"),
                (write("job-1", 6), "accepted previous=5"),
            ],
        );
        assert_eq!(sql.row("job-1"), Some(("output of op 2".to_string(), 6)));
        assert_eq!(sql.row("job-2"), None);
    }

    #[test]
    fn global_compare_rejects_a_valid_write_to_another_job() {
        check(
            &mut fence(SqlVariant::Le, Durability::Durable, CompareScope::Global),
            None,
            &[
                (write("job-A", 7), "accepted"),
                (
                    write("job-B", 3),
                    "rejected accepted=7: 0 rows affected: presented token 3, stored token -1, \
                     highest stored token 7",
                ),
                (write("job-B", 7), "accepted"),
                (write("job-A", 8), "accepted previous=7"),
            ],
        );
    }

    fn write_request(resource: &str, token: Token) -> WriteRequest {
        WriteRequest {
            op: token,
            resource: resource.into(),
            lease_scope: resource.into(),
            writer: "worker-0".into(),
            token,
            payload: format!("output of {resource} at {token}"),
        }
    }

    /// Live mode's file database compares as asked (cargo-mutants found `open_file`'s scope
    /// untested), and a second connection to the file sees the first one's writes.
    #[test]
    fn a_file_database_compares_as_asked_and_is_shared() {
        let dir = std::env::temp_dir().join(format!("fencesim-sql-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (compare, job_b) in [
            (CompareScope::PerResource, "accepted"),
            (CompareScope::Global, "rejected"),
        ] {
            let path = dir.join(format!("{compare:?}.db"));
            let _ = std::fs::remove_file(&path);
            let mut first = SqlFence::open_file(&path, SqlVariant::Le, compare).unwrap();
            let verdict = first.write_row(&write_request("job-A", 7));
            assert!(verdict.is_accepted(), "{compare:?}: {verdict:?}");
            let mut second = SqlFence::open_file(&path, SqlVariant::Le, compare).unwrap();
            let verdict = second.write_row(&write_request("job-B", 3));
            assert_eq!(
                if verdict.is_accepted() {
                    "accepted"
                } else {
                    "rejected"
                },
                job_b,
                "{compare:?}: {verdict:?}"
            );
            // The second connection sees job-A's token 7: an older token is refused.
            assert!(!second.write_row(&write_request("job-A", 6)).is_accepted());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn per_job_compare_accepts_the_same_writes() {
        check(
            &mut fence(
                SqlVariant::Le,
                Durability::Durable,
                CompareScope::PerResource,
            ),
            None,
            &[
                (write("job-A", 7), "accepted"),
                (write("job-B", 3), "accepted"),
            ],
        );
    }

    #[test]
    fn durable_restart_keeps_the_database() {
        check(
            &mut fence(
                SqlVariant::Le,
                Durability::Durable,
                CompareScope::PerResource,
            ),
            None,
            &[
                (write("job-1", 42), "accepted"),
                (Restart, "restarted"),
                (
                    write("job-1", 41),
                    "rejected accepted=42: 0 rows affected: presented token 41, stored token 42",
                ),
            ],
        );
    }

    #[test]
    fn volatile_restart_drops_the_table_so_stale_is_accepted() {
        let mut sql = fence(
            SqlVariant::Lt,
            Durability::Volatile,
            CompareScope::PerResource,
        );
        check(
            &mut sql,
            None,
            &[
                (write("job-1", 42), "accepted"),
                (Restart, "restarted"),
                (write("job-1", 41), "accepted"),
            ],
        );
        assert_eq!(sql.row("job-1").map(|(_, token)| token), Some(41));
    }

    #[test]
    fn token_conversion_is_checked() {
        assert_eq!(to_sql_token(i64::MAX as u64), i64::MAX);
        assert_eq!(from_sql_token(-1), None);
        assert_eq!(from_sql_token(0), Some(0));
        let panic = catch_unwind(|| to_sql_token(u64::MAX)).expect_err("u64::MAX must not fit");
        let message = panic
            .downcast_ref::<String>()
            .expect("formatted panic message");
        assert!(message.contains("exceeds i64::MAX"), "{message}");
    }

    fn request(token: Token) -> WriteRequest {
        WriteRequest {
            op: token,
            resource: "job-1".into(),
            lease_scope: "job-1".into(),
            writer: "worker-0".into(),
            token,
            payload: format!("by {token}"),
        }
    }

    /// Live mode: two processes' connections on one file. `sql` rejects the stale token the
    /// other connection's newer write superseded; `Unfenced` (live `none`) overwrites it.
    #[test]
    fn a_shared_file_fences_across_connections_and_unfenced_does_not() {
        let dir = std::env::temp_dir().join(format!("fencesim-sql-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (variant, stale_lands) in [(SqlVariant::Le, false), (SqlVariant::Unfenced, true)] {
            let path = dir.join(format!("{variant:?}.sqlite"));
            let _ = std::fs::remove_file(&path);
            let mut old = SqlFence::open_file(&path, variant, CompareScope::PerResource).unwrap();
            let mut new = SqlFence::open_file(&path, variant, CompareScope::PerResource).unwrap();
            assert!(old.write(&request(1), None).is_accepted());
            assert_eq!(
                new.write(&request(3), None),
                Verdict::Accepted { previous: Some(1) }
            );
            let stale = old.write(&request(1), None);
            assert_eq!(stale.is_accepted(), stale_lands, "{variant:?}: {stale:?}");
            let stored = new.row("job-1").unwrap().1;
            assert_eq!(stored, if stale_lands { 1 } else { 3 }, "{variant:?}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
