//! The fixture folders the end-to-end tests index: a few files of every kind the folder plugin
//! reads, with fixed modification times, so filters and sorts have known answers.

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// One fixture file: relative path, content, modification time (ms since the Unix epoch).
pub struct FixtureFile {
    /// Path relative to the folder.
    pub path: &'static str,
    /// Bytes.
    pub bytes: Vec<u8>,
    /// Modification time, ms since the Unix epoch.
    pub mtime_ms: i64,
}

impl FixtureFile {
    /// A text file of `text`, modified at `mtime_ms`.
    pub fn text(path: &'static str, text: &str, mtime_ms: i64) -> FixtureFile {
        FixtureFile {
            path,
            bytes: text.as_bytes().to_vec(),
            mtime_ms,
        }
    }
}

/// 2026-03-01T00:00:00Z, the report's time; the others follow a month apart.
pub const MARCH_2026_MS: i64 = 1_772_323_200_000;
/// 30 days.
pub const MONTH_MS: i64 = 30 * 86_400_000;

/// Short English notes on unrelated subjects, a month apart, for semantic search: each of the
/// semantic tests' queries shares no word with its answer.
pub fn topics() -> Vec<FixtureFile> {
    let file =
        |path, text, months| FixtureFile::text(path, text, MARCH_2026_MS + months * MONTH_MS);
    vec![
        file(
            "pets.txt",
            "My dog loves chasing the ball in the park every morning before breakfast.",
            0,
        ),
        file(
            "finance.md",
            "Quarterly revenue grew eight percent while operating costs declined.",
            1,
        ),
        file(
            "baking.txt",
            "Preheat the oven, knead the dough and bake the bread for forty minutes.",
            2,
        ),
        file(
            "travel.txt",
            "The train to the mountains leaves at dawn; pack warm boots and a rain jacket.",
            3,
        ),
    ]
}

/// The "Notes" folder: a 3-page PDF, Markdown, text, a Word document, a binary, and a file
/// whose name is not ASCII.
pub fn notes() -> Vec<FixtureFile> {
    let t = |months: i64| MARCH_2026_MS + months * MONTH_MS;
    vec![
        FixtureFile {
            path: "report.pdf",
            bytes: crate::pdf::pdf(
                "Quarterly Report",
                &[
                    &["Quarterly revenue grew twelve percent"],
                    &["Costs fell sharply in the spring"],
                    &["The outlook remains bright"],
                ],
                true,
            ),
            mtime_ms: t(0),
        },
        FixtureFile {
            path: "plans/plan.md",
            bytes: b"# Plan\n\nRevenue targets for the next quarter. The cafe budget stays.\n"
                .to_vec(),
            mtime_ms: t(1),
        },
        FixtureFile {
            path: "todo.txt",
            bytes: b"Buy milk. Call the bank about revenue forecasts.\n".to_vec(),
            mtime_ms: t(2),
        },
        FixtureFile {
            path: "letter.docx",
            bytes: crate::docx::docx(
                "A Letter",
                &["Dear team,", "Revenue is up and costs are down."],
                "Signed.",
            ),
            mtime_ms: t(3),
        },
        FixtureFile {
            path: "photo.png",
            bytes: b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR not really an image".to_vec(),
            mtime_ms: t(4),
        },
        FixtureFile {
            path: "café menu.txt",
            bytes: "Croissant and crème brûlée.\n".as_bytes().to_vec(),
            mtime_ms: t(5),
        },
    ]
}

/// The "Mail" folder.
pub fn mail() -> Vec<FixtureFile> {
    vec![
        FixtureFile {
            path: "inbox.txt",
            bytes: b"Revenue meeting moved to Friday.\n".to_vec(),
            mtime_ms: MARCH_2026_MS - MONTH_MS,
        },
        FixtureFile {
            path: "spam.html",
            bytes:
                b"<html><head><title>Win</title></head><body><p>You won a prize.</p></body></html>"
                    .to_vec(),
            mtime_ms: MARCH_2026_MS - 2 * MONTH_MS,
        },
    ]
}

/// Writes `files` under `dir` with their modification times.
pub fn write(dir: &Path, files: &[FixtureFile]) {
    for file in files {
        let path = dir.join(file.path);
        fs::create_dir_all(path.parent().expect("has a parent")).expect("mkdir");
        fs::write(&path, &file.bytes).expect("write fixture");
        let mtime =
            UNIX_EPOCH + Duration::from_millis(u64::try_from(file.mtime_ms).expect("positive"));
        set_mtime(&path, mtime);
    }
}

/// Every file under `dir`, at any depth (links not followed).
pub fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            files.extend(files_under(&entry.path()));
        } else if kind.is_file() {
            files.push(entry.path());
        }
    }
    files
}

/// Sets a file's modification time.
pub fn set_mtime(path: &Path, mtime: SystemTime) {
    fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(mtime))
        .expect("set mtime");
}
