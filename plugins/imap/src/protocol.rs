//! IMAP's response syntax (RFC 9051, section 9), as far as this connector reads it: a response
//! is a line of atoms, numbers, quoted strings, literals (`{n}` and n bytes) and parenthesised
//! lists. A bracketed part (`BODY[HEADER.FIELDS (MESSAGE-ID)]`, `[UIDVALIDITY 7]`) stays in the
//! atom it belongs to. Every bound here is the connector's, against a hostile server: a line,
//! a literal, a nesting depth.

/// Deepest nesting of lists a response may have.
const MAX_DEPTH: usize = 32;

/// One item of a response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// An atom or a number, as written (`FETCH`, `42`, `\Seen`, `BODY[]`).
    Atom(String),
    /// A quoted string or a literal: bytes.
    Bytes(Vec<u8>),
    /// `NIL`.
    Nil,
    /// A parenthesised list.
    List(Vec<Item>),
}

impl Item {
    /// The atom's text, if this is an atom.
    pub fn atom(&self) -> Option<&str> {
        match self {
            Item::Atom(a) => Some(a),
            _ => None,
        }
    }

    /// A number written as an atom.
    pub fn number(&self) -> Option<u64> {
        self.atom().and_then(|a| a.parse().ok())
    }

    /// The bytes of a string or of an atom (a mailbox name may be either); `None` for `NIL` and
    /// lists.
    pub fn bytes(&self) -> Option<&[u8]> {
        match self {
            Item::Atom(a) => Some(a.as_bytes()),
            Item::Bytes(b) => Some(b),
            _ => None,
        }
    }

    /// The text of a string or an atom (lossy for bytes that are not UTF-8).
    pub fn text(&self) -> Option<String> {
        self.bytes()
            .map(|b| String::from_utf8_lossy(b).into_owned())
    }

    /// The items of a list.
    pub fn list(&self) -> Option<&[Item]> {
        match self {
            Item::List(items) => Some(items),
            _ => None,
        }
    }
}

/// Parses one whole response (its line with its literals inlined, without the final CRLF):
/// the items, in order. The literals' bytes are in `literals`, in the order their `{n}` markers
/// appear.
pub fn parse(line: &[u8], literals: &mut std::vec::IntoIter<Vec<u8>>) -> Result<Vec<Item>, String> {
    let mut parser = Parser {
        line,
        at: 0,
        literals,
    };
    let items = parser.items(0)?;
    if parser.at < line.len() {
        return Err(format!("an unmatched ')' at byte {}", parser.at));
    }
    Ok(items)
}

struct Parser<'a, 'l> {
    line: &'a [u8],
    at: usize,
    literals: &'l mut std::vec::IntoIter<Vec<u8>>,
}

impl Parser<'_, '_> {
    fn items(&mut self, depth: usize) -> Result<Vec<Item>, String> {
        if depth > MAX_DEPTH {
            return Err(format!("lists nested deeper than {MAX_DEPTH}"));
        }
        let mut items = Vec::new();
        loop {
            while self.peek() == Some(b' ') {
                self.at += 1;
            }
            match self.peek() {
                None => return Ok(items),
                Some(b')') => return Ok(items),
                Some(b'(') => {
                    self.at += 1;
                    let inner = self.items(depth + 1)?;
                    if self.peek() != Some(b')') {
                        return Err("a list without its ')'".into());
                    }
                    self.at += 1;
                    items.push(Item::List(inner));
                }
                Some(b'"') => items.push(Item::Bytes(self.quoted()?)),
                Some(b'{') => items.push(Item::Bytes(self.literal()?)),
                Some(_) => {
                    let atom = self.atom()?;
                    items.push(if atom.eq_ignore_ascii_case("NIL") {
                        Item::Nil
                    } else {
                        Item::Atom(atom)
                    });
                }
            }
        }
    }

    fn peek(&self) -> Option<u8> {
        self.line.get(self.at).copied()
    }

    fn quoted(&mut self) -> Result<Vec<u8>, String> {
        self.at += 1;
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => return Err("a quoted string without its closing quote".into()),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    let escaped = self
                        .line
                        .get(self.at + 1)
                        .copied()
                        .ok_or("a quoted string ends in '\\'")?;
                    out.push(escaped);
                    self.at += 2;
                }
                Some(byte) => {
                    out.push(byte);
                    self.at += 1;
                }
            }
        }
    }

    fn literal(&mut self) -> Result<Vec<u8>, String> {
        let end = self.line[self.at..]
            .iter()
            .position(|&b| b == b'}')
            .ok_or("a literal's '{' without its '}'")?;
        self.at += end + 1;
        self.literals
            .next()
            .ok_or_else(|| "a literal marker without its bytes".to_owned())
    }

    /// An atom, with any bracketed part (which may hold spaces and parentheses) inside it.
    fn atom(&mut self) -> Result<String, String> {
        let start = self.at;
        let mut brackets = 0usize;
        while let Some(byte) = self.peek() {
            match byte {
                b'[' => brackets += 1,
                b']' => brackets = brackets.saturating_sub(1),
                b' ' | b'(' | b')' if brackets == 0 => break,
                b'"' | b'{' if brackets == 0 && self.at > start => break,
                _ => {}
            }
            self.at += 1;
        }
        if self.at == start {
            return Err(format!("an unexpected byte at {start}"));
        }
        Ok(String::from_utf8_lossy(&self.line[start..self.at]).into_owned())
    }
}

