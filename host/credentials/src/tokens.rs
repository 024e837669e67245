//! The rules for secrets in text: each with the keywords that announce it (lowercase; the
//! prefilter ignores case), how to match it around a keyword, and what its value must look like.
//! Forms follow the providers' documentation, as gitleaks' and detect-secrets' rules do.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};

use crate::Rule;

/// How a rule finds its matches around a keyword.
pub(crate) enum Matcher {
    /// A pattern with a `secret` group. A match may start `back` bytes before the keyword and
    /// ends at most `reach` bytes after it (every repetition in the pattern is bounded).
    Pattern {
        pattern: &'static str,
        back: usize,
        reach: usize,
    },
    /// A private key's block (`pem`).
    PrivateKey,
    /// A JSON Web Token with a signature.
    Jwt,
}

/// What a matched value must also be.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Check {
    /// Nothing more than its entropy and not a placeholder.
    Token,
    /// A key-value assignment (`generic`).
    Assignment,
    /// Base64 of `user:password` (a Docker `auth`, an HTTP Basic header).
    UserPassword,
    /// A password given as it is (in a URL, a netrc line): not a reference or a placeholder.
    Password,
    /// A line of `/etc/shadow` or `.htpasswd`: the hash is enough.
    Hash,
    /// A service account's key file: the text also holds its private key.
    ServiceAccount,
}

/// A rule for secrets in text.
pub(crate) struct TokenRule {
    pub(crate) rule: Rule,
    pub(crate) keywords: &'static [&'static str],
    pub(crate) matcher: Matcher,
    /// Bits per character the value has at least.
    pub(crate) min_entropy: f32,
    pub(crate) check: Check,
    /// Whether the value must stand apart from letters and digits around it.
    pub(crate) bounded: bool,
    /// Whether one finding makes the whole file a credential (a service account's key file).
    pub(crate) whole_file: bool,
}

const fn rule(id: &'static str, what: &'static str) -> Rule {
    Rule { id, what }
}

/// A rule for a provider's token: bounded by non-word characters, random enough.
const fn token(
    id: &'static str,
    what: &'static str,
    keywords: &'static [&'static str],
    pattern: &'static str,
    reach: usize,
) -> TokenRule {
    TokenRule {
        rule: rule(id, what),
        keywords,
        matcher: Matcher::Pattern {
            pattern,
            back: 0,
            reach,
        },
        min_entropy: 3.0,
        check: Check::Token,
        bounded: true,
        whole_file: false,
    }
}

/// The rule for private keys (also used to tell a key file from a note holding a key).
pub(crate) const PRIVATE_KEY: Rule = rule("private-key", "a private key");

