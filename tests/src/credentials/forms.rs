//! Credentials in other forms than their own: attached to a mail (base64, no known extension),
//! quoted in a reply, written as joined string literals or cut in two, encoded in a Kubernetes
//! Secret, a JSON value or a data URL, listed in a table of passwords, packed in a zip archive or
//! embedded in a Word document; and the look-alikes of each form, which must stay searchable.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::{
    ALNUM, B64, DIGITS, File, LETTERS, LookAlike, Made, SharedFolder, binary, first_line,
    look_alike, secret,
};
use crate::docx::{docx_embedding, package_with_parts};

/// `data` in base64, in lines of `width` (a mail's 76, a PEM's 64), each ended by CRLF.
fn wrapped(data: &[u8], width: usize) -> String {
    STANDARD
        .encode(data)
        .as_bytes()
        .chunks(width)
        .map(|line| format!("{}\r\n", String::from_utf8_lossy(line)))
        .collect()
}

/// A mail with a text body and one attachment, `name`, holding `bytes` in base64.
fn mail_with_attachment(subject: &str, body: &str, name: &str, bytes: &[u8]) -> String {
    format!(
        "From: Ann <ann@example.org>\r\nTo: Jonas <jonas@example.org>\r\nSubject: {subject}\r\nDate: Tue, 3 Mar 2026 09:12:00 +0100\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n--b1\r\nContent-Type: application/octet-stream; name=\"{name}\"\r\nContent-Disposition: attachment; filename=\"{name}\"\r\nContent-Transfer-Encoding: base64\r\n\r\n{}--b1--\r\n",
        wrapped(bytes, 76)
    )
}

fn openssh_key(body: &str) -> String {
    format!("-----BEGIN OPENSSH PRIVATE KEY-----\n{body}-----END OPENSSH PRIVATE KEY-----\n")
}

