//! A file's document: what its listing says of it, its text (through the extractors the folder
//! connector uses), its scanned pages for OCR and its bytes for `read-file`.

use quarry_extract::{self as extract, Kind, kinds};
use quarry_sdk::dav::{Client, percent_decode};
use quarry_sdk::http::Response;
use quarry_sdk::{Content, DocMeta, Error, FileChunk, ScannedPage, stable_id};

use crate::place::Place;
use crate::walk::Found;

/// The document of a file found by the walk, with `version`; `max_bytes` is the largest file
/// whose text is extracted.
pub fn doc_meta(place: &Place, found: &Found, version: String, max_bytes: u64) -> DocMeta {
    let entry = &found.entry;
    let name = found.rel.rsplit('/').next().unwrap_or(&found.rel);
    let size = entry.content_length().unwrap_or(0);
    let served = entry.text("getcontenttype").map(|t| {
        t.split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase()
    });
    let (mime, has_text) = match kinds::by_name(name) {
        Some((kind, mime)) => (mime.to_owned(), kind != Kind::Binary),
        // A name without a known extension: text if its first bytes look like text.
        None => {
            let mime = served.unwrap_or_else(|| "application/octet-stream".to_owned());
            let maybe_text = mime.starts_with("text/") || mime == "application/octet-stream";
            (mime, maybe_text)
        }
    };
    let href = quarry_sdk::dav::href_path(&entry.href).to_owned();
    DocMeta {
        id: stable_id("wd", &found.rel),
        title: name.to_owned(),
        path: Some(found.rel.clone()),
        url: place.url_of(&href).ok(),
        mime_type: mime,
        size_bytes: size,
        update_time_ms: entry.last_modified_ms().unwrap_or(0),
        version,
        has_text: has_text && size <= max_bytes,
        locator: href,
    }
}

/// The version of a file found: its ETag, else its size and modification time.
pub fn version(found: &Found) -> String {
    let entry = &found.entry;
    match entry.etag() {
        Some(etag) => format!("e:{etag}"),
        None => format!(
            "s:{}:{}",
            entry.content_length().unwrap_or(0),
            entry.text("getlastmodified").unwrap_or_default()
        ),
    }
}

/// The texts of the files at `locators`, fetched several at a time.
pub fn contents(
    dav: &Client,
    place: &Place,
    locators: &[&str],
    max_bytes: u64,
) -> Vec<Result<Content, Error>> {
    let urls: Vec<Result<String, Error>> = locators.iter().map(|l| place.url_of(l)).collect();
    let fetchable: Vec<String> = urls.iter().filter_map(|u| u.clone().ok()).collect();
    let mut fetched = dav.get_all(&fetchable).into_iter();
    urls.into_iter()
        .zip(locators)
        .map(|(url, locator)| {
            url?;
            let response = fetched
                .next()
                .unwrap_or_else(|| Err(Error::Other("a response was lost".to_owned())))?;
            text_of(locator, response, max_bytes)
        })
        .collect()
}

/// The text of the file at `locator`, from the server's `response`.
fn text_of(locator: &str, response: Response, max_bytes: u64) -> Result<Content, Error> {
    let size = response.body.len() as u64;
    if size > max_bytes {
        return Ok(Content::text(String::new()).with_meta(
            "skipped",
            format!("{size} bytes, over the {max_bytes} byte limit"),
        ));
    }
    let name = name_of(locator);
    let kind = match kinds::by_name(&name) {
        Some((kind, _)) => kind,
        None => kinds::by_content(&response.body).0,
    };
    extract::from_bytes(kind, response.body)
}

/// The decoded name of the file at `locator`.
fn name_of(locator: &str) -> String {
    percent_decode(locator.rsplit('/').next().unwrap_or(locator))
}

/// Reads by OCR the `pages` of the file at `locator` (an image or a PDF).
pub fn read_scans(
    dav: &Client,
    place: &Place,
    locator: &str,
    pages: &[u32],
) -> Result<Vec<ScannedPage>, Error> {
    let name = name_of(locator);
    let (kind, mime) = kinds::by_name(&name).unwrap_or((Kind::Binary, ""));
    let image = mime.starts_with("image/") && !mime.starts_with("image/svg");
    if kind != Kind::Pdf && !image {
        return Err(Error::Other(format!(
            "{name} is neither an image nor a PDF: nothing to read by OCR"
        )));
    }
    let response = dav.get(&place.url_of(locator)?)?;
    extract::scan::read(kind, &response.body, pages, &name)
}

/// Up to `max_bytes` of the file at `locator` from `offset`, by a range request (a server
/// that ignores ranges sends the whole file, which is cut here).
pub fn read(
    dav: &Client,
    place: &Place,
    locator: &str,
    offset: u64,
    max_bytes: u32,
) -> Result<FileChunk, Error> {
    let url = place.url_of(locator)?;
    let last = offset.saturating_add(u64::from(max_bytes.max(1))) - 1;
    let response = quarry_sdk::http::send(
        dav.request("GET", &url)
            .header("range", &format!("bytes={offset}-{last}")),
    )?;
    // Past the end: 416, with the size in `Content-Range: bytes */SIZE`.
    if response.status == 416 {
        let total_size = range_total(&response).unwrap_or(offset);
        return Ok(FileChunk {
            data: Vec::new(),
            total_size,
        });
    }
    let response = quarry_sdk::dav::checked(&url, response)?;
    if response.status == 206 {
        let total_size = range_total(&response).unwrap_or(offset + response.body.len() as u64);
        let mut data = response.body;
        data.truncate(max_bytes as usize);
        return Ok(FileChunk { data, total_size });
    }
    let total_size = response.body.len() as u64;
    let start = usize::try_from(offset.min(total_size)).unwrap_or(usize::MAX);
    let end = start
        .saturating_add(max_bytes as usize)
        .min(response.body.len());
    Ok(FileChunk {
        data: response.body[start..end].to_vec(),
        total_size,
    })
}

/// The whole size a `Content-Range` header gives (`bytes 0-99/1234`, `bytes */1234`).
fn range_total(response: &Response) -> Option<u64> {
    response
        .header("content-range")?
        .rsplit('/')
        .next()?
        .trim()
        .parse()
        .ok()
}