/// Every rule for secrets in text but the generic assignment (`generic::RULE`).
pub(crate) const RULES: &[TokenRule] = &[
    TokenRule {
        rule: PRIVATE_KEY,
        keywords: crate::pem::KEYWORDS,
        matcher: Matcher::PrivateKey,
        min_entropy: 0.0,
        check: Check::Token,
        bounded: false,
        whole_file: false,
    },
    token(
        "aws-access-key-id",
        "an AWS access key",
        &["akia", "asia", "abia", "acca", "a3t"],
        r"(?P<secret>(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})",
        24,
    ),
    // An access key's secret beside its id, as AWS's console exports them (`accessKeys.csv`:
    // `AKIA...,<secret>`) and people paste them: the id's rule finds the id, this the secret.
    TokenRule {
        min_entropy: 4.0,
        ..token(
            "aws-key-pair-secret",
            "an AWS secret key beside its key id",
            &["akia", "asia"],
            r#"(?:AKIA|ASIA)[A-Z2-7]{16}["']?[ \t]{0,4}[,;|\t: ][ \t]{0,4}["']?(?P<secret>[A-Za-z0-9/+]{40})"#,
            80,
        )
    },
    TokenRule {
        min_entropy: 4.0,
        matcher: Matcher::Pattern {
            pattern: r#"(?i:secret)[A-Za-z_-]{0,24}["']?[ \t]{0,4}(?:[:=]|=>|is)?[ \t]{0,4}["']?(?P<secret>[A-Za-z0-9/+]{40})"#,
            back: 0,
            reach: 120,
        },
        ..token(
            "aws-secret-access-key",
            "a 40-character secret key (AWS style)",
            &["secret"],
            "",
            0,
        )
    },
    token(
        "github-token",
        "a GitHub token",
        &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        r"(?P<secret>gh[pousr]_[A-Za-z0-9]{36,251})",
        256,
    ),
    token(
        "github-fine-grained-token",
        "a GitHub fine-grained token",
        &["github_pat_"],
        r"(?P<secret>github_pat_[A-Za-z0-9_]{82})",
        96,
    ),
    token(
        "gitlab-token",
        "a GitLab token",
        &[
            "glpat-",
            "gldt-",
            "glptt-",
            "glrt-",
            "glcbt-",
            "glsoat-",
            "glffct-",
            "glimt-",
            "glagent-",
            "gloas-",
            "gr1348941",
        ],
        r"(?P<secret>gl(?:pat|dt|ptt|rt|cbt|soat|ffct|imt|agent|oas)-[0-9A-Za-z_.-]{20,300}|GR1348941[0-9A-Za-z_-]{20,40})",
        320,
    ),
    token(
        "slack-token",
        "a Slack token",
        &["xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxe", "xapp-"],
        r"(?P<secret>xox[bparse](?:\.[A-Za-z0-9-]{1,10})?-[0-9A-Za-z-]{10,250}|xapp-\d-[A-Z0-9]{1,20}-\d{1,20}-[a-z0-9]{20,100})",
        300,
    ),
    token(
        "slack-webhook",
        "a Slack webhook",
        &["hooks.slack.com"],
        r"(?P<secret>hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{30,200})",
        240,
    ),
    token(
        "stripe-secret-key",
        "a Stripe secret key",
        &[
            "sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_",
        ],
        r"(?P<secret>[sr]k_(?:live|test|prod)_[0-9A-Za-z]{10,247})",
        260,
    ),
    token(
        "stripe-webhook-secret",
        "a Stripe webhook secret",
        &["whsec_"],
        r"(?P<secret>whsec_[A-Za-z0-9+/=]{32,100})",
        110,
    ),
    token(
        "openai-key",
        "an OpenAI API key",
        &["sk-proj-", "sk-svcacct-", "sk-admin-", "sk-None-"],
        r"(?P<secret>sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,300})",
        320,
    ),
    TokenRule {
        matcher: Matcher::Pattern {
            pattern: r"(?P<secret>sk-[A-Za-z0-9_-]{0,100}T3BlbkFJ[A-Za-z0-9_-]{20,100})",
            back: 110,
            reach: 110,
        },
        ..token(
            "openai-key-legacy",
            "an OpenAI API key",
            &["t3blbkfj"],
            "",
            0,
        )
    },
    token(
        "anthropic-key",
        "an Anthropic API key",
        &["sk-ant-"],
        r"(?P<secret>sk-ant-(?:api|admin|sid|oat|ort)\d{2}-[A-Za-z0-9_-]{80,120})",
        140,
    ),
    token(
        "google-api-key",
        "a Google API key",
        &["aiza"],
        r"(?P<secret>AIza[0-9A-Za-z_-]{35})",
        40,
    ),
    token(
        "google-oauth-client-secret",
        "a Google OAuth client secret",
        &["gocspx-"],
        r"(?P<secret>GOCSPX-[A-Za-z0-9_-]{28})",
        40,
    ),
    token(
        "google-oauth-token",
        "a Google OAuth token",
        &["ya29.", "1//0"],
        r"(?P<secret>ya29\.[0-9A-Za-z_-]{30,500}|1//0[0-9A-Za-z_-]{40,300})",
        510,
    ),
    TokenRule {
        matcher: Matcher::Pattern {
            pattern: r#""type"\s{0,4}:\s{0,4}"(?P<secret>service_account)""#,
            back: 12,
            reach: 30,
        },
        min_entropy: 0.0,
        check: Check::ServiceAccount,
        whole_file: true,
        bounded: false,
        ..token(
            "service-account-key",
            "a cloud service account's key file",
            &["service_account"],
            "",
            0,
        )
    },
    TokenRule {
        matcher: Matcher::Pattern {
            pattern: r#""client_?[sS]ecret"\s{0,4}:\s{0,4}"(?P<secret>[^"\\\s]{8,200})""#,
            back: 1,
            reach: 230,
        },
        whole_file: true,
        ..token(
            "oauth-client-secret",
            "an OAuth client's secret file",
            &["client_secret", "clientsecret"],
            "",
            0,
        )
    },
    TokenRule {
        matcher: Matcher::Pattern {
            pattern: r"client-key-data:\s{0,4}(?P<secret>[A-Za-z0-9+/=]{20,200})",
            back: 0,
            reach: 230,
        },
        whole_file: true,
        bounded: false,
        ..token(
            "kubeconfig-client-key",
            "a kubeconfig with a client key",
            &["client-key-data"],
            "",
            0,
        )
    },
    TokenRule {
        matcher: Matcher::Pattern {
            pattern: r#""auth"\s{0,4}:\s{0,4}"(?P<secret>[A-Za-z0-9+/]{8,400}={0,2})""#,
            back: 1,
            reach: 420,
        },
        check: Check::UserPassword,
        whole_file: true,
        min_entropy: 2.5,
        ..token(
            "docker-registry-auth",
            "a container registry login",
            &["\"auth\""],
            "",
            0,
        )
    },
    token(
        "azure-storage-key",
        "an Azure storage account key",
        &["accountkey="],
        r"AccountKey=(?P<secret>[A-Za-z0-9+/]{86}==)",
        100,
    ),
    TokenRule {
        matcher: Matcher::Pattern {
            pattern: r"(?P<secret>[a-zA-Z0-9_~.]{3}\dQ~[a-zA-Z0-9_~.-]{31,34})",
            back: 4,
            reach: 40,
        },
        ..token(
            "azure-client-secret",
            "an Azure client secret",
            &["q~"],
            "",
            0,
        )
    },
    TokenRule {
        min_entropy: 3.5,
        ..token(
            "huggingface-token",
            "a Hugging Face token",
            &["hf_"],
            r"(?P<secret>hf_[A-Za-z]{34})",
            40,
        )
    },
    TokenRule {
        min_entropy: 3.5,
        ..token(
            "npm-token",
            "an npm token",
            &["npm_"],
            r"(?P<secret>npm_[A-Za-z0-9]{36})",
            40,
        )
    },
    token(
        "pypi-token",
        "a PyPI token",
        &["pypi-ageichlwas5vcmc"],
        r"(?P<secret>pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,300})",
        330,
    ),
    token(
        "sendgrid-key",
        "a SendGrid API key",
        &["sg."],
        r"(?P<secret>SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})",
        70,
    ),
    TokenRule {
        matcher: Matcher::Pattern {
            pattern: r"(?i:twilio)[\s\S]{0,200}?(?P<secret>SK[0-9a-fA-F]{32})",
            back: 0,
            reach: 240,
        },
        ..token("twilio-key", "a Twilio API key", &["twilio"], "", 0)
    },
    TokenRule {
        matcher: Matcher::Pattern {
            pattern: r"(?P<secret>[0-9a-f]{32}-us\d{1,2})",
            back: 32,
            reach: 6,
        },
        ..token("mailchimp-key", "a Mailchimp API key", &["-us"], "", 0)
    },
    token(
        "mailgun-key",
        "a Mailgun API key",
        &["key-"],
        r"(?P<secret>key-[0-9a-f]{32})",
        40,
    ),
    token(
        "digitalocean-token",
        "a DigitalOcean token",
        &["dop_v1_", "doo_v1_", "dor_v1_"],
        r"(?P<secret>do[por]_v1_[a-f0-9]{64})",
        72,
    ),
    token(
        "shopify-token",
        "a Shopify token",
        &["shpat_", "shpca_", "shppa_", "shpss_"],
        r"(?P<secret>shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32})",
        40,
    ),
    TokenRule {
        matcher: Matcher::Pattern {
            pattern: r"(?i:discord)[\s\S]{0,200}?(?P<secret>[MNO][A-Za-z\d_-]{23,25}\.[A-Za-z\d_-]{6}\.[A-Za-z\d_-]{27,38})",
            back: 0,
            reach: 280,
        },
        ..token(
            "discord-bot-token",
            "a Discord bot token",
            &["discord"],
            "",
            0,
        )
    },
    TokenRule {
        matcher: Matcher::Pattern {
            pattern: r"(?P<secret>\d{8,10}:AA[0-9A-Za-z_-]{33})",
            back: 10,
            reach: 40,
        },
        ..token(
            "telegram-bot-token",
            "a Telegram bot token",
            &[":aa"],
            "",
            0,
        )
    },
    token(
        "square-token",
        "a Square token",
        &["sq0atp-", "sq0csp-", "eaaa"],
        r"(?P<secret>sq0(?:atp|csp)-[0-9A-Za-z_-]{22,60}|EAAA[0-9A-Za-z_+-]{60})",
        70,
    ),
    token(
        "databricks-token",
        "a Databricks token",
        &["dapi"],
        r"(?P<secret>dapi[a-f0-9]{32}(?:-\d)?)",
        40,
    ),
    token(
        "doppler-token",
        "a Doppler token",
        &[
            "dp.pt.",
            "dp.st.",
            "dp.ct.",
            "dp.sa.",
            "dp.scim.",
            "dp.audit.",
        ],
        r"(?P<secret>dp\.(?:pt|st|ct|sa|scim|audit)\.[a-zA-Z0-9]{40,44})",
        60,
    ),
    token(
        "linear-key",
        "a Linear API key",
        &["lin_api_"],
        r"(?P<secret>lin_api_[A-Za-z0-9]{40})",
        50,
    ),
    TokenRule {
        min_entropy: 3.5,
        ..token(
            "notion-token",
            "a Notion token",
            &["ntn_", "secret_"],
            r"(?P<secret>ntn_\d{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})",
            60,
        )
    },
    token(
        "postman-key",
        "a Postman API key",
        &["pmak-"],
        r"(?P<secret>PMAK-[a-f0-9]{24}-[a-f0-9]{34})",
        70,
    ),
    token(
        "grafana-token",
        "a Grafana token",
        &["glc_", "glsa_"],
        r"(?P<secret>glc_[A-Za-z0-9+/]{32,400}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})",
        410,
    ),
    token(
        "newrelic-key",
        "a New Relic API key",
        &["nrak-"],
        r"(?P<secret>NRAK-[A-Z0-9]{27})",
        40,
    ),
    token(
        "sentry-token",
        "a Sentry token",
        &["sntrys_", "sntryu_"],
        r"(?P<secret>sntrys_eyJ[A-Za-z0-9_=+/-]{40,400}|sntryu_[a-f0-9]{64})",
        420,
    ),
    token(
        "age-secret-key",
        "an age secret key",
        &["age-secret-key-1"],
        r"(?P<secret>AGE-SECRET-KEY-1[0-9A-Z]{58})",
        80,
    ),
    TokenRule {
        matcher: Matcher::Pattern {
            pattern: r"(?i:privatekey)\s{0,4}=\s{0,4}(?P<secret>[A-Za-z0-9+/]{42,43}=)",
            back: 0,
            reach: 70,
        },
        ..token(
            "wireguard-private-key",
            "a WireGuard private key",
            &["privatekey"],
            "",
            0,
        )
    },
    TokenRule {
        rule: rule("jwt", "a signed JSON Web Token"),
        keywords: &["eyj"],
        matcher: Matcher::Jwt,
        min_entropy: 3.0,
        check: Check::Token,
        bounded: true,
        whole_file: false,
    },
    TokenRule {
        matcher: Matcher::Pattern {
            pattern: r#"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]{1,24})://(?P<user>[^\s:/@?#"'<>\\]{0,64}):(?P<secret>[^\s/@"'<>\\]{3,128})@[A-Za-z0-9_.-]{1,253}"#,
            back: 25,
            reach: 460,
        },
        check: Check::Password,
        min_entropy: 1.5,
        bounded: false,
        ..token("url-password", "a password in a URL", &["://"], "", 0)
    },
    TokenRule {
        matcher: Matcher::Pattern {
            pattern: r#"(?i:authorization)["']?\s{0,4}[:=]\s{0,4}["']?(?i:basic)\s{1,4}(?P<secret>[A-Za-z0-9+/]{12,500}={0,2})"#,
            back: 0,
            reach: 540,
        },
        check: Check::UserPassword,
        bounded: false,
        ..token(
            "basic-auth-header",
            "an HTTP Basic password",
            &["authorization"],
            "",
            0,
        )
    },
    TokenRule {
        matcher: Matcher::Pattern {
            pattern: r#"(?i:authorization)["']?\s{0,4}[:=]\s{0,4}["']?(?i:bearer)\s{1,4}(?P<secret>[A-Za-z0-9._~+/-]{20,1000}={0,2})"#,
            back: 0,
            reach: 1040,
        },
        min_entropy: 3.5,
        bounded: false,
        ..token(
            "bearer-token",
            "an HTTP bearer token",
            &["authorization"],
            "",
            0,
        )
    },
    TokenRule {
        matcher: Matcher::Pattern {
            pattern: r#"machine\s{1,8}\S{1,253}(?:\s{1,8}login\s{1,8}\S{1,128})?\s{1,8}password\s{1,8}(?P<secret>[^\s`'",;]{4,128})"#,
            back: 0,
            reach: 560,
        },
        check: Check::Password,
        min_entropy: 1.5,
        bounded: false,
        ..token(
            "netrc-password",
            "a password in a netrc file",
            &["machine"],
            "",
            0,
        )
    },
    TokenRule {
        matcher: Matcher::Pattern {
            pattern: r"[A-Za-z0-9._-]{1,64}:(?P<secret>\$(?:2[aby]\$\d\d\$[./A-Za-z0-9]{53}|apr1\$[./A-Za-z0-9]{1,8}\$[./A-Za-z0-9]{22}|[156]\$[^$:\s]{1,16}\$[./A-Za-z0-9]{22,86}|y\$[./A-Za-z0-9]{1,10}\$[./A-Za-z0-9]{1,30}\$[./A-Za-z0-9]{43}))",
            back: 65,
            reach: 130,
        },
        check: Check::Hash,
        min_entropy: 3.0,
        bounded: false,
        ..token(
            "password-hash",
            "a password hash (shadow, htpasswd)",
            &["$2a$", "$2b$", "$2y$", "$apr1$", "$1$", "$5$", "$6$", "$y$"],
            "",
            0,
        )
    },
];

