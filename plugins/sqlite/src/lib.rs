//! Reading SQLite databases inside the sandbox: the file format read directly (no C library),
//! read-only, from bytes the connector read, with a write-ahead log's committed pages applied,
//! so an application's database can be read while the application holds it open (a browser's
//! history). Bounded against hostile files: every page is checked before use, a b-tree is
//! walked at most [`MAX_DEPTH`] deep and never through a page twice, and an overflow chain ends
//! after the pages the file has.
//!
//! ```ignore
//! let db = quarry_sqlite::Database::open(main, Some(wal))?;
//! let urls = db.table("urls")?;
//! for row in db.rows(&urls)? {
//!     let url = row.text(&urls, "url");
//! }
//! ```

mod record;
mod schema;
mod wal;

use std::collections::{HashMap, HashSet};

pub use record::Value;
pub use schema::Table;

/// B-trees deeper than this are refused (a real one of a billion rows is about 6 deep).
pub const MAX_DEPTH: usize = 32;

/// Why a database cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

fn corrupt(what: impl Into<String>) -> Error {
    Error(format!("not a readable SQLite database: {}", what.into()))
}

/// A database: its file's pages, with the log's last committed pages over them.
pub struct Database {
    main: Vec<u8>,
    page_size: usize,
    /// Bytes of each page the b-tree may use (the page less its reserved tail).
    usable: usize,
    page_count: usize,
    /// Pages whose newest committed version is in the log, by number.
    logged: HashMap<u32, Vec<u8>>,
}

/// A row of a table: its rowid and its columns' values in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The row's id (an `INTEGER PRIMARY KEY` column's value).
    pub rowid: i64,
    /// The record's values, in column order.
    pub values: Vec<Value>,
}

impl Row {
    /// The value of `column` of `table`: an `INTEGER PRIMARY KEY` column answers the rowid.
    pub fn get(&self, table: &Table, column: &str) -> Value {
        match table.column(column) {
            Some(at) if table.rowid_column() == Some(at) => Value::Integer(self.rowid),
            Some(at) => self.values.get(at).cloned().unwrap_or(Value::Null),
            None => Value::Null,
        }
    }

    /// The value of `column` as text ('' for none).
    pub fn text(&self, table: &Table, column: &str) -> String {
        match self.get(table, column) {
            Value::Text(text) => text,
            Value::Integer(n) => n.to_string(),
            Value::Real(x) => x.to_string(),
            Value::Blob(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Value::Null => String::new(),
        }
    }

    /// The value of `column` as an integer (0 for none).
    pub fn integer(&self, table: &Table, column: &str) -> i64 {
        match self.get(table, column) {
            Value::Integer(n) => n,
            Value::Real(x) => x as i64,
            Value::Text(text) => text.trim().parse().unwrap_or(0),
            _ => 0,
        }
    }
}

impl Database {
    /// The database of file bytes `main` and, when the database is in WAL mode and its log
    /// exists, the log's bytes `wal`.
    pub fn open(main: Vec<u8>, wal: Option<&[u8]>) -> Result<Database, Error> {
        if main.len() < 100 || !main.starts_with(b"SQLite format 3\0") {
            return Err(corrupt("the file does not start as one"));
        }
        let page_size = match u16::from_be_bytes([main[16], main[17]]) {
            1 => 65_536,
            n if n >= 512 && n.is_power_of_two() => usize::from(n),
            n => return Err(corrupt(format!("page size {n}"))),
        };
        let reserved = usize::from(main[20]);
        let usable = page_size
            .checked_sub(reserved)
            .filter(|u| *u >= 480)
            .ok_or_else(|| corrupt("reserved bytes"))?;
        if u32::from_be_bytes([main[56], main[57], main[58], main[59]]) > 1 {
            return Err(Error(
                "the database stores text in UTF-16, which this reader does not read".to_owned(),
            ));
        }
        let logged = match wal {
            Some(bytes) if !bytes.is_empty() => wal::committed_pages(bytes, page_size)?,
            _ => wal::Committed::default(),
        };
        let in_file = main.len() / page_size;
        let page_count = logged.page_count.map_or(in_file, |n| n as usize);
        Ok(Database {
            main,
            page_size,
            usable,
            page_count,
            logged: logged.pages,
        })
    }

