//! Who may use the settings page and its admin API, tested against the real server: nothing
//! without the session, no integration key opens it, CSRF and foreign origins are refused, the
//! Host check holds, login links work once, a created key never shows again, and plugin uploads
//! are checked before the user's grant installs them.

use base64::Engine as _;
use quarry_tests::admin::{send, session_cookie, sign_in};
use quarry_tests::http;
use quarry_tests::quarry::Quarry;
use serde_json::{Value, json};

fn started() -> Quarry {
    let mut q = Quarry::new();
    let folder = q.scratch("docs");
    std::fs::write(folder.join("a.md"), "the quarterly report\n").expect("fixture");
    q.add_folder("Docs", &folder);
    q.start_with_env(&[("QUARRY_MODEL_DIR", "none")]);
    q
}

/// Every admin route, with a body a signed-in page would send.
fn admin_routes(connector: &str, integration: &str) -> Vec<(&'static str, String, Option<Value>)> {
    vec![
        ("GET", "/admin/v1/integrations".into(), None),
        (
            "POST",
            "/admin/v1/integrations".into(),
            Some(json!({"name": "X", "sharing": {"mode": "all"}})),
        ),
        (
            "GET",
            format!("/admin/v1/integrations/{integration}/docs"),
            None,
        ),
        (
            "POST",
            format!("/admin/v1/integrations/{integration}/rotate"),
            None,
        ),
        (
            "POST",
            format!("/admin/v1/integrations/{integration}/revoke"),
            None,
        ),
        (
            "PUT",
            format!("/admin/v1/integrations/{integration}/sharing"),
            Some(json!({"sharing": {"mode": "declined"}})),
        ),
        (
            "PUT",
            format!("/admin/v1/integrations/{integration}/quota"),
            Some(json!({"quota": 5})),
        ),
        ("GET", "/admin/v1/connectors".into(), None),
        (
            "POST",
            "/admin/v1/connectors".into(),
            Some(json!({"name": "Y", "plugin": "folder", "settings": {"folder": "/tmp"}})),
        ),
        (
            "POST",
            format!("/admin/v1/connectors/{connector}/sync"),
            None,
        ),
        (
            "POST",
            format!("/admin/v1/connectors/{connector}/disable"),
            None,
        ),
        ("DELETE", format!("/admin/v1/connectors/{connector}"), None),
        ("GET", "/admin/v1/plugins".into(), None),
        (
            "POST",
            "/admin/v1/plugins/stage".into(),
            Some(json!({"manifest": "", "component_base64": ""})),
        ),
        (
            "POST",
            "/admin/v1/plugins/install".into(),
            Some(json!({"stage_id": "x", "grant": true})),
        ),
        ("GET", "/admin/v1/activity".into(), None),
        (
            "POST",
            "/admin/v1/search".into(),
            Some(json!({"query": "report", "see_as": integration})),
        ),
        (
            "GET",
            format!("/admin/v1/connectors/{connector}/docs/d_any?page=1&q=report"),
            None,
        ),
        (
            "GET",
            format!("/admin/v1/connectors/{connector}/docs/d_any/file"),
            None,
        ),
        ("POST", "/settings/logout".into(), None),
    ]
}

