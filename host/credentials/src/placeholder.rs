//! Values that stand in for a secret without being one: `<your password>`, `${DB_PASSWORD}`,
//! `YOUR_API_KEY`, `xxxxxxxx`, `AKIAIOSFODNN7EXAMPLE` (the AWS documentation's key). Documents
//! that show how to configure something are full of them and must stay searchable.

/// Words whose presence (in any case) marks a value as an example, not a secret.
const EXAMPLE_WORDS: &[&str] = &[
    "example",
    "sample",
    "dummy",
    "placeholder",
    "changeme",
    "change_me",
    "change-me",
    "your",
    "redacted",
    "replace",
    "insert",
    "notreal",
    "not_real",
    "not-real",
    "fake",
    "xxxx",
    "****",
    "....",
    "<",
    ">",
    "{{",
    "}}",
    "${",
    "%(",
    "%s",
    "secret_here",
    "token_here",
    "key_here",
    "password_here",
];

/// Passwords of documentation and tests: a value that is one of them stands in for a password
/// (`user:password@host`, RFC 7617's `Aladdin:opensesame`).
const STAND_IN_PASSWORDS: &[&str] = &[
    "password",
    "passwd",
    "pass",
    "pwd",
    "secret",
    "opensesame",
    "changeme",
    "test",
    "testing",
    "admin",
    "root",
    "guest",
    "demo",
    "example",
    "default",
    "letmein",
    "foobar",
    "foo",
    "bar",
    "hunter2",
    "pa55word",
    "p4ssw0rd",
    "s3cr3t",
    "mypassword",
    "yourpassword",
    "correcthorsebatterystaple",
];

/// Words that name a secret: a value holding one (`test-m2m-secret`, `refresh-token`,
/// `secret123`) is a name or a fixture, not a secret.
const SECRET_WORDS: &[&str] = &[
    "secret",
    "token",
    "password",
    "passwd",
    "credential",
    "apikey",
    "api-key",
    "api_key",
];

/// Runs of characters people type in place of a value.
const FILLERS: &[u8] = b"xX*.-_0#?";

/// Whether `value` is a stand-in for a secret: it holds an example word or template syntax,
/// is made of filler characters, or repeats one character.
pub(crate) fn is_placeholder(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    if EXAMPLE_WORDS.iter().any(|w| lower.contains(w)) {
        return true;
    }
    let bytes = value.as_bytes();
    if bytes.iter().all(|b| FILLERS.contains(b)) {
        return true;
    }
    let distinct = {
        let mut seen = [false; 256];
        bytes.iter().for_each(|&b| seen[usize::from(b)] = true);
        seen.iter().filter(|&&s| s).count()
    };
    distinct <= 2 || is_sequence(&lower)
}

/// Whether `value` is a password of documentation or tests (see [`STAND_IN_PASSWORDS`]).
pub(crate) fn is_stand_in_password(value: &str) -> bool {
    // Compared by letters and digits alone: `correct%20horse%20battery%20staple` too.
    let plain: String = value
        .replace("%20", "")
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase();
    STAND_IN_PASSWORDS.iter().any(|p| plain == *p)
}

/// Whether `value` spells out the name of a secret (see [`SECRET_WORDS`]).
pub(crate) fn names_a_secret(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    SECRET_WORDS.iter().any(|w| lower.contains(w))
}

/// Whether `value` names where a secret comes from instead of holding it: an environment
/// variable (`$TOKEN`, `%TOKEN%`, `env:TOKEN`), a constant's name (`API_TOKEN`), or a reference
/// in some configuration language (`@secret`, `!vault`, `secret://`).
pub(crate) fn is_reference(value: &str) -> bool {
    let first = value.as_bytes().first().copied().unwrap_or(b' ');
    if matches!(first, b'$' | b'%' | b'@' | b'!' | b'&' | b'*') {
        return true;
    }
    let lower = value.to_ascii_lowercase();
    if [
        "env:",
        "env.",
        "vault:",
        "secret://",
        "secrets.",
        "process.env",
        "os.environ",
    ]
    .iter()
    .any(|p| lower.starts_with(p) || lower.contains(p))
    {
        return true;
    }
    // A constant's name: capitals, digits and underscores, at least one underscore or a word
    // such as TOKEN.
    value.len() >= 3
        && value
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        && value.bytes().any(|b| b.is_ascii_uppercase())
        && (value.contains('_') || value.len() <= 16)
}

/// Whether `lower` is (most of) a keyboard or counting sequence: `123456789`, `abcdefgh`,
/// `qwertyuiop`.
fn is_sequence(lower: &str) -> bool {
    const SEQUENCES: &[&str] = &[
        "0123456789",
        "1234567890",
        "abcdefghijklmnopqrstuvwxyz",
        "qwertyuiop",
        "asdfghjkl",
    ];
    // A value that is part of a sequence, or a short one mostly made of one: a long random
    // token may hold a run of digits by chance.
    lower.len() >= 6
        && SEQUENCES.iter().any(|s| {
            s.contains(lower) || (lower.len() <= 16 && lower.contains(&s[..s.len().min(8)]))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stand_ins_are_placeholders() {
        for value in [
            "<your password>",
            "YOUR_API_KEY",
            "AKIAIOSFODNN7EXAMPLE",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "xxxxxxxxxxxxxxxx",
            "********",
            "{{ db_password }}",
            "${DB_PASSWORD}",
            "changeme",
            "12345678",
            "abcdefgh",
            "my-secret-token-here-REDACTED",
        ] {
            assert!(is_placeholder(value), "{value}");
        }
    }

    #[test]
    fn random_values_are_not_placeholders() {
        for value in [
            "Tr0ub4dor&3x!",
            "ghp_R8x2kLq9ZtW4mN7vB3cY6dH1fJ5sA0gE2uPo",
            "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
            "correct-horse-battery-staple-42",
        ] {
            assert!(!is_placeholder(value), "{value}");
        }
    }

    #[test]
    fn documentation_passwords_and_values_naming_a_secret_are_told() {
        for value in ["password", "Aladdin", "opensesame", "pass"] {
            assert_eq!(is_stand_in_password(value), value != "Aladdin", "{value}");
        }
        for value in [
            "test-m2m-secret",
            "refresh-token",
            "secret123",
            "yegor256/home#assets/crates-credentials",
        ] {
            assert!(names_a_secret(value), "{value}");
        }
        assert!(!names_a_secret("Tr0ub4dor&3x"));
    }

    #[test]
    fn names_of_where_a_secret_comes_from_are_references() {
        for value in [
            "$TOKEN",
            "%APPDATA%",
            "API_TOKEN",
            "env:STRIPE_KEY",
            "process.env.KEY",
        ] {
            assert!(is_reference(value), "{value}");
        }
        for value in ["Tr0ub4dor&3x", "hunter2hunter2", "AKIA2E0A8F3B244C9986"] {
            assert!(!is_reference(value), "{value}");
        }
    }
}
