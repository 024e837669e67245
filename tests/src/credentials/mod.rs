//! A shared folder as people keep one: credentials of many kinds in ordinary (not hidden) files,
//! values made up and formats real, beside look-alikes that must stay searchable: certificates,
//! public keys, placeholders, prose about keys and passwords, test vectors named as such, code
//! that handles secrets without holding one. Generated from a seed, so no file with a key is
//! ever committed and every run sees the same folder.

mod forms;

use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};

use crate::rng::Rng;

/// A file of the folder.
pub struct File {
    /// Its path relative to the folder.
    pub path: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// A credential the folder holds: in which file, of what kind, the values that must never come
/// out of Quarry, and words around them (a search for them must not bring the values either).
pub struct Credential {
    /// The file's path.
    pub path: String,
    /// The kind, for reports (`github-token`).
    pub kind: &'static str,
    /// The secret values.
    pub values: Vec<String>,
    /// Words of the file that are not secret.
    pub context: String,
}

/// A file that looks like a credential and is not: it must be found.
pub struct LookAlike {
    /// The file's path.
    pub path: String,
    /// What it is, for reports.
    pub what: &'static str,
    /// Words that find it.
    pub words: String,
}

/// The folder.
pub struct SharedFolder {
    /// Every file.
    pub files: Vec<File>,
    /// The credentials among them.
    pub credentials: Vec<Credential>,
    /// The look-alikes among them.
    pub look_alikes: Vec<LookAlike>,
}

impl SharedFolder {
    /// Writes the folder's files under `dir`.
    pub fn write(&self, dir: &Path) {
        for file in &self.files {
            let path = dir.join(&file.path);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            std::fs::write(&path, &file.bytes).expect("write");
        }
    }

    /// How many kinds of credential it holds.
    pub fn kinds(&self) -> usize {
        let mut kinds: Vec<&str> = self.credentials.iter().map(|c| c.kind).collect();
        kinds.sort_unstable();
        kinds.dedup();
        kinds.len()
    }
}

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const HEX: &[u8] = b"0123456789abcdef";
const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URLSAFE: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
const UPPER32: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const LETTERS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const DIGITS: &[u8] = b"0123456789";

/// Made-up values.
struct Made(Rng);

impl Made {
    fn of(&mut self, alphabet: &[u8], n: usize) -> String {
        (0..n)
            .map(|_| char::from(alphabet[self.0.below(alphabet.len())]))
            .collect()
    }

    /// A PEM body of `lines` lines of 64 base64 characters.
    fn pem_body(&mut self, lines: usize) -> String {
        (0..lines).map(|_| self.of(B64, 64) + "\n").collect()
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.0.next_u64() as u8).collect()
    }

    /// A password people choose: words, digits and a symbol.
    fn password(&mut self) -> String {
        format!(
            "{}{}!{}",
            self.of(LETTERS, 6),
            self.of(DIGITS, 3),
            self.of(ALNUM, 5)
        )
    }
}

/// The folder of `seed`: at least 40 credentials of at least 20 kinds, and at least 40
/// look-alikes.
pub fn shared_folder(seed: u64) -> SharedFolder {
    let mut m = Made(Rng(seed | 1));
    let mut folder = SharedFolder {
        files: Vec::new(),
        credentials: Vec::new(),
        look_alikes: Vec::new(),
    };
    credentials(&mut m, &mut folder);
    look_alikes(&mut m, &mut folder);
    forms::credentials(&mut m, &mut folder);
    forms::look_alikes(&mut m, &mut folder);
    folder
}

/// Adds a text file holding a credential.
fn secret(
    folder: &mut SharedFolder,
    path: &str,
    kind: &'static str,
    text: String,
    values: Vec<String>,
    context: &str,
) {
    folder.files.push(File {
        path: path.to_owned(),
        bytes: text.into_bytes(),
    });
    folder.credentials.push(Credential {
        path: path.to_owned(),
        kind,
        values,
        context: context.to_owned(),
    });
}

/// Adds a binary credential file (its values are its bytes: never served).
fn binary(
    folder: &mut SharedFolder,
    path: &str,
    kind: &'static str,
    bytes: Vec<u8>,
    context: &str,
) {
    folder.files.push(File {
        path: path.to_owned(),
        bytes,
    });
    folder.credentials.push(Credential {
        path: path.to_owned(),
        kind,
        values: Vec::new(),
        context: context.to_owned(),
    });
}

fn look_alike(
    folder: &mut SharedFolder,
    path: &str,
    what: &'static str,
    text: String,
    words: &str,
) {
    folder.files.push(File {
        path: path.to_owned(),
        bytes: text.into_bytes(),
    });
    folder.look_alikes.push(LookAlike {
        path: path.to_owned(),
        what,
        words: words.to_owned(),
    });
}

/// The first line of a PEM body: enough to recognise the key anywhere.
fn first_line(body: &str) -> String {
    body.lines().next().unwrap_or_default().to_owned()
}

