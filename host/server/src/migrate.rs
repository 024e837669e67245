//! `quarry migrate --to postgres://...`: a single user's data folder becomes a team's
//! database (docs/team.md).

use anyhow::bail;
use quarry_index::IndexError;
use quarry_store::{DB_FILE, Store};

use crate::setup::{Paths, open_index};

/// Copies the data folder's database into the empty team database at `to`, then opens it as
/// a team host would (which checks the sealing key) and says what comes next.
pub async fn run(paths: &Paths, to: &str) -> anyhow::Result<()> {
    if paths.database.is_some() {
        bail!(
            "--database names a team database already: `migrate` copies a data folder's own database; leave --database (and QUARRY_DATABASE) out"
        );
    }
    let sqlite = paths.data_dir.join(DB_FILE);
    if !sqlite.is_file() {
        bail!(
            "{} holds no database to copy; pass the --data-dir to migrate",
            paths.data_dir.display()
        );
    }
    // A running server would go on writing to the data folder after the copy.
    if let Err(IndexError::Busy) = open_index(paths, true) {
        bail!(
            "`quarry serve` is running on {}: stop it first, so that nothing it writes afterwards is left behind",
            paths.data_dir.display()
        );
    }
    let shown = quarry_store::shown_address(to);
    println!("Copying {} into {shown}:", sqlite.display());
    let copied = Store::copy_to_postgres(&sqlite, &paths.keys_dir, to, |table, rows| {
        println!("  {table:<24} {rows:>10} row(s)");
    })
    .await?;
    let total: u64 = copied.iter().map(|(_, rows)| rows).sum();
    // Opened as a team host opens it: the sealing key is checked and recorded.
    Store::open_postgres(to, &paths.keys_dir)
        .await?
        .close()
        .await;
    println!(
        "Copied {total} row(s). Start this host with --database {shown} (it keeps its index); \
         copy the sealing key in {} to the keys folder of every other host of the team.",
        paths.keys_dir.display()
    );
    Ok(())
}