pub(super) fn credentials(m: &mut Made, f: &mut SharedFolder) {
    let body = m.pem_body(6);
    secret(
        f,
        "mail/2026-03-03-new-laptop.eml",
        "mail-attached-key",
        mail_with_attachment(
            "the key for the new laptop",
            "Here is the key for the new laptop, as agreed on Monday.",
            "id_ed25519",
            openssh_key(&body).as_bytes(),
        ),
        vec![first_line(&body)],
        "key for the new laptop agreed monday",
    );
    let token = format!("ghp_{}", m.of(ALNUM, 36));
    let env = format!("# staging\nDEPLOY_USER=ci\nGITHUB_TOKEN={token}\n");
    secret(
        f,
        "mail/2026-03-04-staging-env.eml",
        "mail-attached-env",
        mail_with_attachment(
            "staging settings",
            "The settings of staging, attached; keep them off the wiki.",
            "staging.env.bak",
            env.as_bytes(),
        ),
        vec![token],
        "settings of staging keep them off the wiki",
    );
    let body = m.pem_body(8);
    let quoted: String = openssh_key(&body)
        .lines()
        .map(|line| format!("> {line}\n"))
        .collect();
    secret(
        f,
        "mail/re-server-access.txt",
        "key-quoted-in-reply",
        format!(
            "Thanks, that works. I will remove it from my notes.\n\nOn Monday, Ann wrote:\n> Here is the server's deploy key:\n>\n{quoted}> Delete this mail once you have it.\n"
        ),
        vec![first_line(&body)],
        "that works remove it from my notes",
    );
    let body = m.pem_body(6);
    let literals: String = openssh_key(&body)
        .lines()
        .map(|line| format!("    \"{line}\\n\"\n"))
        .collect();
    secret(
        f,
        "src/legacy_client.py",
        "key-in-joined-literals",
        format!(
            "import paramiko\n\nDEPLOY_KEY = (\n{literals})\n\n\ndef connect(host):\n    return paramiko.SSHClient()\n"
        ),
        vec![first_line(&body)],
        "legacy client paramiko connect",
    );
    let (head, tail) = (format!("sk_live_{}", m.of(ALNUM, 12)), m.of(ALNUM, 16));
    secret(
        f,
        "web/checkout.js",
        "token-cut-in-two-literals",
        format!(
            "// Checkout, until the server side takes over.\nconst stripe = Stripe(\"{head}\" +\n  \"{tail}\");\nexport default stripe;\n"
        ),
        vec![head, tail],
        "checkout until the server side takes over",
    );
    let body = m.pem_body(10);
    let key = format!("-----BEGIN RSA PRIVATE KEY-----\n{body}-----END RSA PRIVATE KEY-----\n");
    let encoded = STANDARD.encode(&key);
    let cert = STANDARD.encode(format!(
        "-----BEGIN CERTIFICATE-----\n{}-----END CERTIFICATE-----\n",
        m.pem_body(10)
    ));
    secret(
        f,
        "kube/ingress-tls.yaml",
        "kubernetes-tls-key",
        format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: ingress-tls\n  namespace: web\ntype: kubernetes.io/tls\ndata:\n  tls.crt: {cert}\n  tls.key: {encoded}\n"
        ),
        vec![encoded],
        "ingress tls namespace web",
    );
    let signing = STANDARD.encode(openssh_key(&m.pem_body(5)));
    secret(
        f,
        "config/release.json",
        "key-in-json-base64",
        format!("{{\n  \"channel\": \"stable\",\n  \"signing_material\": \"{signing}\"\n}}\n"),
        vec![signing],
        "channel stable release",
    );
    let token = format!(
        "xoxb-{}-{}-{}",
        m.of(DIGITS, 12),
        m.of(DIGITS, 13),
        m.of(ALNUM, 24)
    );
    let data = STANDARD.encode(format!("SLACK_BOT_TOKEN={token}\n"));
    secret(
        f,
        "web/bookmarklet.html",
        "token-in-data-url",
        format!(
            "<p>Drag the <a href=\"data:text/plain;base64,{data}\">bot settings</a> to the bar.</p>\n"
        ),
        vec![data],
        "drag the bot settings to the bar",
    );
    let passwords = [m.password(), m.password(), m.password()];
    secret(
        f,
        "notes/home-accounts.md",
        "password-table",
        format!(
            "# Home accounts\n\nFor the family, in case.\n\n| Site | User | Password |\n|------|------|----------|\n| bank.example | ann | {} |\n| mail.example | ann@example.org | {} |\n| router | admin | {} |\n\nThe router sits behind the TV.\n",
            passwords[0], passwords[1], passwords[2]
        ),
        passwords.to_vec(),
        "for the family in case router behind the tv",
    );
    let passwords = [m.password(), m.password()];
    secret(
        f,
        "notes/logins.csv",
        "password-table-csv",
        format!(
            "Site,User,Password\nnas.local,admin,{}\nprinter.local,admin,{}\n",
            passwords[0], passwords[1]
        ),
        passwords.to_vec(),
        "nas local printer local",
    );
    let password = format!("{}#{}", m.of(ALNUM, 10), m.of(ALNUM, 9));
    secret(
        f,
        "config/reporting.env",
        "database-url-with-hash",
        format!("REPORT_DB=postgres://admin:{password}@db.internal:5432/prod\nREPORT_CRON=daily\n"),
        vec![password],
        "report cron daily",
    );
    let password = format!("{};{},{}", m.of(ALNUM, 9), m.of(ALNUM, 9), m.of(ALNUM, 8));
    secret(
        f,
        "config/warehouse.yaml",
        "quoted-password-with-punctuation",
        format!("warehouse:\n  host: wh.internal\n  db_password: \"{password}\"\n  pool: 8\n"),
        vec![password],
        "warehouse pool",
    );
    let words: Vec<String> = (0..4).map(|_| m.of(LETTERS, 9)).collect();
    let passphrase = words.join(" ");
    secret(
        f,
        "notes/signing.md",
        "passphrase-with-spaces",
        format!(
            "# Signing\n\nThe release key's passphrase = \"{passphrase}\" (until the vault).\n"
        ),
        vec![passphrase],
        "release key until the vault",
    );
    // An archive attached to a mail, larger than a window of the original's reading (1 MiB):
    // its block is carried on to its end and opened whole.
    let token = format!("ghp_{}", m.of(ALNUM, 36));
    let photos = m.bytes(1_500_000);
    secret(
        f,
        "mail/2026-03-06-holiday-backup.eml",
        "mail-attached-large-zip",
        mail_with_attachment(
            "the holiday backup",
            "The holiday photos and the old settings, zipped.",
            "holiday-backup.zip",
            &package_with_parts(&[
                ("photos/beach.raw", &photos),
                (
                    "settings/.env",
                    format!("GITHUB_TOKEN={token}\n").as_bytes(),
                ),
            ]),
        ),
        vec![token],
        "holiday photos old settings zipped",
    );
    let token = format!("glpat-{}", m.of(ALNUM, 20));
    binary(
        f,
        "backup/dotfiles.zip",
        "zip-member-env",
        package_with_parts(&[
            ("dotfiles/README.md", b"My dotfiles, backed up.\n"),
            (
                "dotfiles/.config/glab/env",
                format!("GITLAB_TOKEN={token}\n").as_bytes(),
            ),
        ]),
        "dotfiles",
    );
    let token = format!("npm_{}", m.of(ALNUM, 36));
    binary(
        f,
        "docs/release-steps.docx",
        "docx-embedded-file",
        docx_embedding(
            "Release steps",
            &["Release steps: tag, build, publish. The publishing settings are embedded below."],
            "Ask Ann first.",
            &[(
                "publish.npmrc",
                format!("//registry.npmjs.org/:_authToken={token}\n").as_bytes(),
            )],
        ),
        "release steps tag build publish",
    );
}

