//! RSS 2.0 and Atom, read leniently: the items (entries) with what an index needs.

use quarry_sdk::Error;
use quarry_sdk::html::resolve_xml_entity;
use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

/// One item (RSS) or entry (Atom), as text; HTML fields keep their markup.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Item {
    /// `guid` or `id`.
    pub guid: String,
    /// Title (may hold HTML entities or markup).
    pub title: String,
    /// Link to the item's page.
    pub link: String,
    /// `pubDate`, `published`, `updated` or `dc:date`, as written.
    pub date: String,
    /// Author or creator.
    pub author: String,
    /// The fullest body the feed gives: `content:encoded` or Atom `content`, else
    /// `description` or `summary`. HTML.
    pub body: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    Guid,
    Title,
    Link,
    Date,
    Author,
    Summary,
    Content,
}

fn field_of(local: &[u8]) -> Option<Field> {
    Some(match local {
        b"guid" | b"id" => Field::Guid,
        b"title" => Field::Title,
        b"link" => Field::Link,
        b"pubDate" | b"published" | b"updated" | b"date" => Field::Date,
        b"author" | b"creator" => Field::Author,
        b"description" | b"summary" => Field::Summary,
        b"encoded" | b"content" => Field::Content,
        _ => return None,
    })
}

/// The items of an RSS or Atom document. A document with neither `<rss>`/`<rdf:RDF>` nor
/// `<feed>` at its root is an error that says so.
pub fn items(xml: &str) -> Result<Vec<Item>, Error> {
    let mut reader = Reader::from_str(xml);
    let mut items = Vec::new();
    let mut root_seen = false;
    let mut depth = 0usize;
    // Depth of the open item, and the field being read with its depth.
    let mut item: Option<(usize, Item, String)> = None;
    let mut field: Option<(usize, Field, String)> = None;
    loop {
        let event = reader
            .read_event()
            .map_err(|e| Error::Other(format!("the feed is not well-formed XML: {e}")))?;
        match event {
            Event::Start(e) => {
                depth += 1;
                let name = e.local_name();
                if !root_seen {
                    root_seen = true;
                    if !matches!(name.as_ref(), b"rss" | b"RDF" | b"feed") {
                        return Err(not_a_feed(&e));
                    }
                }
                match (&mut item, &field) {
                    (None, _) if matches!(name.as_ref(), b"item" | b"entry") => {
                        item = Some((depth, Item::default(), String::new()));
                    }
                    (Some((at, current, _)), None) if depth == *at + 1 => {
                        if let Some(f) = field_of(name.as_ref()) {
                            if f == Field::Link {
                                take_link(&e, current);
                            }
                            field = Some((depth, f, String::new()));
                        }
                    }
                    _ => {}
                }
            }
            Event::Empty(e) => {
                if !root_seen {
                    return Err(not_a_feed(&e));
                }
                if let Some((at, current, _)) = &mut item
                    && depth == *at
                    && e.local_name().as_ref() == b"link"
                {
                    take_link(&e, current);
                }
            }
            Event::Text(t) => {
                if let Some((_, _, text)) = &mut field {
                    text.push_str(&t.xml_content().unwrap_or_default());
                }
            }
            Event::CData(c) => {
                if let Some((_, _, text)) = &mut field {
                    text.push_str(&String::from_utf8_lossy(&c));
                }
            }
            Event::GeneralRef(r) => {
                if let Some((_, _, text)) = &mut field {
                    let name = r.decode().unwrap_or_default();
                    let resolved = resolve_xml_entity(&name);
                    if resolved.is_empty() {
                        // An HTML entity in HTML content: left for the HTML reader.
                        text.push_str(&format!("&{name};"));
                    } else {
                        text.push_str(&resolved);
                    }
                }
            }
            Event::End(_) => {
                if field.as_ref().is_some_and(|(at, _, _)| *at == depth)
                    && let (Some((_, f, text)), Some((_, current, _))) = (field.take(), &mut item)
                {
                    store(current, f, text);
                }
                if item.as_ref().is_some_and(|(at, _, _)| *at == depth)
                    && let Some((_, done, _)) = item.take()
                {
                    items.push(done);
                }
                depth = depth.saturating_sub(1);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !root_seen {
        return Err(Error::Other(
            "the answer is empty, not an RSS or Atom feed".to_owned(),
        ));
    }
    Ok(items)
}

fn store(item: &mut Item, field: Field, text: String) {
    let text = text.trim().to_owned();
    let slot = match field {
        Field::Guid => &mut item.guid,
        Field::Title => &mut item.title,
        // An Atom link was taken from its attribute; RSS links are text.
        Field::Link if !item.link.is_empty() => return,
        Field::Link => &mut item.link,
        // The first date written wins (`published` before `updated` in most feeds).
        Field::Date if !item.date.is_empty() => return,
        Field::Date => &mut item.date,
        Field::Author => &mut item.author,
        Field::Summary if !item.body.is_empty() => return,
        Field::Summary | Field::Content => &mut item.body,
    };
    *slot = text;
}

/// An Atom `<link href=".." rel="alternate">` (or with no `rel`).
fn take_link(e: &BytesStart<'_>, item: &mut Item) {
    let mut href = None;
    let mut alternate = true;
    for attr in e.attributes().flatten() {
        let value = attr.unescape_value().unwrap_or_default().into_owned();
        match attr.key.local_name().as_ref() {
            b"href" => href = Some(value),
            b"rel" => alternate = value == "alternate",
            _ => {}
        }
    }
    if let Some(href) = href.filter(|_| alternate && item.link.is_empty()) {
        item.link = href;
    }
}

fn not_a_feed(e: &BytesStart<'_>) -> Error {
    Error::InvalidConfig(format!(
        "the URL answers with <{}>, not an RSS or Atom feed; give the feed's own address",
        String::from_utf8_lossy(e.name().as_ref())
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_rss_with_escaped_html_and_cdata() -> Result<(), Error> {
        let rss = r#"<?xml version="1.0"?>
            <rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/">
            <channel><title>Blog</title>
              <item><title>Tom &amp; Jerry</title><link>https://example.com/1</link>
                <guid>tag:1</guid><pubDate>Wed, 25 Nov 2026 10:00:00 GMT</pubDate>
                <description>&lt;p&gt;Short&lt;/p&gt;</description>
                <content:encoded><![CDATA[<p>Long <b>body</b></p>]]></content:encoded></item>
              <item><title>Second</title><description>Plain</description></item>
            </channel></rss>"#;
        let items = items(rss)?;
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].title, "Tom & Jerry");
        assert_eq!(items[0].guid, "tag:1");
        assert_eq!(items[0].link, "https://example.com/1");
        assert_eq!(items[0].body, "<p>Long <b>body</b></p>");
        assert_eq!(items[1].body, "Plain");
        Ok(())
    }

    #[test]
    fn reads_atom_links_and_nested_authors() -> Result<(), Error> {
        let atom = r#"<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title>
            <entry><id>urn:1</id><title type="html">A &lt;i&gt;b&lt;/i&gt;</title>
              <link rel="self" href="https://example.com/self"/>
              <link href="https://example.com/a"/>
              <author><name>Ann</name></author>
              <published>2026-11-25T10:00:00Z</published><updated>2026-11-26T10:00:00Z</updated>
              <summary>S</summary><content type="html">&lt;p&gt;C&lt;/p&gt;</content></entry></feed>"#;
        let items = items(atom)?;
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].link, "https://example.com/a");
        assert_eq!(items[0].author, "Ann");
        assert_eq!(items[0].date, "2026-11-25T10:00:00Z");
        assert_eq!(items[0].body, "<p>C</p>");
        Ok(())
    }

    #[test]
    fn refuses_what_is_not_a_feed() {
        let err = items("<html><body>hi</body></html>").expect_err("html is not a feed");
        assert!(format!("{err:?}").contains("not an RSS or Atom feed"));
        assert!(items("").is_err());
        assert!(items("<rss><channel><item><title>x</rss>").is_err());
    }
}
