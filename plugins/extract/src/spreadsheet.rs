//! Spreadsheets (`.xlsx`, `.ods`) to text with calamine: one page per sheet, the sheet's name on
//! its first line, then its rows, a row per line and its cells separated by tabs. Title, author
//! and dates come from the file's own metadata. Every entry of the package is checked against
//! the bounds of [`Package`] before calamine reads it; the sandbox's memory limit is the
//! backstop behind calamine's own (an OpenDocument sheet that repeats a cell a billion times).

use std::io::{Read, Seek};

use calamine::{Data, Ods, Reader, Xlsx};
use quarry_sdk::{Content, Error};

use super::ooxml::core_properties;
use super::opendocument;
use super::package::Package;

/// Which kind of spreadsheet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Book {
    /// Office Open XML (`.xlsx`), read cell by cell.
    Xlsx,
    /// OpenDocument (`.ods`).
    Ods,
}

/// Extracts the text of a spreadsheet read from `file`.
pub fn to_content<R: Read + Seek>(file: R, book: Book) -> Result<Content, Error> {
    let kind = match book {
        Book::Xlsx => "XLSX",
        Book::Ods => "ODS",
    };
    let mut package = Package::open(file, kind)?;
    package.check_all()?;
    // Metadata that cannot be read is left out; the text stands without it.
    let metadata = match book {
        Book::Xlsx => core_properties(&mut package),
        Book::Ods => opendocument::metadata(&mut package),
    }
    .unwrap_or_default();
    let unreadable =
        |e: &dyn std::fmt::Display| Error::Other(format!("not a readable {kind}: {e}"));
    let file = package.into_inner();
    let pages =
        match book {
            Book::Xlsx => xlsx_sheets(Xlsx::new(file).map_err(|e| unreadable(&e))?)
                .map_err(|e| unreadable(&e))?,
            Book::Ods => ods_sheets(Ods::new(file).map_err(|e| unreadable(&e))?)
                .map_err(|e| unreadable(&e))?,
        };
    let mut content = Content::pages(&pages).with_meta("sheet_count", pages.len().to_string());
    for (key, value) in metadata {
        content = content.with_meta(key, value);
    }
    Ok(content)
}

/// A sheet's text as it is written: its name, then its rows.
struct Sheet {
    text: String,
    row: Option<u32>,
}

impl Sheet {
    fn new(name: &str) -> Sheet {
        Sheet {
            text: name.to_owned(),
            row: None,
        }
    }

    /// Adds the value of the cell at `row` (cells come row by row, left to right).
    fn cell(&mut self, row: u32, value: &Data) {
        let value = value.to_string();
        if value.is_empty() {
            return;
        }
        if self.row == Some(row) {
            self.text.push('\t');
        } else {
            self.text.push('\n');
            self.row = Some(row);
        }
        self.text.push_str(&value);
    }
}

/// Every sheet of a workbook, its cells streamed (no grid of the sheet is built).
fn xlsx_sheets<R: Read + Seek>(mut book: Xlsx<R>) -> Result<Vec<String>, calamine::XlsxError> {
    let mut pages = Vec::new();
    for name in book.sheet_names() {
        let mut sheet = Sheet::new(&name);
        let mut cells = book.worksheet_cells_reader(&name)?;
        while let Some(cell) = cells.next_cell()? {
            let (row, _) = cell.get_position();
            sheet.cell(row, &Data::from(cell.get_value().clone()));
        }
        pages.push(sheet.text);
    }
    Ok(pages)
}

/// Every sheet of an OpenDocument spreadsheet.
fn ods_sheets<R: Read + Seek>(mut book: Ods<R>) -> Result<Vec<String>, calamine::OdsError> {
    let mut pages = Vec::new();
    for name in book.sheet_names() {
        let mut sheet = Sheet::new(&name);
        let range = book.worksheet_range(&name)?;
        for (row, cells) in range.rows().enumerate() {
            for value in cells {
                sheet.cell(u32::try_from(row).unwrap_or(u32::MAX), value);
            }
        }
        pages.push(sheet.text);
    }
    Ok(pages)
}