#[test]
fn no_admin_route_works_without_the_session_and_no_key_opens_one() {
    let q = started();
    let key = q.integration("Agent", "all", &[]);
    let connector = q.connectors()[0]["connector_id"]
        .as_str()
        .expect("id")
        .to_owned();
    let integration = q.cli_json(&["integration", "list", "--json"])[0]["integration_id"]
        .as_str()
        .expect("id")
        .to_owned();
    let token = q.admin_token();
    let key_auth = format!("Bearer {key}");
    let token_auth = format!("Bearer {token}");
    for (method, path, body) in admin_routes(&connector, &integration) {
        let text = body.map(|b| b.to_string()).unwrap_or_default();
        for auth in [None, Some(key_auth.as_str()), Some(token_auth.as_str())] {
            let mut headers = vec![("Content-Type", "application/json")];
            if let Some(auth) = auth {
                headers.push(("Authorization", auth));
            }
            let response = send(&q, method, &path, &headers, text.as_bytes());
            assert_eq!(
                response.status,
                401,
                "{method} {path} with {:?}: {}",
                auth.map(|a| &a[..12]),
                response.text()
            );
            assert_eq!(response.json()["error"]["code"], "UNAUTHORIZED");
        }
    }
    // The page sends strangers to the sign-in form; nothing changed.
    let page = send(&q, "GET", "/settings", &[], b"");
    assert_eq!(page.status, 303);
    assert_eq!(page.header("location"), Some("/settings/login"));
    assert_eq!(q.connectors().len(), 1);
    assert_eq!(
        q.cli_json(&["integration", "list", "--json"])[0]["sharing"]["mode"],
        "all"
    );
}

