//! CSV and TSV to text: one line per record, cells separated by tabs.

/// The records of `source`, cells joined by tabs; malformed records are kept as far as they parse.
pub fn to_text(source: &str, delimiter: u8) -> String {
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(false)
        .flexible(true)
        .from_reader(source.as_bytes());
    let mut out = String::with_capacity(source.len());
    for record in reader.records() {
        let Ok(record) = record else { continue };
        let cells: Vec<&str> = record.iter().map(str::trim).collect();
        if cells.iter().all(|c| c.is_empty()) {
            continue;
        }
        out.push_str(&cells.join("\t"));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unquotes_cells() {
        let text = to_text("name,quote\nAda,\"said \"\"hi\"\", twice\"\n,\n", b',');
        assert_eq!(text, "name\tquote\nAda\tsaid \"hi\", twice\n");
    }
}