    /// Page `number` (counted from 1).
    fn page(&self, number: u32) -> Result<&[u8], Error> {
        if number == 0 || number as usize > self.page_count {
            return Err(corrupt(format!("page {number} is not in the file")));
        }
        if let Some(page) = self.logged.get(&number) {
            return Ok(page);
        }
        let start = (number as usize - 1) * self.page_size;
        self.main
            .get(start..start + self.page_size)
            .ok_or_else(|| corrupt(format!("page {number} is cut short")))
    }

    /// The table named `name` (from the schema, `sqlite_master`).
    pub fn table(&self, name: &str) -> Result<Table, Error> {
        let master = Table::master();
        for row in self.rows(&master)? {
            if row.text(&master, "type") == "table"
                && row.text(&master, "name").eq_ignore_ascii_case(name)
            {
                return Table::parse(
                    &row.text(&master, "name"),
                    row.integer(&master, "rootpage"),
                    &row.text(&master, "sql"),
                );
            }
        }
        Err(Error(format!("the database has no table {name}")))
    }

    /// Every row of `table`, in rowid order.
    pub fn rows(&self, table: &Table) -> Result<Vec<Row>, Error> {
        let root = u32::try_from(table.root()).map_err(|_| corrupt("a table's root page"))?;
        let mut rows = Vec::new();
        let mut seen = HashSet::new();
        self.walk(root, 0, &mut seen, &mut rows)?;
        Ok(rows)
    }

    /// Appends the rows of the table b-tree page `number` and those below it.
    fn walk(
        &self,
        number: u32,
        depth: usize,
        seen: &mut HashSet<u32>,
        rows: &mut Vec<Row>,
    ) -> Result<(), Error> {
        if depth > MAX_DEPTH {
            return Err(corrupt("a b-tree deeper than any real one"));
        }
        if !seen.insert(number) {
            return Err(corrupt(format!("page {number} is reached twice")));
        }
        let page = self.page(number)?;
        let header = if number == 1 { 100 } else { 0 };
        let kind = *page.get(header).ok_or_else(|| corrupt("a page header"))?;
        let cells = usize::from(be16(page, header + 3)?);
        let pointers = header + if kind == 0x05 { 12 } else { 8 };
        for i in 0..cells {
            let cell = usize::from(be16(page, pointers + 2 * i)?);
            match kind {
                0x05 => self.walk(be32(page, cell)?, depth + 1, seen, rows)?,
                0x0D => rows.push(self.leaf_cell(page, cell)?),
                other => return Err(corrupt(format!("page {number} is of kind {other}"))),
            }
        }
        if kind == 0x05 {
            self.walk(be32(page, header + 8)?, depth + 1, seen, rows)?;
        }
        Ok(())
    }

    /// The row in the table leaf cell at `at` of `page`.
    fn leaf_cell(&self, page: &[u8], at: usize) -> Result<Row, Error> {
        let (size, n) = record::varint(page, at)?;
        let (rowid, m) = record::varint(page, at + n)?;
        let start = at + n + m;
        let size = usize::try_from(size).map_err(|_| corrupt("a cell's size"))?;
        let local = self.local_size(size);
        let mut payload = page
            .get(start..start + local)
            .ok_or_else(|| corrupt("a cell runs past its page"))?
            .to_vec();
        if local < size {
            let mut next = be32(page, start + local)?;
            let mut left = self.page_count;
            while payload.len() < size {
                if next == 0 || left == 0 {
                    return Err(corrupt("an overflow chain ends early"));
                }
                left -= 1;
                let overflow = self.page(next)?;
                next = be32(overflow, 0)?;
                let take = (size - payload.len()).min(self.usable - 4);
                payload.extend_from_slice(
                    overflow
                        .get(4..4 + take)
                        .ok_or_else(|| corrupt("an overflow page"))?,
                );
            }
        }
        Ok(Row {
            rowid: rowid as i64,
            values: record::decode(&payload)?,
        })
    }