/// Writes `value` as an IMAP string: quoted when it can be, a literal otherwise (non-ASCII,
/// line breaks, or long). Literals are `{n+}` (LITERAL+, RFC 7888) only when `literal_plus`;
/// otherwise the caller must wait for the server's go-ahead, which [`Command`] does.
pub fn string(value: &[u8]) -> Part {
    let quotable = value.len() < 1024
        && value
            .iter()
            .all(|&b| b.is_ascii() && b != b'\r' && b != b'\n' && b != 0);
    if quotable {
        let mut out = Vec::with_capacity(value.len() + 2);
        out.push(b'"');
        for &b in value {
            if b == b'"' || b == b'\\' {
                out.push(b'\\');
            }
            out.push(b);
        }
        out.push(b'"');
        Part::Text(out)
    } else {
        Part::Literal(value.to_vec())
    }
}

/// A piece of a command: text, or a literal sent after the server says it may be.
#[derive(Debug, Clone)]
pub enum Part {
    /// Bytes sent as they are.
    Text(Vec<u8>),
    /// A literal's bytes.
    Literal(Vec<u8>),
}

impl Part {
    /// Text of an atom or of anything already in IMAP syntax.
    pub fn raw(text: &str) -> Part {
        Part::Text(text.as_bytes().to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(line: &str, literals: Vec<&[u8]>) -> Vec<Item> {
        let mut literals = literals
            .into_iter()
            .map(<[u8]>::to_vec)
            .collect::<Vec<_>>()
            .into_iter();
        parse(line.as_bytes(), &mut literals).expect("parses")
    }

    #[test]
    fn a_fetch_response_with_a_section_and_a_literal() {
        let items = parse_all(
            r#"* 12 FETCH (UID 5 RFC822.SIZE 1234 INTERNALDATE "17-Jul-1996 02:44:25 -0700" BODY[HEADER.FIELDS (MESSAGE-ID)] {20})"#,
            vec![b"Message-ID: <a@b>\r\n\r\n"],
        );
        assert_eq!(items[0], Item::Atom("*".into()));
        assert_eq!(items[1].number(), Some(12));
        let fields = items[3].list().expect("a list");
        assert_eq!(fields[0].atom(), Some("UID"));
        assert_eq!(fields[1].number(), Some(5));
        assert_eq!(
            fields[5].text().as_deref(),
            Some("17-Jul-1996 02:44:25 -0700")
        );
        assert_eq!(fields[6].atom(), Some("BODY[HEADER.FIELDS (MESSAGE-ID)]"));
        assert_eq!(fields[7].bytes(), Some(&b"Message-ID: <a@b>\r\n\r\n"[..]));
    }

    #[test]
    fn list_responses_and_response_codes() {
        let items = parse_all(
            r#"* LIST (\HasNoChildren \Trash) "/" "Deleted \"old\"""#,
            vec![],
        );
        assert_eq!(items[2].list().map(<[Item]>::len), Some(2));
        assert_eq!(items[4].text().as_deref(), Some("Deleted \"old\""));
        let items = parse_all("* OK [UIDVALIDITY 3857529045] UIDs valid", vec![]);
        assert_eq!(items[2].atom(), Some("[UIDVALIDITY 3857529045]"));
        let items = parse_all("* LIST () NIL INBOX", vec![]);
        assert_eq!(items[3], Item::Nil);
    }

    #[test]
    fn hostile_responses_are_errors_not_panics() {
        let deep = format!("* {}", "(".repeat(100));
        for bad in ["* \"open", "* {12", "* (a", "* a)", deep.as_str()] {
            let mut none = Vec::new().into_iter();
            assert!(parse(bad.as_bytes(), &mut none).is_err(), "{bad}");
        }
    }

    #[test]
    fn strings_are_quoted_or_literal() {
        assert!(matches!(string(b"plain"), Part::Text(t) if t == b"\"plain\""));
        assert!(matches!(string(br#"a"b\c"#), Part::Text(t) if t == br#""a\"b\\c""#));
        assert!(matches!(string("pässword".as_bytes()), Part::Literal(_)));
    }
}
