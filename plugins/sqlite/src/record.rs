//! SQLite's record format: varints, and a record's header of serial types and its values.

use crate::{Error, corrupt};

/// A column's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// NULL.
    Null,
    /// An integer.
    Integer(i64),
    /// A floating-point number.
    Real(f64),
    /// Text (UTF-8; invalid bytes replaced).
    Text(String),
    /// A blob.
    Blob(Vec<u8>),
}

/// The varint at `at` of `bytes` and its length (1 to 9 bytes).
pub fn varint(bytes: &[u8], at: usize) -> Result<(u64, usize), Error> {
    let mut value = 0u64;
    for i in 0..9 {
        let byte = *bytes
            .get(at + i)
            .ok_or_else(|| corrupt("a number runs past its page"))?;
        if i == 8 {
            return Ok(((value << 8) | u64::from(byte), 9));
        }
        value = (value << 7) | u64::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    Ok((value, 9))
}

/// The values of the record `payload`.
pub fn decode(payload: &[u8]) -> Result<Vec<Value>, Error> {
    let (header_size, n) = varint(payload, 0)?;
    let header_size = usize::try_from(header_size)
        .ok()
        .filter(|h| *h <= payload.len())
        .ok_or_else(|| corrupt("a record's header"))?;
    let mut types = Vec::new();
    let mut at = n;
    while at < header_size {
        let (serial, m) = varint(payload, at)?;
        types.push(serial);
        at += m;
    }
    let mut body = header_size;
    let mut values = Vec::with_capacity(types.len());
    for serial in types {
        let (value, used) = value_of(serial, payload, body)?;
        values.push(value);
        body += used;
    }
    Ok(values)
}

/// The value of serial type `serial` at `at` of `payload`, and its length.
fn value_of(serial: u64, payload: &[u8], at: usize) -> Result<(Value, usize), Error> {
    let bytes = |len: usize| {
        payload
            .get(at..at + len)
            .ok_or_else(|| corrupt("a value runs past its record"))
    };
    let int = |len: usize| -> Result<i64, Error> {
        let b = bytes(len)?;
        let mut n = if b[0] & 0x80 != 0 { -1i64 } else { 0 };
        for byte in b {
            n = (n << 8) | i64::from(*byte);
        }
        Ok(n)
    };
    Ok(match serial {
        0 => (Value::Null, 0),
        1 => (Value::Integer(int(1)?), 1),
        2 => (Value::Integer(int(2)?), 2),
        3 => (Value::Integer(int(3)?), 3),
        4 => (Value::Integer(int(4)?), 4),
        5 => (Value::Integer(int(6)?), 6),
        6 => (Value::Integer(int(8)?), 8),
        7 => {
            let b = bytes(8)?;
            let mut raw = [0u8; 8];
            raw.copy_from_slice(b);
            (Value::Real(f64::from_be_bytes(raw)), 8)
        }
        8 => (Value::Integer(0), 0),
        9 => (Value::Integer(1), 0),
        10 | 11 => return Err(corrupt("a reserved serial type")),
        n => {
            let len = usize::try_from((n - 12) / 2).map_err(|_| corrupt("a value's length"))?;
            let b = bytes(len)?;
            if n % 2 == 0 {
                (Value::Blob(b.to_vec()), len)
            } else {
                (Value::Text(String::from_utf8_lossy(b).into_owned()), len)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_records_read_as_sqlite_writes_them() {
        assert_eq!(varint(&[0x05], 0).ok(), Some((5, 1)));
        assert_eq!(varint(&[0x81, 0x00], 0).ok(), Some((128, 2)));
        assert_eq!(varint(&[0xff; 9], 0).ok(), Some((u64::MAX, 9)));
        // header 4 bytes: NULL, a 1-byte int, 5 bytes of text
        let record = [4, 0, 1, 23, 0xfe, b'h', b'e', b'l', b'l', b'o'];
        assert_eq!(
            decode(&record).ok(),
            Some(vec![
                Value::Null,
                Value::Integer(-2),
                Value::Text("hello".to_owned())
            ])
        );
        assert!(decode(&[9, 0]).is_err(), "a header past the record");
        assert!(decode(&[2, 27]).is_err(), "text past the record");
    }
}