#[test]
fn changes_need_the_csrf_token_and_this_origin() {
    let q = started();
    let admin = sign_in(&q);
    let body = json!({"name": "Agent", "sharing": {"mode": "all"}}).to_string();
    let cookie = admin.cookie.as_str();
    let attempts: Vec<(&str, Vec<(&str, &str)>)> = vec![
        ("no token", vec![("Cookie", cookie)]),
        (
            "a wrong token",
            vec![("Cookie", cookie), ("X-CSRF-Token", "guessed")],
        ),
        (
            "another site's origin",
            vec![
                ("Cookie", cookie),
                ("X-CSRF-Token", &admin.csrf),
                ("Origin", "http://evil.example"),
            ],
        ),
        (
            "a sandboxed page (null origin)",
            vec![
                ("Cookie", cookie),
                ("X-CSRF-Token", &admin.csrf),
                ("Origin", "null"),
            ],
        ),
    ];
    for (what, mut headers) in attempts {
        headers.push(("Content-Type", "application/json"));
        let response = send(
            &q,
            "POST",
            "/admin/v1/integrations",
            &headers,
            body.as_bytes(),
        );
        assert_eq!(response.status, 403, "{what}: {}", response.text());
        assert!(
            response.json()["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("settings page")),
            "{what}"
        );
    }
    // A search from the search page is a POST, checked the same way: it reads documents.
    let search = send(
        &q,
        "POST",
        "/admin/v1/search",
        &[("Cookie", cookie), ("Content-Type", "application/json")],
        json!({"query": "report"}).to_string().as_bytes(),
    );
    assert_eq!(search.status, 403, "{}", search.text());
    let searched = admin.call(
        &q,
        "POST",
        "/admin/v1/search",
        Some(&json!({"query": "report"})),
    );
    assert_eq!(searched.status, 200, "{}", searched.text());
    // Signing in from another site's form is refused too.
    let form = format!("token={}", q.admin_token());
    let foreign = send(
        &q,
        "POST",
        "/settings/login",
        &[
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Origin", "http://evil.example"),
        ],
        form.as_bytes(),
    );
    assert_eq!(foreign.status, 403);
    assert!(session_cookie(&foreign).is_none());
    assert!(
        q.cli_json(&["integration", "list", "--json"])
            .as_array()
            .is_some_and(Vec::is_empty)
    );
    // With the token, from this origin: created.
    let origin = format!("http://{}", q.addr);
    let created = send(
        &q,
        "POST",
        "/admin/v1/integrations",
        &[
            ("Cookie", cookie),
            ("X-CSRF-Token", &admin.csrf),
            ("Origin", &origin),
            ("Content-Type", "application/json"),
        ],
        body.as_bytes(),
    );
    assert_eq!(created.status, 201, "{}", created.text());
}

#[test]
fn the_host_check_holds_for_the_settings_page() {
    let q = started();
    let admin = sign_in(&q);
    let port = q.addr.rsplit(':').next().expect("port");
    let foreign = format!("evil.example:{port}");
    for path in [
        "/settings",
        "/settings/login",
        "/settings/assets/settings.js",
        "/admin/v1/integrations",
    ] {
        let response = q.raw(&http::build(
            "GET",
            path,
            &foreign,
            &[("Cookie", &admin.cookie)],
            b"",
        ));
        assert_eq!(response.status, 400, "{path}");
        assert!(response.text().contains("Host"), "{path}");
    }
}

#[test]
fn sessions_login_links_and_the_token() {
    let q = started();
    // The token is shown once and kept nowhere in clear.
    assert!(!q.data_dir().join("admin-token").exists());
    assert!(q.stdout().contains("one-time sign-in link"));
    assert!(q.stdout().contains(&q.admin_token()));
    // A wrong token: no cookie.
    let wrong = send(
        &q,
        "POST",
        "/settings/login",
        &[("Content-Type", "application/x-www-form-urlencoded")],
        b"token=0000",
    );
    assert_eq!(wrong.status, 401);
    assert!(session_cookie(&wrong).is_none());
    // A login link works once.
    let printed = q.cli_ok(&["admin", "link", "--url", &format!("http://{}", q.addr)]);
    let link = printed
        .split_whitespace()
        .find(|w| w.contains("/settings/login?code="))
        .expect("a link");
    let path = &link[link.find("/settings").expect("path")..];
    let first = send(&q, "GET", path, &[], b"");
    assert_eq!(first.status, 200);
    let cookie = session_cookie(&first).expect("the link signs in");
    assert_eq!(
        send(&q, "GET", "/settings", &[("Cookie", &cookie)], b"").status,
        200
    );
    let again = send(&q, "GET", path, &[], b"");
    assert_eq!(again.status, 401);
    assert!(session_cookie(&again).is_none());
    // Signing out ends the session on the server, not only in the browser.
    let admin = sign_in(&q);
    assert_eq!(admin.call(&q, "POST", "/settings/logout", None).status, 204);
    let after = send(
        &q,
        "GET",
        "/admin/v1/integrations",
        &[("Cookie", &admin.cookie)],
        b"",
    );
    assert_eq!(after.status, 401);
}

#[test]
fn a_created_key_is_shown_once_and_never_again() {
    let mut q = started();
    let admin = sign_in(&q);
    let connector =
        admin.call(&q, "GET", "/admin/v1/connectors", None).json()["connectors"][0]["connector_id"]
            .as_str()
            .expect("id")
            .to_owned();
    let created = admin.call(
        &q,
        "POST",
        "/admin/v1/integrations",
        Some(&json!({"name": "Agent", "sharing": {"mode": "selected", "connectors": [connector]}, "quota": 50})),
    );
    assert_eq!(created.status, 201, "{}", created.text());
    assert_eq!(created.header("cache-control"), Some("no-store"));
    let body = created.json();
    let key = body["api_key"].as_str().expect("key").to_owned();
    let docs = body["docs"].as_str().expect("docs");
    assert!(docs.contains(&format!("Bearer {key}")));
    let id = body["integration"]["integration_id"]
        .as_str()
        .expect("id")
        .to_owned();
    // The key works, within the selection and the quota.
    let search = q.search(&key, json!({"query": "quarterly report"}));
    assert_eq!(search.status, 200, "{}", search.text());
    assert_eq!(search.header("x-quota-limit"), Some("50"));
    // Bad answers name the field.
    for (bad, field) in [
        (
            json!({"name": "B", "sharing": {"mode": "selected"}}),
            "sharing.connectors",
        ),
        (
            json!({"name": "B", "sharing": {"mode": "maybe"}}),
            "sharing.mode",
        ),
        (json!({"name": "B"}), "sharing"),
        (json!({"name": "agent", "sharing": {"mode": "all"}}), "name"),
        (
            json!({"name": "B", "sharing": {"mode": "all"}, "quota": -1}),
            "quota",
        ),
        (
            json!({"name": "B", "sharing": {"mode": "all"}, "color": 1}),
            "color",
        ),
    ] {
        let response = admin.call(&q, "POST", "/admin/v1/integrations", Some(&bad));
        assert_eq!(response.status, 400, "{bad}: {}", response.text());
        let details = response.json()["error"]["details"].to_string();
        assert!(
            details.contains(&format!("\"{field}\"")),
            "{bad}: {details}"
        );
    }
    // No page or admin answer shows the key again.
    for path in [
        "/settings".to_owned(),
        "/admin/v1/integrations".to_owned(),
        format!("/admin/v1/integrations/{id}/docs"),
        "/admin/v1/connectors".to_owned(),
        "/admin/v1/activity".to_owned(),
    ] {
        let response = admin.call(&q, "GET", &path, None);
        assert_eq!(response.status, 200, "{path}");
        assert!(!response.text().contains(&key), "{path} shows the key");
    }
    let later = admin.call(
        &q,
        "GET",
        &format!("/admin/v1/integrations/{id}/docs"),
        None,
    );
    assert!(
        later.json()["docs"]
            .as_str()
            .is_some_and(|d| d.contains("$QUARRY_API_KEY"))
    );
    // Decline, then revoke, from the admin API: the API answers as the contract says.
    let declined = admin.call(
        &q,
        "PUT",
        &format!("/admin/v1/integrations/{id}/sharing"),
        Some(&json!({"sharing": {"mode": "declined"}})),
    );
    assert_eq!(declined.status, 200);
    let refused = q.search(&key, json!({"query": "report"}));
    assert_eq!(refused.json()["error"]["code"], "DATA_SHARING_DECLINED");
    let revoked = admin.call(
        &q,
        "POST",
        &format!("/admin/v1/integrations/{id}/revoke"),
        None,
    );
    assert_eq!(revoked.json()["revoked_keys"], 1);
    let unauthorized = q.search(&key, json!({"query": "report"}));
    assert_eq!(unauthorized.json()["error"]["code"], "UNAUTHORIZED");
    // The activity log has the searches, under this integration (written within a moment).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let activity = admin.call(
            &q,
            "GET",
            &format!("/admin/v1/activity?integration_id={id}"),
            None,
        );
        let entries = activity.json()["entries"].clone();
        let statuses: Vec<u64> = entries
            .as_array()
            .expect("entries")
            .iter()
            .filter_map(|e| e["status"].as_u64())
            .collect();
        if statuses.contains(&200) && statuses.contains(&403) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{entries}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    q.stop();
    assert!(!q.log().contains(&key), "the key is in the server log");
    assert!(
        !q.stdout().contains(&key),
        "the key is in the server output"
    );
}