pub(super) fn look_alikes(m: &mut Made, f: &mut SharedFolder) {
    look_alike(
        f,
        "mail/2026-03-05-minutes.eml",
        "a mail with an ordinary attachment",
        mail_with_attachment(
            "minutes of the garden meeting",
            "The minutes of the garden meeting are attached.",
            "minutes.txt",
            "Garden meeting: the compost moves to the north corner; tomatoes in May.\n"
                .repeat(4)
                .as_bytes(),
        ),
        "minutes of the garden meeting",
    );
    let public = format!(
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{} ann@laptop",
        m.of(B64, 43)
    );
    look_alike(
        f,
        "mail/re-public-key.txt",
        "a public key quoted in a reply",
        format!("Added, thanks.\n\n> My public key, for the build host:\n> {public}\n> Thanks!\n"),
        "added thanks build host",
    );
    look_alike(
        f,
        "src/queries.py",
        "SQL written as joined literals",
        "QUERY = (\n    \"SELECT name, email \"\n    \"FROM people \"\n    \"WHERE active = 1\"\n)\n".to_owned(),
        "select name email from people",
    );
    look_alike(
        f,
        "kube/ca-bundle.yaml",
        "a Kubernetes ConfigMap holding a certificate",
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ca-bundle\ndata:\n  ca.crt: {}\n",
            STANDARD.encode(format!(
                "-----BEGIN CERTIFICATE-----\n{}-----END CERTIFICATE-----\n",
                m.pem_body(12)
            ))
        ),
        "configmap ca bundle",
    );
    look_alike(
        f,
        "web/logo.html",
        "an image in a data URL",
        format!(
            "<p>Our logo: <img alt=\"logo of the garden club\" src=\"data:image/png;base64,iVBORw0KGgo{}\"></p>\n",
            m.of(B64, 200)
        ),
        "logo of the garden club",
    );
    look_alike(
        f,
        "notes/password-policy.md",
        "a table about passwords, masked",
        "# Password rules\n\n| Site | User | Password |\n|---|---|---|\n| bank | ann | ******** |\n| mail | ann | (in the manager) |\n\nEvery password lives in the manager.\n".to_owned(),
        "every password lives in the manager",
    );
    let scans = m.bytes(1_500_000);
    look_alike(
        f,
        "mail/2026-03-07-scans.eml",
        "a mail with a large archive attached, of ordinary files",
        mail_with_attachment(
            "the scanned letters",
            "The scanned letters from the attic, zipped.",
            "letters.zip",
            &package_with_parts(&[
                ("letters/1921.raw", &scans),
                ("letters/index.txt", b"Letters from 1921.\n"),
            ]),
        ),
        "scanned letters from the attic",
    );
    f.files.push(File {
        path: "backup/recipes.zip".to_owned(),
        bytes: package_with_parts(&[
            ("recipes/bread.txt", b"Flour, water, salt, time.\n"),
            ("recipes/soup.txt", b"Leeks, potatoes, stock.\n"),
        ]),
    });
    f.look_alikes.push(LookAlike {
        path: "backup/recipes.zip".to_owned(),
        what: "a zip of ordinary files",
        words: "recipes".to_owned(),
    });
}
