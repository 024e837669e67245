//! Every rule finds its kind of credential in a text written as people write them, and none of
//! the look-alikes people keep beside them (certificates, public keys, placeholders, prose, test
//! vectors) is taken for one. Values are made up, their forms real.

use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use quarry_credentials::{Detector, MARKER, Scan, Subject, redact};

const BUDGET: Duration = Duration::from_secs(5);

/// A small deterministic generator of made-up values.
struct Made(u64);

const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const HEX: &str = "0123456789abcdef";
const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URLSAFE: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
const UPPER32: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const LETTERS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const DIGITS: &str = "0123456789";

impl Made {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn of(&mut self, alphabet: &str, n: usize) -> String {
        let chars: Vec<char> = alphabet.chars().collect();
        (0..n)
            .map(|_| chars[(self.next() % chars.len() as u64) as usize])
            .collect()
    }

    fn pem_body(&mut self) -> String {
        (0..12).map(|_| self.of(B64, 64) + "\n").collect()
    }
}

fn scan(path: &str, text: &str) -> Scan {
    Detector::shared().scan(&Subject { path, text }, BUDGET)
}

fn credentials(m: &mut Made) -> Vec<(&'static str, &'static str, String)> {
    let jwt = format!(
        "{}.{}.{}",
        URL_SAFE_NO_PAD.encode(r#"{"alg":"HS256","typ":"JWT"}"#),
        URL_SAFE_NO_PAD.encode(r#"{"sub":"1234","name":"Ann","iat":1767225600}"#),
        m.of(URLSAFE, 43)
    );
    let body = m.pem_body();
    vec![
        (
            "private-key",
            "keys/server.key",
            format!("-----BEGIN RSA PRIVATE KEY-----\n{body}-----END RSA PRIVATE KEY-----\n"),
        ),
        (
            "private-key",
            "notes/ops.md",
            format!(
                "# Ops\n{}The deploy key, until we move it to the vault:\n\n-----BEGIN OPENSSH PRIVATE KEY-----\n{}-----END OPENSSH PRIVATE KEY-----\n\nRotate it in May.\n",
                "Deploys run from the build host every weekday at ten; the runbook lists who may start one, what to check before and after, and whom to call when a step fails.\n".repeat(8),
                m.pem_body()
            ),
        ),
        (
            "service-account-key",
            "cloud/svc.json",
            format!(
                "{{\n  \"type\": \"service_account\",\n  \"project_id\": \"acme-prod\",\n  \"private_key_id\": \"{}\",\n  \"private_key\": \"-----BEGIN PRIVATE KEY-----\\n{}\\n-----END PRIVATE KEY-----\\n\",\n  \"client_email\": \"svc@acme-prod.iam.gserviceaccount.com\"\n}}\n",
                m.of(HEX, 40),
                m.of(B64, 600)
            ),
        ),
        (
            "oauth-client-secret",
            "client_secret_1234.json",
            format!(
                "{{\"installed\":{{\"client_id\":\"1234-abc.apps.googleusercontent.com\",\"project_id\":\"acme\",\"auth_uri\":\"https://accounts.google.com/o/oauth2/auth\",\"token_uri\":\"https://oauth2.googleapis.com/token\",\"client_secret\":\"{}\"}}}}",
                m.of(URLSAFE, 24)
            ),
        ),
        (
            "aws-access-key-id",
            "meetings/2026-03-02.md",
            format!(
                "Standup. Marta shared the staging keys: AKIA{} and secret {} (rotate after the demo).",
                m.of(UPPER32, 16),
                m.of(B64, 40)
            ),
        ),
        (
            "aws-secret-access-key",
            "aws/credentials.ini",
            format!(
                "[default]\naws_access_key_id = AKIA{}\naws_secret_access_key = {}\n",
                m.of(UPPER32, 16),
                m.of(B64, 40)
            ),
        ),
        (
            "github-token",
            "deploy.sh",
            format!(
                "#!/bin/sh\nexport GITHUB_TOKEN=ghp_{}\ngit push\n",
                m.of(ALNUM, 36)
            ),
        ),
        (
            "github-fine-grained-token",
            "notes/gh.txt",
            format!("github_pat_{}_{}", m.of(ALNUM, 22), m.of(ALNUM, 59)),
        ),
        (
            "gitlab-token",
            "ci/notes.txt",
            format!("CI token glpat-{}", m.of(URLSAFE, 20)),
        ),
        (
            "slack-token",
            "bots/slack.md",
            format!(
                "Our bot: `xoxb-{}-{}-{}`",
                m.of(DIGITS, 12),
                m.of(DIGITS, 13),
                m.of(ALNUM, 24)
            ),
        ),
        (
            "slack-webhook",
            "alerts.yaml",
            format!(
                "webhook: https://hooks.slack.com/services/T{}/B{}/{}",
                m.of(UPPER32, 9),
                m.of(UPPER32, 9),
                m.of(ALNUM, 24)
            ),
        ),
        (
            "stripe-secret-key",
            "billing/charge.py",
            format!(
                "import stripe\nstripe.api_key = \"sk_live_{}\"\n",
                m.of(ALNUM, 24)
            ),
        ),
        (
            "stripe-webhook-secret",
            "billing/hooks.env",
            format!("STRIPE_WEBHOOK=whsec_{}", m.of(ALNUM, 32)),
        ),
        (
            "openai-key",
            "ai/config.toml",
            format!("key = \"sk-proj-{}\"", m.of(URLSAFE, 64)),
        ),
        (
            "openai-key-legacy",
            "ai/old.txt",
            format!("sk-{}T3BlbkFJ{}", m.of(ALNUM, 20), m.of(ALNUM, 20)),
        ),
        (
            "anthropic-key",
            "ai/claude.md",
            format!("ANTHROPIC key sk-ant-api03-{}AA", m.of(URLSAFE, 93)),
        ),
        (
            "google-api-key",
            "maps.html",
            format!("<script src=\"https://maps.example/js?key=AIza{}\"></script>", m.of(URLSAFE, 35)),
        ),
        (
            "google-oauth-client-secret",
            "oauth.txt",
            format!("GOCSPX-{}", m.of(URLSAFE, 28)),
        ),
        (
            "google-oauth-token",
            "token.txt",
            format!("ya29.{}", m.of(URLSAFE, 80)),
        ),
        (
            "kubeconfig-client-key",
            "kube/config.yaml",
            format!(
                "apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n    client-certificate-data: {}\n    client-key-data: {}\n",
                m.of(B64, 200),
                m.of(B64, 300)
            ),
        ),
        (
            "docker-registry-auth",
            "docker-config.json",
            format!(
                "{{\"auths\": {{\"registry.example.com\": {{\"auth\": \"{}\"}}}}}}",
                STANDARD.encode(format!("deploy:{}", m.of(ALNUM, 20)))
            ),
        ),
        (
            "azure-storage-key",
            "azure.txt",
            format!(
                "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={}==;EndpointSuffix=core.windows.net",
                m.of(B64, 86)
            ),
        ),
        (
            "azure-client-secret",
            "azure-app.txt",
            format!("secret value: {}8Q~{}", m.of(ALNUM, 3), m.of(ALNUM, 34)),
        ),
        (
            "huggingface-token",
            "hf.txt",
            format!("hf_{}", m.of(LETTERS, 34)),
        ),
        (
            "npm-token",
            "npmrc.txt",
            format!("//registry.npmjs.org/:_authToken=npm_{}", m.of(ALNUM, 36)),
        ),
        (
            "pypi-token",
            "pypirc.txt",
            format!("[pypi]\nusername = __token__\npassword = pypi-AgEIcHlwaS5vcmc{}", m.of(URLSAFE, 70)),
        ),
        (
            "sendgrid-key",
            "mail.txt",
            format!("SG.{}.{}", m.of(URLSAFE, 22), m.of(URLSAFE, 43)),
        ),
        (
            "twilio-key",
            "sms.md",
            format!("Twilio API key: SK{}", m.of(HEX, 32)),
        ),
        (
            "mailchimp-key",
            "newsletter.txt",
            format!("{}-us21", m.of(HEX, 32)),
        ),
        (
            "mailgun-key",
            "mailgun.txt",
            format!("key-{}", m.of(HEX, 32)),
        ),
        (
            "digitalocean-token",
            "do.txt",
            format!("dop_v1_{}", m.of(HEX, 64)),
        ),
        (
            "shopify-token",
            "shop.txt",
            format!("shpat_{}", m.of(HEX, 32)),
        ),
        (
            "discord-bot-token",
            "bot.md",
            format!(
                "Discord bot: M{}.{}.{}",
                m.of(ALNUM, 24),
                m.of(URLSAFE, 6),
                m.of(URLSAFE, 27)
            ),
        ),
        (
            "telegram-bot-token",
            "tg.txt",
            format!("{}:AA{}", m.of(DIGITS, 10), m.of(URLSAFE, 33)),
        ),
        (
            "square-token",
            "square.txt",
            format!("sq0atp-{}", m.of(URLSAFE, 22)),
        ),
        (
            "databricks-token",
            "db.txt",
            format!("dapi{}", m.of(HEX, 32)),
        ),
        (
            "doppler-token",
            "doppler.txt",
            format!("dp.pt.{}", m.of(ALNUM, 43)),
        ),
        (
            "linear-key",
            "linear.txt",
            format!("lin_api_{}", m.of(ALNUM, 40)),
        ),
        (
            "notion-token",
            "notion.txt",
            format!("secret_{}", m.of(ALNUM, 43)),
        ),
        (
            "postman-key",
            "postman.txt",
            format!("PMAK-{}-{}", m.of(HEX, 24), m.of(HEX, 34)),
        ),
        (
            "grafana-token",
            "grafana.txt",
            format!("glsa_{}_{}", m.of(ALNUM, 32), m.of(HEX, 8)),
        ),
        (
            "newrelic-key",
            "nr.txt",
            format!("NRAK-{}", m.of(UPPER32, 27)),
        ),
        (
            "sentry-token",
            "sentry.txt",
            format!("sntryu_{}", m.of(HEX, 64)),
        ),
        (
            "age-secret-key",
            "age.txt",
            format!("AGE-SECRET-KEY-1{}", m.of(UPPER32, 58)),
        ),
        (
            "wireguard-private-key",
            "wg0.conf",
            format!(
                "[Interface]\nPrivateKey = {}=\nAddress = 10.0.0.2/32\n",
                m.of(B64, 43)
            ),
        ),
        ("jwt", "api-notes.md", format!("Use this session: {jwt}")),
        (
            "url-password",
            "app.ini",
            format!("dsn = postgres://app:{}@db.internal:5432/app", m.of(ALNUM, 16)),
        ),
        (
            "basic-auth-header",
            "curl.txt",
            format!(
                "curl -H 'Authorization: Basic {}' https://api.example.com",
                STANDARD.encode(format!("ann:{}", m.of(ALNUM, 14)))
            ),
        ),
        (
            "bearer-token",
            "http.txt",
            format!("Authorization: Bearer {}", m.of(URLSAFE, 40)),
        ),
        (
            "netrc-password",
            "netrc.txt",
            format!("machine api.example.com login ann password {}", m.of(ALNUM, 14)),
        ),
        (
            "password-hash",
            "htpasswd.txt",
            format!("admin:$apr1${}${}", m.of(ALNUM, 8), m.of(ALNUM, 22)),
        ),
        (
            "password-assignment",
            "settings.env",
            format!("DB_PASSWORD={}!{}", m.of(ALNUM, 10), m.of(DIGITS, 3)),
        ),
        (
            "password-assignment",
            "login.py",
            format!("password = \"{}#{}\"\n", m.of(ALNUM, 9), m.of(DIGITS, 2)),
        ),
        ("keystore", "certs/client.p12", String::new()),
        ("wallet", "crypto/wallet.dat", String::new()),
        ("password-database", "Passwords.kdbx", String::new()),
        ("ssh-private-key-file", "keys/id_ed25519", String::new()),
        ("browser-logins", "firefox/logins.json", String::new()),
        (
            "password-export",
            "Passwords.csv",
            format!(
                "name,url,username,password,note\nbank,https://bank.example,ann,{},\n",
                m.of(ALNUM, 12)
            ),
        ),
    ]
}

#[test]
fn every_rule_finds_its_kind_of_credential() {
    let mut made = Made(0x5eed_1234_abcd_0001);
    let mut seen = std::collections::BTreeSet::new();
    for (rule, path, text) in credentials(&mut made) {
        let found = scan(path, &text);
        assert!(found.complete, "{rule}: incomplete");
        let rules: Vec<&str> = found
            .credential_file
            .iter()
            .map(|r| r.id)
            .chain(found.secrets.iter().map(|s| s.rule.id))
            .collect();
        assert!(
            rules.contains(&rule),
            "{rule} not found in {path}: {rules:?}\n{text}"
        );
        seen.insert(rule);
    }
    let every: std::collections::BTreeSet<&str> =
        Detector::shared().rules().iter().map(|r| r.id).collect();
    let untested: Vec<&&str> = every.difference(&seen).collect();
    assert!(
        untested.is_empty(),
        "rules without an example: {untested:?}"
    );
}

#[test]
fn a_key_file_and_a_service_account_are_credential_files_and_a_note_with_a_token_is_not() {
    let mut made = Made(7);
    let all = credentials(&mut made);
    let file_of = |path: &str| {
        let (_, p, text) = all.iter().find(|(_, p, _)| *p == path).expect("example");
        scan(p, text).credential_file.map(|r| r.id)
    };
    assert_eq!(file_of("keys/server.key"), Some("private-key"));
    assert_eq!(file_of("cloud/svc.json"), Some("service-account-key"));
    assert_eq!(file_of("kube/config.yaml"), Some("kubeconfig-client-key"));
    assert_eq!(file_of("meetings/2026-03-02.md"), None);
    assert_eq!(
        file_of("notes/ops.md"),
        None,
        "a note quoting a key is text with a secret"
    );
}

#[test]
fn look_alikes_are_not_credentials() {
    let mut m = Made(99);
    let body = m.pem_body();
    let unsigned = format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(r#"{"alg":"none"}"#),
        URL_SAFE_NO_PAD.encode(r#"{"sub":"1"}"#)
    );
    let look_alikes = [
        ("certs/ca.crt", format!("-----BEGIN CERTIFICATE-----\n{body}-----END CERTIFICATE-----\n")),
        ("keys/server.pub.pem", format!("-----BEGIN PUBLIC KEY-----\n{body}-----END PUBLIC KEY-----\n")),
        ("keys/id_ed25519.pub", format!("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{} ann@laptop\n", m.of(B64, 43))),
        ("keys/pgp.asc", format!("-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n{body}-----END PGP PUBLIC KEY BLOCK-----\n")),
        ("req.csr", format!("-----BEGIN CERTIFICATE REQUEST-----\n{body}-----END CERTIFICATE REQUEST-----\n")),
        ("docs/aws.md", "Example: `aws_access_key_id = AKIAIOSFODNN7EXAMPLE` and `aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`.".to_owned()),
        ("config.example.yaml", "database:\n  user: app\n  password: <your password>\n  api_key: YOUR_API_KEY\n".to_owned()),
        ("ci.yml", "env:\n  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}\n  NPM_TOKEN: $NPM_TOKEN\n".to_owned()),
        (".env.sample", "DB_PASSWORD=changeme\nSECRET_KEY=xxxxxxxxxxxxxxxx\n".to_owned()),
        ("notes/security.md", "Keep your private key safe and never paste a token into chat. Rotate passwords every 90 days; the password manager keeps them. A private key file starts with -----BEGIN RSA PRIVATE KEY-----.".to_owned()),
        ("shop.js", format!("const stripe = Stripe('pk_live_{}');", m.of(ALNUM, 24))),
        ("jwt.md", format!("An unsigned token: {unsigned}")),
        ("vectors.txt", "SHA-256 test vector for \"abc\": ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\nHMAC-SHA256 test vector (RFC 4231, case 1): b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7\n".to_owned()),
        ("ids.txt", format!("request 3f2b8c1e-9a4d-4e6f-8b7a-1c2d3e4f5a6b commit {}", m.of(HEX, 40))),
        ("links.md", "Clone https://ann@git.example.com/repo.git or open https://example.com:8443/api/v1.".to_owned()),
        ("lexer.rs", "let token = lexer.next_token();\nlet password = prompt_password()?;\nfn secret(&self) -> &str { &self.secret }\n".to_owned()),
        ("auth.py", "password = getpass.getpass()\ntoken = os.environ[\"TOKEN\"]\n".to_owned()),
        ("tokens.md", "Replace ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx with your own token.".to_owned()),
        ("policy.csv", "rule,min_length,requires_symbol\nstrong,12,yes\n".to_owned()),
        ("img.html", format!("<img src=\"data:image/png;base64,{}\">", m.of(B64, 400))),
        ("keys.md", "Anthropic keys start with sk-ant-api03- and OpenAI keys with sk-proj-.".to_owned()),
        ("ssh_config", "Host build\n  HostName 10.0.0.5\n  IdentityFile ~/.ssh/id_ed25519\n  PasswordAuthentication no\n".to_owned()),
        ("tokenizer.py", "MAX_TOKENS = 4096\ntoken_count = len(tokens)\n".to_owned()),
    ];
    for (path, text) in look_alikes {
        let found = scan(path, &text);
        assert!(found.is_clear(), "{path}: {found:?}\n{text}");
    }
}

#[test]
fn redaction_leaves_the_rest_of_the_text_and_no_secret() {
    let mut m = Made(3);
    let token = format!("ghp_{}", m.of(ALNUM, 36));
    let password = format!("{}!{}", m.of(ALNUM, 10), m.of(DIGITS, 3));
    let text =
        format!("Deploy notes\nGITHUB_TOKEN={token}\n\u{c}Page two\nDB_PASSWORD={password}\nend");
    let found = scan("notes.txt", &text);
    assert_eq!(found.secrets.len(), 2, "{found:?}");
    let page_two = text.find("Page two").expect("page") as u32;
    let (redacted, pages) = redact(&text, &[0, page_two], &found.secrets);
    assert!(!redacted.contains(&token) && !redacted.contains(&password));
    assert!(redacted.contains("Deploy notes") && redacted.contains(MARKER));
    assert!(redacted[pages[1] as usize..].starts_with("Page two"));
}

#[test]
fn a_hostile_text_is_decided_within_the_budget() {
    // Keywords everywhere: every rule's windows are matched over and over.
    let mut hostile = String::new();
    while hostile.len() < 16 << 20 {
        hostile.push_str(
            "token=ghp_ key- -----BEGIN PRIVATE KEY-----\n eyJ.eyJ. https://a:b@c password: ",
        );
    }
    let started = Instant::now();
    let found = Detector::shared().scan(
        &Subject {
            path: "hostile.txt",
            text: &hostile,
        },
        Duration::from_millis(500),
    );
    let took = started.elapsed();
    assert!(took < Duration::from_secs(3), "took {took:?}");
    if found.complete {
        assert!(!found.is_clear() || found.secrets.is_empty());
    }
}