    /// Bytes of a table leaf cell's payload of `size` kept on its page (the rest overflows).
    fn local_size(&self, size: usize) -> usize {
        let usable = self.usable;
        let most = usable - 35;
        if size <= most {
            return size;
        }
        let least = (usable - 12) * 32 / 255 - 23;
        let k = least + (size - least) % (usable - 4);
        if k <= most { k } else { least }
    }
}

fn be16(bytes: &[u8], at: usize) -> Result<u16, Error> {
    bytes
        .get(at..at + 2)
        .map(|b| u16::from_be_bytes([b[0], b[1]]))
        .ok_or_else(|| corrupt("a number past its page"))
}

fn be32(bytes: &[u8], at: usize) -> Result<u32, Error> {
    bytes
        .get(at..at + 4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or_else(|| corrupt("a number past its page"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs Python's `sqlite3` (the real SQLite library) on `script` in a fresh folder, and
    /// answers the bytes of the files it leaves there: `db` and, if any, `db-wal`.
    fn made_by_sqlite(script: &str) -> (Vec<u8>, Option<Vec<u8>>) {
        static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "quarry-sqlite-{}-{}",
            std::process::id(),
            MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("mkdir");
        let status = std::process::Command::new("python3")
            .arg("-c")
            .arg(script)
            .current_dir(&dir)
            .status()
            .expect("python3 runs");
        assert!(status.success(), "the script failed");
        let main = std::fs::read(dir.join("copy")).expect("the database");
        let wal = std::fs::read(dir.join("copy-wal")).ok();
        let _ = std::fs::remove_dir_all(&dir);
        (main, wal)
    }

    /// A script that fills table `t` (and copies the database while a connection still holds
    /// it, log and all, as a reader beside a running browser sees it).
    const FILL: &str = r#"
import shutil, sqlite3
db = sqlite3.connect("db")
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA wal_autocheckpoint=0")
db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT NOT NULL, n INTEGER, x REAL, b BLOB)")
db.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)",
    [(i, f"row {i} " + "long " * (i % 7 == 0 and 3000 or 2), i * 1000003 - 7, i / 4, bytes([i % 256]) * 3)
     for i in range(1, 3001)])
db.commit()
db.execute("UPDATE t SET name = 'changed after' WHERE id = 2")
db.commit()
db.execute("BEGIN")
db.execute("UPDATE t SET name = 'never committed' WHERE id = 3")
shutil.copy("db", "copy")
shutil.copy("db-wal", "copy-wal")
"#;

    #[test]
    fn a_database_in_wal_mode_reads_as_last_committed() {
        let (main, wal) = made_by_sqlite(FILL);
        assert!(wal.is_some(), "the log was copied");
        let db = Database::open(main, wal.as_deref()).expect("opens");
        let t = db.table("t").expect("table t");
        let rows = db.rows(&t).expect("rows");
        assert_eq!(rows.len(), 3000);
        assert_eq!(rows[0].integer(&t, "id"), 1);
        assert_eq!(rows[1].text(&t, "name"), "changed after");
        assert!(
            rows[2].text(&t, "name").starts_with("row 3 "),
            "uncommitted is left out"
        );
        let long = &rows[6];
        assert_eq!(long.integer(&t, "id"), 7);
        assert_eq!(long.text(&t, "name").len(), "row 7 ".len() + 5 * 3000);
        assert_eq!(long.integer(&t, "n"), 7 * 1_000_003 - 7);
        assert_eq!(long.get(&t, "x"), Value::Real(1.75));
        assert_eq!(long.get(&t, "b"), Value::Blob(vec![7, 7, 7]));
        assert_eq!(rows[2999].integer(&t, "id"), 3000);
    }

    #[test]
    fn without_its_log_the_file_reads_as_last_checkpointed() {
        let (main, _) = made_by_sqlite(FILL);
        // Nothing was checkpointed: the file holds the empty database of before the log.
        let db = Database::open(main, None).expect("opens");
        assert!(db.table("t").is_err());
    }

    #[test]
    fn hostile_files_are_errors_not_panics() {
        let (main, wal) = made_by_sqlite(FILL);
        let wal = wal.expect("a log");
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for round in 0..300 {
            let mut wal = wal.clone();
            let mut main = main.clone();
            for _ in 0..1 + round % 16 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let at = (state as usize) % wal.len();
                wal[at] ^= (state >> 32) as u8 | 1;
                let at = (state >> 16) as usize % main.len();
                main[at] ^= (state >> 40) as u8 | 1;
            }
            if let Ok(db) = Database::open(main, Some(&wal))
                && let Ok(t) = db.table("t")
            {
                let _ = db.rows(&t);
            }
        }
        assert!(Database::open(b"SQLite format 3\0".to_vec(), None).is_err());
    }
}