/// The JSON Web Token at byte `pos` (where `eyJ` was found): three base64url segments joined by
/// dots, whose header decodes to JSON naming an algorithm other than `none`, whose payload
/// decodes to JSON, and whose signature is not empty. Returns its span.
pub(crate) fn jwt_at(text: &str, pos: usize) -> Option<std::ops::Range<usize>> {
    let bytes = text.as_bytes();
    let segment = |from: usize| {
        let len = bytes[from..]
            .iter()
            .take(8192)
            .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
            .count();
        from + len
    };
    let header_end = segment(pos);
    if bytes.get(header_end) != Some(&b'.') {
        return None;
    }
    let payload_end = segment(header_end + 1);
    if bytes.get(payload_end) != Some(&b'.') || !text[header_end + 1..].starts_with("eyJ") {
        return None;
    }
    let end = segment(payload_end + 1);
    if end - payload_end - 1 < 16 {
        return None; // unsigned (`alg: none`) or cut short
    }
    let header = URL_SAFE_NO_PAD
        .decode(text[pos..header_end].trim_end_matches('='))
        .ok()?;
    let header = String::from_utf8(header).ok()?;
    let payload = URL_SAFE_NO_PAD
        .decode(text[header_end + 1..payload_end].trim_end_matches('='))
        .ok()?;
    let signed = header.contains("\"alg\"") && !header.to_ascii_lowercase().contains("\"none\"");
    (signed && payload.first() == Some(&b'{')).then_some(pos..end)
}

/// Whether `value` is base64 of `user:password` with a password.
pub(crate) fn is_user_password(value: &str) -> bool {
    let Ok(decoded) = STANDARD.decode(value) else {
        return false;
    };
    let Ok(text) = String::from_utf8(decoded) else {
        return false;
    };
    match text.split_once(':') {
        Some((user, password)) => {
            !user.is_empty() && password.len() >= 3 && !password.contains(char::is_control)
        }
        None => false,
    }
}
