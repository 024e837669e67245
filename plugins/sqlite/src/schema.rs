//! Tables as the schema describes them: their root page, and their columns' names in order
//! (read from their `CREATE TABLE` statement).

use crate::{Error, corrupt};

/// A table of the database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    name: String,
    root: i64,
    columns: Vec<String>,
    /// The `INTEGER PRIMARY KEY` column, which is the rowid (stored as NULL in the record).
    rowid_column: Option<usize>,
}

impl Table {
    /// The schema table itself, `sqlite_master`, rooted at page 1.
    pub fn master() -> Table {
        Table {
            name: "sqlite_master".to_owned(),
            root: 1,
            columns: ["type", "name", "tbl_name", "rootpage", "sql"]
                .map(str::to_owned)
                .to_vec(),
            rowid_column: None,
        }
    }

    /// The table `name` rooted at page `root`, created by `sql`.
    pub fn parse(name: &str, root: i64, sql: &str) -> Result<Table, Error> {
        let open = sql
            .find('(')
            .ok_or_else(|| corrupt(format!("{name}'s schema")))?;
        let close = sql
            .rfind(')')
            .ok_or_else(|| corrupt(format!("{name}'s schema")))?;
        if sql[close..].to_ascii_uppercase().contains("WITHOUT ROWID") {
            return Err(Error(format!(
                "{name} is a WITHOUT ROWID table, which this reader does not read"
            )));
        }
        let mut columns = Vec::new();
        let mut rowid_column = None;
        for definition in split_top_level(sql.get(open + 1..close).unwrap_or_default()) {
            let definition = definition.trim();
            let first = definition
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_ascii_uppercase();
            if ["CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN"].contains(&first.as_str()) {
                continue;
            }
            let column = definition
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .trim_matches(|c| matches!(c, '"' | '`' | '[' | ']' | '\''))
                .to_owned();
            let upper = definition.to_ascii_uppercase();
            let words: Vec<&str> = upper.split_whitespace().collect();
            if words.get(1) == Some(&"INTEGER") && upper.contains("PRIMARY KEY") {
                rowid_column = Some(columns.len());
            }
            columns.push(column);
        }
        Ok(Table {
            name: name.to_owned(),
            root,
            columns,
            rowid_column,
        })
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its root page.
    pub fn root(&self) -> i64 {
        self.root
    }

    /// The position of column `name` (any case).
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.eq_ignore_ascii_case(name))
    }

    /// The position of its `INTEGER PRIMARY KEY` column, if it has one.
    pub fn rowid_column(&self) -> Option<usize> {
        self.rowid_column
    }
}

/// `text` split at the commas outside parentheses and quotes.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut quote, mut start) = (0i32, None, 0);
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"' | '`') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => depth -= 1,
            (None, ',') if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_read_from_the_create_statement() {
        let table = Table::parse(
            "urls",
            4,
            "CREATE TABLE urls(id INTEGER PRIMARY KEY AUTOINCREMENT,url LONGVARCHAR,title LONGVARCHAR,visit_count INTEGER DEFAULT 0 NOT NULL,last_visit_time INTEGER NOT NULL, CHECK (visit_count >= 0), UNIQUE(url, title))",
        )
        .expect("parses");
        assert_eq!(table.column("url"), Some(1));
        assert_eq!(table.column("LAST_VISIT_TIME"), Some(4));
        assert_eq!(table.column("check"), None);
        assert_eq!(table.rowid_column(), Some(0));
        assert!(Table::parse("t", 2, "CREATE TABLE t(a TEXT PRIMARY KEY) WITHOUT ROWID").is_err());
    }
}
