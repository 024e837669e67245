//! `quarry migrate --to postgres://...`: a single user's data folder becomes a team's
//! database (docs/team.md).

use anyhow::{Context, bail};
use quarry_core::team_log::LogChange;
use quarry_index::{IndexError, encode_record};
use quarry_store::{BoxedError, DB_FILE, Store};

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
    let index = match open_index(paths, true) {
        Err(IndexError::Busy) => bail!(
            "`quarry serve` is running on {}: stop it first, so that nothing it writes afterwards is left behind",
            paths.data_dir.display()
        ),
        opened => opened.context("cannot open the data folder's index")?,
    };
    let shown = quarry_store::shown_address(to);
    println!("Copying {} into {shown}:", sqlite.display());
    // The index's documents, with their vectors, go to the team's index log: every host of
    // the team searches them without reading the sources or computing vectors again.
    let documents = index.export()?.map(|doc| {
        doc.map(|doc| LogChange::Put {
            record: encode_record(&doc),
            connector: doc.info.connector,
            doc: doc.info.doc_id,
            over: None,
        })
        .map_err(BoxedError::from)
    });
    let copied = Store::copy_to_postgres(&sqlite, &paths.keys_dir, to, documents, |table, rows| {
        println!("  {table:<24} {rows:>10} row(s)");
    })
    .await?;
    let total: u64 = copied.iter().map(|(_, rows)| rows).sum();
    // Opened as a team host opens it: the sealing key is checked and recorded. The folders
    // read here are this machine's: their connectors live on this host.
    let team = Store::open_postgres(to, &paths.keys_dir)
        .await?
        .living_on(&paths.host_name);
    let homed = team.home_folders_here().await?;
    team.close().await;
    if homed > 0 {
        println!(
            "{homed} connector(s) read folders of this machine: they live on this host ({:?}), which syncs them once it runs with --database (`quarry connector home` moves them).",
            paths.host_name
        );
    }
    println!(
        "Copied {total} row(s). Start this host with --database {shown}; \
         copy the sealing key in {} to the keys folder of every other host of the team.",
        paths.keys_dir.display()
    );
    Ok(())
}