#[test]
fn plugin_uploads_are_checked_and_installed_only_when_granted() {
    let q = started();
    let admin = sign_in(&q);
    let folder = quarry_tests::plugin_dir("folder");
    let bundled = std::fs::read_to_string(folder.join("quarry-plugin.toml")).expect("manifest");
    // A user's copy of the folder connector, under an id of its own.
    let manifest = bundled.replace("id = \"folder\"", "id = \"my-folder\"");
    assert_ne!(manifest, bundled);
    let component = std::fs::read(folder.join("quarry_folder.wasm")).expect("component");
    let encoded = base64::engine::general_purpose::STANDARD.encode(&component);
    let stage = |manifest: &str, component: &str| {
        admin.call(
            &q,
            "POST",
            "/admin/v1/plugins/stage",
            Some(&json!({"manifest": manifest, "component_base64": component})),
        )
    };
    // A manifest with an unknown key, and a component that is not one, are refused.
    let unknown = stage(&format!("{manifest}\nhomepage = \"x\"\n"), &encoded);
    assert_eq!(unknown.status, 400);
    assert!(unknown.text().contains("homepage"), "{}", unknown.text());
    let garbage = stage(
        &manifest,
        &base64::engine::general_purpose::STANDARD.encode(b"nope"),
    );
    assert_eq!(garbage.status, 400, "{}", garbage.text());
    // A component of another WIT version is refused, naming both versions.
    let next = quarry_tests::plugin_dir("wit-next");
    let next_manifest = std::fs::read_to_string(next.join("quarry-plugin.toml")).expect("manifest");
    let next_component = std::fs::read(next.join("quarry_wit_next.wasm")).expect("component");
    let refused = stage(
        &next_manifest,
        &base64::engine::general_purpose::STANDARD.encode(&next_component),
    );
    assert_eq!(refused.status, 400);
    let message = refused.json()["error"]["message"].to_string();
    assert!(
        message.contains("0.1.0") && message.contains("0.99.0"),
        "{message}"
    );

    // The id of a plugin that comes with Quarry cannot be taken: the upload would run with
    // the grants of that plugin's connectors.
    let shadowing = stage(&bundled, &encoded);
    assert_eq!(shadowing.status, 400, "{}", shadowing.text());
    assert!(
        shadowing
            .text()
            .contains("belongs to a plugin that comes with Quarry"),
        "{}",
        shadowing.text()
    );
    assert!(!q.data_dir().join("plugins/folder").exists());

    // A good upload shows what it asks for; declining installs nothing.
    let staged = stage(&manifest, &encoded);
    assert_eq!(staged.status, 200, "{}", staged.text());
    let body = staged.json();
    let asks = body["plugin"]["capabilities"].to_string();
    assert!(
        asks.contains("read-only") && asks.contains("No network"),
        "{asks}"
    );
    assert_eq!(body["replaces_version"], serde_json::Value::Null);
    let installed_dir = q.data_dir().join("plugins/my-folder");
    let declined = admin.call(
        &q,
        "POST",
        "/admin/v1/plugins/install",
        Some(&json!({"stage_id": body["stage_id"], "grant": false})),
    );
    assert_eq!(declined.json()["installed"], false);
    assert!(!installed_dir.exists());
    // Granted: installed in the data folder and usable at once.
    let staged = stage(&manifest, &encoded).json();
    let granted = admin.call(
        &q,
        "POST",
        "/admin/v1/plugins/install",
        Some(&json!({"stage_id": staged["stage_id"], "grant": true})),
    );
    assert_eq!(granted.json()["installed"], true, "{}", granted.text());
    assert!(installed_dir.join("quarry-plugin.toml").is_file());
    let stale = admin.call(
        &q,
        "POST",
        "/admin/v1/plugins/install",
        Some(&json!({"stage_id": staged["stage_id"], "grant": true})),
    );
    assert_eq!(stale.status, 404);
    let other = q.scratch("other");
    std::fs::write(other.join("b.md"), "another quarterly note\n").expect("fixture");
    let added = admin.call(
        &q,
        "POST",
        "/admin/v1/connectors",
        Some(&json!({"name": "Other", "plugin": "my-folder", "settings": {"folder": other}})),
    );
    assert_eq!(added.status, 201, "{}", added.text());
    assert_eq!(
        added.json()["connector"]["granted_folders"][0],
        json!(other.canonicalize().expect("real path"))
    );
    // Wrong settings name the field.
    let relative = admin.call(
        &q,
        "POST",
        "/admin/v1/connectors",
        Some(&json!({"name": "Rel", "plugin": "folder", "settings": {"folder": "docs"}})),
    );
    assert_eq!(relative.status, 400);
    assert!(relative.text().contains("full path"), "{}", relative.text());
    let unknown_plugin = admin.call(
        &q,
        "POST",
        "/admin/v1/connectors",
        Some(&json!({"name": "Cal", "plugin": "calendar", "settings": {}})),
    );
    assert_eq!(unknown_plugin.status, 400);
    let message = unknown_plugin.json()["error"]["message"].to_string();
    assert!(
        message.contains("calendar") && message.contains("is not installed (installed: "),
        "{message}"
    );
    q.wait_for("the new connector syncs", |cs| {
        cs.iter()
            .any(|c| c["name"] == "Other" && c["status"] == "idle" && c["doc_count"] == 1)
    });
}