fn credentials(m: &mut Made, f: &mut SharedFolder) {
    let body = m.pem_body(6);
    secret(
        f,
        "keys/id_ed25519",
        "openssh-private-key",
        format!("-----BEGIN OPENSSH PRIVATE KEY-----\n{body}-----END OPENSSH PRIVATE KEY-----\n"),
        vec![first_line(&body)],
        "id_ed25519",
    );
    let body = m.pem_body(25);
    secret(
        f,
        "server.key",
        "rsa-private-key",
        format!("-----BEGIN RSA PRIVATE KEY-----\n{body}-----END RSA PRIVATE KEY-----\n"),
        vec![first_line(&body)],
        "server key",
    );
    let body = m.pem_body(20);
    secret(
        f,
        "certs/tls/private.pem",
        "pkcs8-private-key",
        format!("-----BEGIN PRIVATE KEY-----\n{body}-----END PRIVATE KEY-----\n"),
        vec![first_line(&body)],
        "tls private",
    );
    let body = m.pem_body(25);
    secret(
        f,
        "backup/old-web-key.pem",
        "encrypted-private-key",
        format!(
            "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-256-CBC,{}\n\n{body}-----END RSA PRIVATE KEY-----\n",
            m.of(HEX, 32).to_uppercase()
        ),
        vec![first_line(&body)],
        "old web key",
    );
    let body = m.pem_body(30);
    secret(
        f,
        "keys/secret-subkeys.asc",
        "pgp-private-key",
        format!(
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\nComment: ann@example.org\n\n{body}={}\n-----END PGP PRIVATE KEY BLOCK-----\n",
            m.of(B64, 4)
        ),
        vec![first_line(&body)],
        "secret subkeys",
    );
    let private = m.pem_body(8);
    secret(
        f,
        "keys/deploy.ppk",
        "putty-private-key",
        format!(
            "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy@build\nPublic-Lines: 2\n{}{}Private-Lines: 8\n{private}Private-MAC: {}\n",
            m.pem_body(1),
            m.pem_body(1),
            m.of(HEX, 64)
        ),
        vec![first_line(&private)],
        "deploy ppk",
    );
    let key_body = m.of(B64, 1200);
    secret(
        f,
        "cloud/acme-prod-sa.json",
        "service-account-key",
        format!(
            "{{\n  \"type\": \"service_account\",\n  \"project_id\": \"acme-prod\",\n  \"private_key_id\": \"{}\",\n  \"private_key\": \"-----BEGIN PRIVATE KEY-----\\n{}\\n-----END PRIVATE KEY-----\\n\",\n  \"client_email\": \"exporter@acme-prod.iam.gserviceaccount.com\",\n  \"token_uri\": \"https://oauth2.googleapis.com/token\"\n}}\n",
            m.of(HEX, 40),
            key_body
        ),
        vec![key_body[..64].to_owned()],
        "acme prod exporter",
    );
    let client_secret = format!("GOCSPX-{}", m.of(URLSAFE, 28));
    secret(
        f,
        "cloud/client_secret_4711.json",
        "oauth-client-secret",
        format!(
            "{{\"installed\":{{\"client_id\":\"4711-desktop.apps.googleusercontent.com\",\"project_id\":\"acme-tools\",\"auth_uri\":\"https://accounts.google.com/o/oauth2/auth\",\"token_uri\":\"https://oauth2.googleapis.com/token\",\"client_secret\":\"{client_secret}\",\"redirect_uris\":[\"http://localhost\"]}}}}\n"
        ),
        vec![client_secret],
        "acme tools desktop",
    );
    let (id, key) = (format!("AKIA{}", m.of(UPPER32, 16)), m.of(B64, 40));
    secret(
        f,
        "meetings/2026-03-02-standup.md",
        "aws-access-key",
        format!(
            "# Standup, 2 March\n\nMarta shared the staging keys for the migration: access key {id} and secret {key}.\nWe rotate them after the demo on Friday.\n\n- Jonas: the search page\n- Ines: the invoices export\n"
        ),
        vec![id, key],
        "staging keys migration demo",
    );
    let (id, key) = (format!("AKIA{}", m.of(UPPER32, 16)), m.of(B64, 40));
    secret(
        f,
        "exports/accessKeys.csv",
        "aws-console-key-export",
        format!("Access key ID,Secret access key\n{id},{key}\n"),
        vec![id, key],
        "access key id secret access key",
    );
    let (id, key) = (format!("AKIA{}", m.of(UPPER32, 16)), m.of(B64, 40));
    secret(
        f,
        "aws-credentials-backup.txt",
        "aws-credentials-file",
        format!(
            "[default]\naws_access_key_id = {id}\naws_secret_access_key = {key}\nregion = eu-central-1\n"
        ),
        vec![id, key],
        "credentials backup region",
    );
    let token = format!("ghp_{}", m.of(ALNUM, 36));
    secret(
        f,
        "deploy.sh",
        "github-token",
        format!(
            "#!/bin/sh\n# Deploys the site from the build host.\nset -e\nexport GITHUB_TOKEN={token}\ngit push origin main\n"
        ),
        vec![token],
        "deploys the site from the build host",
    );
    let token = format!("github_pat_{}_{}", m.of(ALNUM, 22), m.of(ALNUM, 59));
    secret(
        f,
        "notes/github-bot.md",
        "github-fine-grained-token",
        format!("The release bot uses this fine-grained token: {token}\n"),
        vec![token],
        "release bot fine-grained",
    );
    let token = format!("glpat-{}", m.of(URLSAFE, 20));
    secret(
        f,
        "ci/gitlab-runner-notes.txt",
        "gitlab-token",
        format!("Runner registration for the mirror: {token}\n"),
        vec![token],
        "runner registration mirror",
    );
    let key = format!("sk_live_{}", m.of(ALNUM, 24));
    secret(
        f,
        "billing/charge.py",
        "stripe-secret-key",
        format!(
            "import stripe\n\nstripe.api_key = \"{key}\"\n\n\ndef charge(customer, cents):\n    return stripe.PaymentIntent.create(customer=customer, amount=cents, currency=\"eur\")\n"
        ),
        vec![key],
        "payment intent customer",
    );
    let key = format!("whsec_{}", m.of(ALNUM, 32));
    secret(
        f,
        "billing/webhooks.toml",
        "stripe-webhook-secret",
        format!("[stripe]\nendpoint = \"/hooks/stripe\"\nsigning = \"{key}\"\n"),
        vec![key],
        "hooks stripe endpoint",
    );
    let token = format!(
        "xoxb-{}-{}-{}",
        m.of(DIGITS, 12),
        m.of(DIGITS, 13),
        m.of(ALNUM, 24)
    );
    secret(
        f,
        "chat/slack-bot.md",
        "slack-token",
        format!(
            "# Standup bot\n\nThe bot posts the standup summary at nine.\n\nBot token: `{token}`\n"
        ),
        vec![token],
        "standup bot summary",
    );
    let hook = format!(
        "https://hooks.slack.com/services/T{}/B{}/{}",
        m.of(UPPER32, 9),
        m.of(UPPER32, 9),
        m.of(ALNUM, 24)
    );
    secret(
        f,
        "alerts/config.yaml",
        "slack-webhook",
        format!("alerts:\n  disk_full:\n    notify: {hook}\n"),
        vec![hook[hook.len() - 24..].to_owned()],
        "alerts disk full notify",
    );
    let key = format!("sk-proj-{}", m.of(URLSAFE, 96));
    secret(
        f,
        "ai/config.toml",
        "openai-key",
        format!("[openai]\nmodel = \"gpt-5\"\nkey = \"{key}\"\n"),
        vec![key],
        "openai model",
    );
    let key = format!("sk-ant-api03-{}AA", m.of(URLSAFE, 93));
    secret(
        f,
        "ai/claude-keys.txt",
        "anthropic-key",
        format!("Personal key for the summariser: {key}\n"),
        vec![key],
        "personal summariser",
    );
    let key = format!("AIza{}", m.of(URLSAFE, 35));
    secret(
        f,
        "web/maps.html",
        "google-api-key",
        format!(
            "<!doctype html><title>Office map</title><div id=map></div><script src=\"https://maps.googleapis.com/maps/api/js?key={key}\"></script>\n"
        ),
        vec![key],
        "office map",
    );
    let key = format!("SG.{}.{}", m.of(URLSAFE, 22), m.of(URLSAFE, 43));
    secret(
        f,
        "mail/sendgrid.txt",
        "sendgrid-key",
        format!("Newsletter sending key: {key}\n"),
        vec![key],
        "newsletter sending",
    );
    let key = format!("SK{}", m.of(HEX, 32));
    secret(
        f,
        "sms/notes.md",
        "twilio-key",
        format!("Twilio API key for the reminders: {key}\n"),
        vec![key],
        "reminders",
    );
    let token = format!("npm_{}", m.of(ALNUM, 36));
    secret(
        f,
        "npmrc-backup.txt",
        "npm-token",
        format!("//registry.npmjs.org/:_authToken={token}\n"),
        vec![token],
        "registry npmjs",
    );
    let token = format!("pypi-AgEIcHlwaS5vcmc{}", m.of(URLSAFE, 70));
    secret(
        f,
        "pypirc-backup.txt",
        "pypi-token",
        format!("[pypi]\nusername = __token__\npassword = {token}\n"),
        vec![token],
        "pypi username",
    );
    let token = format!("hf_{}", m.of(LETTERS, 34));
    secret(
        f,
        "ml/huggingface.txt",
        "huggingface-token",
        format!("Read token for the model downloads: {token}\n"),
        vec![token],
        "model downloads",
    );
    let token = format!("dop_v1_{}", m.of(HEX, 64));
    secret(
        f,
        "infra/droplets.md",
        "digitalocean-token",
        format!("Terraform uses {token} for the droplets.\n"),
        vec![token],
        "terraform droplets",
    );
    let key = m.of(B64, 86);
    secret(
        f,
        "azure/storage.txt",
        "azure-storage-key",
        format!(
            "DefaultEndpointsProtocol=https;AccountName=acmebackups;AccountKey={key}==;EndpointSuffix=core.windows.net\n"
        ),
        vec![key],
        "acmebackups endpoint",
    );
    let password = m.password();
    secret(
        f,
        "config/database.yml",
        "database-url",
        format!(
            "production:\n  url: postgres://app:{password}@db.internal:5432/shop\n  pool: 10\n"
        ),
        vec![password],
        "production pool shop",
    );
    let password = m.password();
    secret(
        f,
        "app/settings.json",
        "mongodb-url",
        format!(
            "{{\"mongo\": \"mongodb+srv://reporter:{password}@cluster0.example.net/reports\", \"debug\": false}}\n"
        ),
        vec![password],
        "mongo reporter cluster0",
    );
    let password = m.password();
    secret(
        f,
        "docker-compose.yml",
        "redis-url",
        format!(
            "services:\n  worker:\n    image: acme/worker\n    environment:\n      QUEUE: redis://default:{password}@cache:6379/0\n"
        ),
        vec![password],
        "acme worker queue",
    );
    let jwt = format!(
        "{}.{}.{}",
        URL_SAFE_NO_PAD.encode(r#"{"alg":"HS256","typ":"JWT"}"#),
        URL_SAFE_NO_PAD.encode(r#"{"sub":"ann","role":"admin","iat":1767225600}"#),
        m.of(URLSAFE, 43)
    );
    secret(
        f,
        "api/session.txt",
        "jwt",
        format!("Admin session for the staging API: {jwt}\n"),
        vec![jwt.rsplit('.').next().unwrap_or_default().to_owned()],
        "admin session staging",
    );
    let client_key = m.of(B64, 400);
    secret(
        f,
        "kube/prod-cluster.yaml",
        "kubeconfig",
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: prod\n  cluster:\n    server: https://k8s.internal:6443\nusers:\n- name: admin\n  user:\n    client-certificate-data: {}\n    client-key-data: {client_key}\n",
            m.of(B64, 300)
        ),
        vec![client_key[..60].to_owned()],
        "prod cluster admin",
    );
    let auth = STANDARD.encode(format!("deploy:{}", m.password()));
    secret(
        f,
        "docker/config.json",
        "docker-registry-auth",
        format!("{{\"auths\": {{\"registry.example.com\": {{\"auth\": \"{auth}\"}}}}}}\n"),
        vec![auth],
        "registry auths",
    );
    let password = m.password();
    secret(
        f,
        "Passwords.csv",
        "browser-password-export",
        format!(
            "name,url,username,password,note\nBank,https://bank.example,ann,{password},\nMail,https://mail.example,ann@example.org,{},\n",
            m.password()
        ),
        vec![password],
        "bank mail",
    );
    let password = m.password();
    secret(
        f,
        "exports/firefox-logins.csv",
        "firefox-password-export",
        format!(
            "\"url\",\"username\",\"password\",\"httpRealm\",\"formActionOrigin\",\"guid\",\"timeCreated\",\"timeLastUsed\",\"timePasswordChanged\"\n\"https://shop.example\",\"ann\",\"{password}\",,\"https://shop.example\",\"{{{}}}\",\"1767225600000\",\"1767225600000\",\"1767225600000\"\n",
            m.of(HEX, 8)
        ),
        vec![password],
        "shop",
    );
    let password = m.password();
    secret(
        f,
        "exports/bitwarden_export.csv",
        "bitwarden-export",
        format!(
            "folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\n,,login,Library,,,0,https://library.example,ann,{password},\n"
        ),
        vec![password],
        "library",
    );
    let mut kdbx = vec![0x03, 0xD9, 0xA2, 0x9A, 0x67, 0xFB, 0x4B, 0xB5];
    kdbx.extend(m.bytes(4096));
    binary(
        f,
        "vault/Passwords.kdbx",
        "keepass-database",
        kdbx,
        "vault passwords",
    );
    let mut p12 = vec![0x30, 0x82, 0x0A, 0x2F, 0x02, 0x01, 0x03];
    p12.extend(m.bytes(2600));
    binary(f, "certs/client.p12", "pkcs12-keystore", p12, "client p12");
    let mut jks = vec![0xFE, 0xED, 0xFE, 0xED, 0x00, 0x00, 0x00, 0x02];
    jks.extend(m.bytes(2200));
    binary(
        f,
        "android/release.jks",
        "java-keystore",
        jks,
        "android release",
    );
    let password = m.password();
    secret(
        f,
        "backup/netrc.txt",
        "netrc",
        format!("machine api.example.com\n  login ann\n  password {password}\n"),
        vec![password],
        "api example login",
    );
    let hash = format!("$apr1${}${}", m.of(ALNUM, 8), m.of(ALNUM, 22));
    secret(
        f,
        "web/htpasswd.txt",
        "htpasswd",
        format!("admin:{hash}\n"),
        vec![hash[14..].to_owned()],
        "admin",
    );
    let hash = format!("$6${}${}", m.of(ALNUM, 16), m.of(ALNUM, 86));
    secret(
        f,
        "backup/shadow.txt",
        "shadow-hash",
        format!("root:{hash}:19800:0:99999:7:::\nann:!:19800:0:99999:7:::\n"),
        vec![hash[20..].to_owned()],
        "root",
    );
    let key = format!("{}=", m.of(B64, 43));
    secret(
        f,
        "vpn/wg0.conf",
        "wireguard-private-key",
        format!(
            "[Interface]\nAddress = 10.8.0.2/32\nPrivateKey = {key}\n\n[Peer]\nEndpoint = vpn.example.org:51820\nAllowedIPs = 0.0.0.0/0\n"
        ),
        vec![key],
        "interface peer endpoint",
    );
    let password = m.password();
    secret(
        f,
        "config/prod.env.txt",
        "password-assignment",
        format!("APP_ENV=production\nDB_HOST=db.internal\nDB_PASSWORD={password}\n"),
        vec![password],
        "app env production",
    );
    let password = m.password();
    secret(
        f,
        "scripts/nightly_login.py",
        "password-in-code",
        format!(
            "import requests\n\nUSER = \"ann\"\npassword = \"{password}\"\n\nrequests.post(\"https://intranet.example/login\", data={{\"user\": USER, \"password\": password}})\n"
        ),
        vec![password],
        "intranet login nightly",
    );
    let basic = STANDARD.encode(format!("ann:{}", m.password()));
    secret(
        f,
        "notes/curl-examples.md",
        "basic-auth-header",
        format!(
            "Export the invoices:\n\n    curl -H 'Authorization: Basic {basic}' https://erp.example/invoices\n"
        ),
        vec![basic],
        "export the invoices",
    );
    let token = m.of(URLSAFE, 48);
    secret(
        f,
        "notes/api-calls.http",
        "bearer-token",
        format!(
            "GET https://api.example.com/v2/orders\nAuthorization: Bearer {token}\nAccept: application/json\n"
        ),
        vec![token],
        "orders accept",
    );
    let key = format!("AGE-SECRET-KEY-1{}", m.of(UPPER32, 58));
    secret(
        f,
        "keys/backup-age.txt",
        "age-secret-key",
        format!(
            "# created: 2026-01-04\n# public key: age1{}\n{key}\n",
            m.of(HEX, 58)
        ),
        vec![key],
        "created public key",
    );
    let token = format!("{}:AA{}", m.of(DIGITS, 10), m.of(URLSAFE, 33));
    secret(
        f,
        "bots/telegram.txt",
        "telegram-bot-token",
        format!("Doorbell bot: {token}\n"),
        vec![token],
        "doorbell bot",
    );
    let token = format!("dapi{}", m.of(HEX, 32));
    secret(
        f,
        "data/databricks.md",
        "databricks-token",
        format!("Notebook runner token: {token}\n"),
        vec![token],
        "notebook runner",
    );
    more_credentials(m, f);
}

/// Credentials of the remaining providers' forms, a note that quotes a key, and files known by
/// their names.
fn more_credentials(m: &mut Made, f: &mut SharedFolder) {
    let key = format!("{}-us21", m.of(HEX, 32));
    secret(
        f,
        "mail/mailchimp.txt",
        "mailchimp-key",
        format!("Audience sync: {key}\n"),
        vec![key],
        "audience sync",
    );
    let key = format!("key-{}", m.of(HEX, 32));
    secret(
        f,
        "mail/mailgun.txt",
        "mailgun-key",
        format!("Mailgun private key {key}\n"),
        vec![key],
        "mailgun private",
    );
    let token = format!("dp.st.{}", m.of(ALNUM, 43));
    secret(
        f,
        "infra/doppler.txt",
        "doppler-token",
        format!("Service token for staging: {token}\n"),
        vec![token],
        "service staging",
    );
    let key = format!("lin_api_{}", m.of(ALNUM, 40));
    secret(
        f,
        "tools/linear.txt",
        "linear-key",
        format!("Issue importer: {key}\n"),
        vec![key],
        "issue importer",
    );
    let token = format!("secret_{}", m.of(ALNUM, 43));
    secret(
        f,
        "tools/notion.txt",
        "notion-token",
        format!("Notion integration {token}\n"),
        vec![token],
        "notion integration",
    );
    let key = format!("PMAK-{}-{}", m.of(HEX, 24), m.of(HEX, 34));
    secret(
        f,
        "tools/postman.txt",
        "postman-key",
        format!("Collection runner: {key}\n"),
        vec![key],
        "collection runner",
    );
    let token = format!("glsa_{}_{}", m.of(ALNUM, 32), m.of(HEX, 8));
    secret(
        f,
        "monitoring/grafana.txt",
        "grafana-token",
        format!("Dashboard exporter: {token}\n"),
        vec![token],
        "dashboard exporter",
    );
    let key = format!("NRAK-{}", m.of(UPPER32, 27));
    secret(
        f,
        "monitoring/newrelic.txt",
        "newrelic-key",
        format!("Alerts API: {key}\n"),
        vec![key],
        "alerts api",
    );
    let token = format!("sntryu_{}", m.of(HEX, 64));
    secret(
        f,
        "monitoring/sentry.txt",
        "sentry-token",
        format!("Release uploads: {token}\n"),
        vec![token],
        "release uploads",
    );
    let token = format!("sq0atp-{}", m.of(URLSAFE, 22));
    secret(
        f,
        "shop/square.txt",
        "square-token",
        format!("Point of sale: {token}\n"),
        vec![token],
        "point of sale",
    );
    let token = format!(
        "M{}.{}.{}",
        m.of(ALNUM, 24),
        m.of(URLSAFE, 6),
        m.of(URLSAFE, 27)
    );
    secret(
        f,
        "bots/discord.md",
        "discord-bot-token",
        format!("Discord bot for the guild: {token}\n"),
        vec![token],
        "bot for the guild",
    );
    let token = format!("ya29.{}", m.of(URLSAFE, 80));
    secret(
        f,
        "notes/google-session.txt",
        "google-oauth-token",
        format!("Calendar access: {token}\n"),
        vec![token],
        "calendar access",
    );
    let key = format!("GOCSPX-{}", m.of(URLSAFE, 28));
    secret(
        f,
        "notes/oauth-setup.md",
        "google-oauth-client-secret",
        format!("The desktop app's client secret is {key}; keep it out of the repository.\n"),
        vec![key],
        "desktop app's client",
    );
    let token = format!("shpat_{}", m.of(HEX, 32));
    secret(
        f,
        "shop/shopify.txt",
        "shopify-token",
        format!("Admin API access token for the shop: {token}\n"),
        vec![token],
        "admin api access",
    );
    let key = format!("{}8Q~{}", m.of(ALNUM, 3), m.of(ALNUM, 34));
    secret(
        f,
        "azure/app-registration.txt",
        "azure-client-secret",
        format!("App registration secret value: {key}\n"),
        vec![key],
        "app registration",
    );
    let key = format!("sk-{}T3BlbkFJ{}", m.of(ALNUM, 20), m.of(ALNUM, 20));
    secret(
        f,
        "ai/old-openai.txt",
        "openai-legacy-key",
        format!("The old key: {key}\n"),
        vec![key],
        "the old key",
    );
    let body = m.pem_body(10);
    secret(
        f,
        "notes/ops-runbook.md",
        "private-key-in-note",
        format!(
            "# Ops runbook\n{}The deploy key, until it moves to the vault:\n\n-----BEGIN OPENSSH PRIVATE KEY-----\n{body}-----END OPENSSH PRIVATE KEY-----\n\nRotate it in May.\n",
            "Deploys run from the build host every weekday at ten; the runbook lists who may start one, what to check before and after, and whom to call when a step fails.\n".repeat(12)
        ),
        vec![first_line(&body)],
        "runbook rotate it in may",
    );
    binary(f, "firefox/logins.json", "browser-logins", format!("{{\"nextId\":3,\"logins\":[{{\"hostname\":\"https://bank.example\",\"encryptedUsername\":\"{}\",\"encryptedPassword\":\"{}\"}}]}}", m.of(B64, 60), m.of(B64, 60)).into_bytes(), "firefox logins");
    let mut wallet = b"\x00\x00\x00\x00b1\x05\x00".to_vec();
    wallet.extend(m.bytes(2048));
    binary(f, "crypto/wallet.dat", "wallet", wallet, "wallet");
}

fn look_alikes(m: &mut Made, f: &mut SharedFolder) {
    look_alike(
        f,
        "docs/aws-key-export.md",
        "the AWS documentation's example key pair, as an export shows it",
        "# Key exports\n\nAn export reads `Access key ID,Secret access key` then, for example, `AKIAIOSFODNN7EXAMPLE,wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`.\n".to_owned(),
        "key exports example",
    );
    let cert = |m: &mut Made| m.pem_body(18);
    let body = cert(m);
    look_alike(
        f,
        "certs/acme-root-ca.crt",
        "a CA certificate",
        format!(
            "subject=CN = Acme Root CA\nissuer=CN = Acme Root CA\n-----BEGIN CERTIFICATE-----\n{body}-----END CERTIFICATE-----\n"
        ),
        "acme root ca",
    );
    let (a, b) = (cert(m), cert(m));
    look_alike(
        f,
        "certs/fullchain.pem",
        "a certificate chain",
        format!(
            "# intranet fullchain\n-----BEGIN CERTIFICATE-----\n{a}-----END CERTIFICATE-----\n-----BEGIN CERTIFICATE-----\n{b}-----END CERTIFICATE-----\n"
        ),
        "intranet fullchain",
    );
    let body = m.pem_body(12);
    look_alike(
        f,
        "certs/intranet.csr",
        "a certificate request",
        format!("-----BEGIN CERTIFICATE REQUEST-----\n{body}-----END CERTIFICATE REQUEST-----\n"),
        "intranet csr",
    );
    look_alike(
        f,
        "keys/id_ed25519.pub",
        "an SSH public key",
        format!(
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{} ann@laptop\n",
            m.of(B64, 43)
        ),
        "ann laptop",
    );
    look_alike(
        f,
        "keys/id_rsa.pub",
        "an SSH RSA public key",
        format!(
            "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ{} build@ci\n",
            m.of(B64, 500)
        ),
        "build ci",
    );
    let body = m.pem_body(6);
    look_alike(
        f,
        "keys/signing-public.pem",
        "a public key",
        format!("-----BEGIN PUBLIC KEY-----\n{body}-----END PUBLIC KEY-----\n"),
        "signing public",
    );
    let body = m.pem_body(20);
    look_alike(
        f,
        "keys/ann-public.asc",
        "a PGP public key",
        format!(
            "-----BEGIN PGP PUBLIC KEY BLOCK-----\nComment: Ann's key\n\n{body}-----END PGP PUBLIC KEY BLOCK-----\n"
        ),
        "ann public asc",
    );
    let body = m.pem_body(6);
    look_alike(
        f,
        "certs/dhparam.pem",
        "Diffie-Hellman parameters",
        format!("-----BEGIN DH PARAMETERS-----\n{body}-----END DH PARAMETERS-----\n"),
        "dhparam",
    );
    look_alike(
        f,
        "known_hosts.txt",
        "SSH known hosts",
        format!(
            "github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{}\nbuild.internal ecdsa-sha2-nistp256 AAAAE2VjZHNh{}\n",
            m.of(B64, 43),
            m.of(B64, 120)
        ),
        "known hosts",
    );
    look_alike(
        f,
        "authorized_keys.txt",
        "SSH authorized keys",
        format!(
            "# keys allowed on the backup host\nssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{} ann@laptop\n",
            m.of(B64, 43)
        ),
        "allowed on the backup host",
    );
    look_alike(
        f,
        "docs/aws-setup.md",
        "AWS documentation's example keys",
        "# Setting up the AWS CLI\n\nRun `aws configure` and enter your keys. The documentation's example values are `AKIAIOSFODNN7EXAMPLE` and `wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`; yours look alike.\n".to_owned(),
        "setting up the aws cli",
    );
    look_alike(
        f,
        "config.example.yaml",
        "placeholders",
        "# Copy to config.yaml and fill in.\ndatabase:\n  user: app\n  password: <your password>\napi:\n  key: YOUR_API_KEY\n  token: \"${API_TOKEN}\"\n".to_owned(),
        "copy to config yaml and fill in",
    );
    look_alike(
        f,
        "ci/workflow.yml",
        "secrets referenced by name",
        "name: release\njobs:\n  publish:\n    steps:\n      - run: npm publish\n        env:\n          NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}\n          GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}\n".to_owned(),
        "release publish",
    );
    look_alike(
        f,
        "env.sample.txt",
        "a sample environment",
        "DB_PASSWORD=changeme\nSECRET_KEY=xxxxxxxxxxxxxxxxxxxxxxxx\nSTRIPE_KEY=sk_live_...\n"
            .to_owned(),
        "env sample",
    );
    look_alike(
        f,
        "notes/security-basics.md",
        "prose about keys",
        "# Security basics\n\nKeep your private key on your own machine and never paste an API token into a chat. A private key file starts with `-----BEGIN OPENSSH PRIVATE KEY-----`; if you see that line in a shared folder, move the file. Rotate passwords when someone leaves.\n".to_owned(),
        "security basics rotate",
    );
    look_alike(
        f,
        "notes/password-policy.md",
        "a password policy",
        "# Password policy\n\nPasswords have at least 14 characters. The password manager generates them; nobody writes a password into a document. Tokens expire after 90 days.\n".to_owned(),
        "password policy characters",
    );
    look_alike(
        f,
        "web/shop.js",
        "a publishable (public) key",
        format!(
            "// The publishable key is public by design.\nconst stripe = Stripe('pk_live_{}');\n",
            m.of(ALNUM, 24)
        ),
        "publishable key public by design",
    );
    let unsigned = format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(r#"{"alg":"none"}"#),
        URL_SAFE_NO_PAD.encode(r#"{"sub":"demo"}"#)
    );
    look_alike(
        f,
        "docs/unsigned-token.md",
        "an unsigned token",
        format!("An unsigned demo token (alg none), which no server accepts: {unsigned}\n"),
        "unsigned demo token",
    );
    look_alike(
        f,
        "crypto/test-vectors.txt",
        "hash test vectors",
        "SHA-256 test vector for \"abc\": ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\nSHA-1 test vector for \"abc\": a9993e364706816aba3e25717850c26c9cd0d89d\n".to_owned(),
        "test vector abc",
    );
    look_alike(
        f,
        "crypto/hmac-rfc4231.txt",
        "HMAC test vectors named as such",
        "RFC 4231 test case 1, HMAC-SHA-256 test vector: b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7\n".to_owned(),
        "rfc 4231 test case",
    );
    look_alike(
        f,
        "logs/requests.log",
        "request ids and commit hashes",
        format!(
            "request {}-{}-4e6f-8b7a-{} done; deployed commit {}\n",
            m.of(HEX, 8),
            m.of(HEX, 4),
            m.of(HEX, 12),
            m.of(HEX, 40)
        ),
        "deployed commit",
    );
    look_alike(
        f,
        "notes/links.md",
        "URLs without passwords",
        "Clone with https://ann@git.example.com/team/repo.git or open https://example.com:8443/admin; the wiki is at https://wiki.example.com/start.\n".to_owned(),
        "clone the wiki",
    );
    look_alike(
        f,
        "src/lexer.rs",
        "code that handles tokens",
        "fn next(lexer: &mut Lexer) -> Token {\n    let token = lexer.next_token();\n    let password = prompt_password();\n    token\n}\n".to_owned(),
        "lexer next token",
    );
    look_alike(
        f,
        "scripts/ask_password.py",
        "code that asks for a password",
        "import getpass\nimport os\n\npassword = getpass.getpass()\ntoken = os.environ[\"API_TOKEN\"]\n".to_owned(),
        "getpass",
    );
    look_alike(
        f,
        "docs/tokens.md",
        "a placeholder token",
        "Replace ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx with your own token in the workflow.\n"
            .to_owned(),
        "replace with your own token in the workflow",
    );
    look_alike(
        f,
        "policy.csv",
        "a CSV about passwords without any",
        "rule,min_length,requires_symbol\nstaff,14,yes\nservice,32,no\n".to_owned(),
        "requires symbol",
    );
    look_alike(
        f,
        "web/logo.html",
        "an inline image",
        format!(
            "<p>Our logo</p><img alt=logo src=\"data:image/png;base64,{}\">\n",
            m.of(B64, 600)
        ),
        "our logo",
    );
    look_alike(
        f,
        "docs/key-prefixes.md",
        "prose naming key prefixes",
        "Anthropic keys start with sk-ant-api03- and OpenAI project keys with sk-proj-; Stripe test keys start with sk_test_.\n".to_owned(),
        "keys start with",
    );
    look_alike(
        f,
        "ssh_config.txt",
        "an SSH client configuration",
        "Host build\n  HostName 10.0.0.5\n  IdentityFile ~/.ssh/id_ed25519\n  PasswordAuthentication no\n".to_owned(),
        "identityfile hostname",
    );
    look_alike(
        f,
        "ml/tokenizer.py",
        "code counting tokens",
        "MAX_TOKENS = 4096\ntoken_count = len(tokens)\ntokenizer_name = \"bert-base\"\n".to_owned(),
        "tokenizer bert base",
    );
    look_alike(
        f,
        "docs/oauth-flow.md",
        "OAuth documentation with placeholders",
        "The app sends client_id=<client id> and client_secret=<client secret> to the token endpoint, then gets an access token.\n".to_owned(),
        "token endpoint access",
    );
    look_alike(
        f,
        "kube/example-config.yaml",
        "an example kubeconfig",
        "apiVersion: v1\nkind: Config\nusers:\n- name: you\n  user:\n    token: <paste your token>\n".to_owned(),
        "paste your token",
    );
    look_alike(
        f,
        "docker-compose.example.yml",
        "a compose file reading secrets from the environment",
        "services:\n  db:\n    image: postgres:17\n    environment:\n      POSTGRES_PASSWORD: ${POSTGRES_PASSWORD}\n".to_owned(),
        "postgres environment",
    );
    look_alike(
        f,
        "notes/git-log.txt",
        "a git log",
        format!(
            "commit {}\nAuthor: Ann <ann@example.org>\n\n    Fix the token refresh\n\ncommit {}\n    Rotate nothing\n",
            m.of(HEX, 40),
            m.of(HEX, 40)
        ),
        "fix the token refresh",
    );
    look_alike(
        f,
        "recipes/secret-sauce.md",
        "prose with the word secret",
        "# The secret sauce\n\nThe secret is patience: simmer the tomatoes for three hours. My grandmother's password for everything was love.\n".to_owned(),
        "simmer the tomatoes",
    );
    look_alike(
        f,
        "app/empty-settings.json",
        "empty and null secrets",
        "{\"password\": \"\", \"token\": null, \"api_key\": \"\", \"note\": \"filled in at deploy time\"}\n".to_owned(),
        "filled in at deploy time",
    );
    look_alike(
        f,
        "web/login.html",
        "a login form",
        "<form action=/login method=post><label>Password <input type=password name=password autocomplete=current-password></label></form>\n".to_owned(),
        "current password",
    );
    look_alike(
        f,
        "docs/netrc-format.md",
        "documentation of the netrc format",
        "A netrc line reads `machine HOST login USER password PASSWORD`, one per host.\n"
            .to_owned(),
        "netrc line reads",
    );
    look_alike(
        f,
        "people.csv",
        "a CSV of accounts without passwords",
        "name,email,username\nAnn,ann@example.org,ann\nJonas,jonas@example.org,jonas\n".to_owned(),
        "jonas",
    );
    look_alike(
        f,
        "notes/host-fingerprints.md",
        "SSH host fingerprints",
        format!("build.internal: SHA256:{} (ED25519)\n", m.of(B64, 43)),
        "host fingerprints",
    );
    look_alike(
        f,
        "docs/jwt-explained.md",
        "prose about JWTs",
        "A JWT has three parts, header.payload.signature, each base64url; the header names the algorithm, as in {\"alg\":\"HS256\"}.\n".to_owned(),
        "three parts header payload signature",
    );
    look_alike(
        f,
        "docs/connection-strings.md",
        "connection strings with placeholders",
        "Write it as postgres://USER:PASSWORD@HOST:5432/DB or redis://:<password>@cache:6379.\n"
            .to_owned(),
        "write it as",
    );
    look_alike(
        f,
        "notes/uuid-list.txt",
        "identifiers",
        format!(
            "order ids: {} {} {}\n",
            m.of(HEX, 32),
            m.of(HEX, 32),
            m.of(HEX, 32)
        ),
        "order ids",
    );
}
