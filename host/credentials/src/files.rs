//! Files that are credentials as a whole, known by their name (keystores, password manager
//! databases, SSH keys without a readable text) or by their first line (a browser's or a
//! password manager's export of saved passwords as CSV).

use crate::{Rule, tables};

const KEYSTORE: Rule = Rule {
    id: "keystore",
    what: "a keystore (PKCS#12, Java)",
};
const PASSWORD_DATABASE: Rule = Rule {
    id: "password-database",
    what: "a password manager's database",
};
const BROWSER_LOGINS: Rule = Rule {
    id: "browser-logins",
    what: "a browser's saved logins",
};
const SSH_KEY: Rule = Rule {
    id: "ssh-private-key-file",
    what: "an SSH private key",
};
pub(crate) const PASSWORD_EXPORT: Rule = Rule {
    id: "password-export",
    what: "an export of saved passwords",
};
const WALLET: Rule = Rule {
    id: "wallet",
    what: "a cryptocurrency wallet",
};

/// Extensions of files that are credentials whatever they hold.
const BY_EXTENSION: &[(&str, Rule)] = &[
    ("p12", KEYSTORE),
    ("pfx", KEYSTORE),
    ("jks", KEYSTORE),
    ("jceks", KEYSTORE),
    ("keystore", KEYSTORE),
    ("bks", KEYSTORE),
    ("kdbx", PASSWORD_DATABASE),
    ("kdb", PASSWORD_DATABASE),
    ("psafe3", PASSWORD_DATABASE),
    ("1pif", PASSWORD_DATABASE),
    ("1pux", PASSWORD_DATABASE),
    ("opvault", PASSWORD_DATABASE),
    ("agilekeychain", PASSWORD_DATABASE),
    ("keychain", PASSWORD_DATABASE),
    ("keychain-db", PASSWORD_DATABASE),
];

/// File names (lowercase) of credentials.
const BY_NAME: &[(&str, Rule)] = &[
    ("id_rsa", SSH_KEY),
    ("id_dsa", SSH_KEY),
    ("id_ecdsa", SSH_KEY),
    ("id_ed25519", SSH_KEY),
    ("id_ecdsa_sk", SSH_KEY),
    ("id_ed25519_sk", SSH_KEY),
    ("key3.db", BROWSER_LOGINS),
    ("key4.db", BROWSER_LOGINS),
    ("logins.json", BROWSER_LOGINS),
    ("login data", BROWSER_LOGINS),
    ("login data for account", BROWSER_LOGINS),
    ("wallet.dat", WALLET),
];

/// The rules for whole files.
pub(crate) fn rules() -> Vec<Rule> {
    vec![
        KEYSTORE,
        PASSWORD_DATABASE,
        BROWSER_LOGINS,
        SSH_KEY,
        WALLET,
        PASSWORD_EXPORT,
    ]
}

/// The rule by which the file at `path` is a credential by its name alone.
pub(crate) fn by_name(path: &str) -> Option<Rule> {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let lower = name.to_ascii_lowercase();
    if let Some((_, rule)) = BY_NAME.iter().find(|(n, _)| *n == lower) {
        return Some(*rule);
    }
    let ext = lower.rsplit_once('.').map(|(_, ext)| ext)?;
    BY_EXTENSION
        .iter()
        .find(|(e, _)| *e == ext)
        .map(|(_, rule)| *rule)
}

/// Whether `text` is an export of saved passwords: its first line heads a table of passwords
/// (see [`tables::header`]) and a row of cells follows.
pub(crate) fn is_password_export(text: &str) -> bool {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let Some(header) = lines.next().and_then(tables::header) else {
        return false;
    };
    lines
        .next()
        .is_some_and(|row| row.contains(header.separator()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keystores_password_databases_and_key_files_are_known_by_name() {
        for path in [
            "certs/client.p12",
            "Work/Signing.PFX",
            "android/release.keystore",
            "Passwords.kdbx",
            "backup/.ssh-copy/id_ed25519",
            "keys/id_rsa",
            "Firefox/profile/logins.json",
            "Chrome/Default/Login Data",
        ] {
            assert!(by_name(path).is_some(), "{path}");
        }
        for path in [
            "keys/id_ed25519.pub",
            "notes/p12.md",
            "id_rsa_notes.txt",
            "kdbx",
        ] {
            assert_eq!(by_name(path), None, "{path}");
        }
    }

    #[test]
    fn password_exports_of_browsers_and_managers_are_recognised() {
        for text in [
            "name,url,username,password,note\nexample,https://example.com,me,Tr0ub4dor&3,\n",
            "\"url\",\"username\",\"password\",\"httpRealm\",\"formActionOrigin\",\"guid\"\n\"https://a.org\",\"me\",\"pw1!\",,\"\",\"{x}\"\n",
            "folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\n,,login,Bank,,,0,https://bank.example,me,S3cret!,\n",
            "Title,URL,Username,Password,Notes,OTPAuth\nBank,https://bank.example,me,S3cret!,,\n",
        ] {
            assert!(is_password_export(text), "{text}");
        }
        for text in [
            "name,url,username,password\n",
            "rule,min_length,requires_symbol\nstrong,12,yes\n",
            "The password column of the export holds every password, url and username.",
        ] {
            assert!(!is_password_export(text), "{text}");
        }
    }
}
