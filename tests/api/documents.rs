//! Vendors' documents as they mean them (issue 12): the shapes real OpenAPI documents
//! bring (allOf bodies, readOnly properties, required parameters with defaults, unions,
//! empty answers), from a fixture written for these tests, called through rmcp's client
//! against the local echo vendor.

use super::helpers::*;
use super::vendor;
use graft::service::Actor;
use rmcp::model::{CallToolResult, ProtocolVersion};
use serde_json::{json, Value};
use std::collections::BTreeSet;

const SHAPES: &str = include_str!("../fixtures/shapes_api.yaml");

fn names(v: &Value) -> BTreeSet<String> {
    match v {
        Value::Object(m) => m.keys().cloned().collect(),
        Value::Array(a) => a
            .iter()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect(),
        _ => BTreeSet::new(),
    }
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

struct Shapes {
    app: TestApp,
    vendor: vendor::Vendor,
    token: String,
    _dir: tempfile::TempDir,
}

async fn shapes() -> Shapes {
    let dir = tempfile::tempdir().unwrap();
    let vendor = vendor::start(None).await;
    let app = spawn_app_in(dir.path()).await;
    let report = app
        .graft
        .import_openapi("shapes", SHAPES, Some(&vendor.url()), &mut |_, _| {})
        .await
        .unwrap();
    assert_eq!(report.imported, 11, "{report:?}");
    assert_eq!(
        report.withheld,
        vec![
            ("whoAmI".to_string(), "header Authorization".to_string()),
            (
                "whoAmI".to_string(),
                "header X-HTTP-Method-Override".to_string()
            ),
            ("whoAmI".to_string(), "header X_HTTP_Method".to_string()),
            ("whoAmI".to_string(), "header Cookie ".to_string()),
        ]
    );
    let (_, token) = agent(&app, "alpha").await;
    for tool in [
        "create_member",
        "create_note",
        "draw_shape",
        "delete_with_status",
        "upload_file",
    ] {
        app.graft
            .decide_approval(&Actor::Person("ops".into()), "alpha", "shapes", tool, true)
            .await
            .unwrap();
    }
    Shapes {
        app,
        vendor,
        token,
        _dir: dir,
    }
}

/// The input schema a client sees for `shapes__<name>` once promoted.
async fn served_schema(
    client: &rmcp::service::RunningService<rmcp::RoleClient, Counting>,
    name: &str,
) -> Value {
    let r = call(client, "promote", json!({"vendor": "shapes", "name": name})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let tools = client.list_tools(None).await.unwrap().tools;
    let t = tools
        .iter()
        .find(|t| t.name == format!("shapes__{name}"))
        .expect("promoted tool listed");
    Value::Object((*t.input_schema).clone())
}

async fn run(
    client: &rmcp::service::RunningService<rmcp::RoleClient, Counting>,
    name: &str,
    input: Value,
) -> CallToolResult {
    call(
        client,
        "run_tool",
        json!({"vendor": "shapes", "name": name, "input": input}),
    )
    .await
}

#[tokio::test]
async fn all_of_bodies_are_flat_and_read_only_properties_are_not_asked() {
    let s = shapes().await;
    let (c, _) = legacy_client(&s.app, &s.token, ProtocolVersion::V_2025_11_25).await;

    let schema = served_schema(&c, "create_member").await;
    assert_eq!(
        names(&schema["properties"]),
        set(&["email", "name", "password", "team"]),
        "{schema}"
    );
    assert_eq!(names(&schema["required"]), set(&["email", "name"]));
    assert!(!schema.to_string().contains("allOf"), "{schema}");
    let r = run(
        &c,
        "create_member",
        json!({"name": "Ada", "email": "ada@example.com"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let sent: Value = serde_json::from_str(&s.vendor.last().body).unwrap();
    assert_eq!(sent, json!({"name": "Ada", "email": "ada@example.com"}));
    // the write-only password is still an input
    let r = run(
        &c,
        "create_member",
        json!({"name": "Ada", "email": "ada@example.com", "password": "pw"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false));

    // allOf in a property: merged the same way, readOnly dropped inside it
    let schema = served_schema(&c, "create_note").await;
    let author = &schema["properties"]["author"];
    assert_eq!(
        names(&author["properties"]),
        set(&["name", "team"]),
        "{author}"
    );
    assert_eq!(names(&author["required"]), set(&["name"]));
    let r = run(
        &c,
        "create_note",
        json!({"text": "hi", "author": {"name": "Ada"}}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let sent: Value = serde_json::from_str(&s.vendor.last().body).unwrap();
    assert_eq!(sent, json!({"text": "hi", "author": {"name": "Ada"}}));

    // a union stays under `body`, and says so
    let schema = served_schema(&c, "draw_shape").await;
    let body = &schema["properties"]["body"];
    assert!(body["oneOf"].is_array(), "{schema}");
    assert!(body["description"].as_str().unwrap().contains("oneOf"));
    let r = run(&c, "draw_shape", json!({"body": {"radius": 2}})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    assert_eq!(s.vendor.last().body, r#"{"radius":2}"#);
    c.cancel().await.unwrap();
    s.app.stop().await;
}

#[tokio::test]
async fn required_parameters_with_a_default_are_optional_and_the_default_is_sent() {
    let s = shapes().await;
    let (c, _) = legacy_client(&s.app, &s.token, ProtocolVersion::V_2025_11_25).await;
    let schema = served_schema(&c, "get_report").await;
    assert_eq!(names(&schema["required"]), set(&["year"]), "{schema}");
    assert_eq!(schema["properties"]["format"]["default"], "json");

    let r = run(&c, "get_report", json!({"year": 2025})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let seen = s.vendor.last();
    assert_eq!(seen.path, "/reports/2025");
    // the required one is sent with its default; the optional one is left to the vendor
    assert_eq!(seen.query.as_deref(), Some("format=json"));
    run(&c, "get_report", json!({"year": 2025, "format": "csv"})).await;
    assert_eq!(s.vendor.last().query.as_deref(), Some("format=csv"));
    c.cancel().await.unwrap();
    s.app.stop().await;
}

#[tokio::test]
async fn empty_answers_are_successes_and_count_as_uses() {
    let s = shapes().await;
    let (c, _) = legacy_client(&s.app, &s.token, ProtocolVersion::V_2025_11_25).await;
    for (code, expected) in [
        (204, "HTTP 204 No Content"),
        (205, "HTTP 205 Reset Content"),
        (200, "HTTP 200 OK (empty body)"),
    ] {
        let r = run(&c, "delete_with_status", json!({"code": code})).await;
        assert_eq!(r.is_error, Some(false), "{code}: {r:?}");
        assert_eq!(text(&r), expected);
        assert_eq!(s.vendor.last().path, format!("/empty/{code}"));
    }
    let calls: i64 = graft::on_db!(s.app.graft.pool(), |e| sqlx::query_scalar(
        "SELECT u.calls FROM tool_usage u JOIN tools t ON t.id = u.tool_id WHERE t.name = 'delete_with_status'",
    )
    .fetch_one(e).await)
    .unwrap();
    assert_eq!(calls, 3);
    c.cancel().await.unwrap();
    s.app.stop().await;
}

#[tokio::test]
async fn header_and_cookie_parameters_go_where_declared_and_owned_headers_are_not_inputs() {
    let s = shapes().await;
    let (c, _) = legacy_client(&s.app, &s.token, ProtocolVersion::V_2025_11_25).await;
    let schema = served_schema(&c, "who_am_i").await;
    assert_eq!(
        names(&schema["properties"]),
        set(&["X-Trace-Id", "theme"]),
        "{schema}"
    );
    assert!(schema.get("required").is_none(), "{schema}");

    let r = run(
        &c,
        "who_am_i",
        json!({"X-Trace-Id": "t-1", "theme": "dark; x=1"}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let seen = s.vendor.last();
    assert_eq!(seen.query, None, "nothing falls through to the query");
    assert_eq!(seen.headers["x-trace-id"], "t-1");
    assert_eq!(seen.headers["cookie"], "theme=dark%3B%20x=1");

    // an input named like a withheld header is refused and nothing is sent
    let before = s.vendor.count();
    for bad in [
        json!({"Authorization": "Bearer stolen"}),
        json!({"authorization": "Bearer stolen"}),
        json!({"X-HTTP-Method-Override": "DELETE"}),
    ] {
        let r = run(&c, "who_am_i", bad.clone()).await;
        assert_eq!(r.is_error, Some(true), "{bad}");
        assert!(text(&r).contains("set by Graft"), "{}", text(&r));
    }
    assert_eq!(s.vendor.count(), before);

    // an error that repeats a huge input stays within the result budget
    let huge = "x".repeat(700_000);
    let r = run(&c, "who_am_i", json!({"theme": [huge]})).await;
    assert_eq!(r.is_error, Some(true));
    let sent = serde_json::to_string(&r).unwrap().len();
    assert!(sent <= 512 * 1024, "{sent} bytes");
    assert_eq!(
        r.structured_content.unwrap()["error"]["code"],
        "invalid_input"
    );
    c.cancel().await.unwrap();
    s.app.stop().await;
}

#[tokio::test]
async fn multipart_uploads_send_files_from_base64_and_dry_runs_show_no_bytes() {
    use base64::Engine;
    let s = shapes().await;
    let (c, _) = legacy_client(&s.app, &s.token, ProtocolVersion::V_2025_11_25).await;
    let schema = served_schema(&c, "upload_file").await;
    assert_eq!(
        schema["properties"]["file"]["contentEncoding"], "base64",
        "{schema}"
    );
    assert!(schema["properties"]["file_filename"].is_object());
    assert_eq!(names(&schema["required"]), set(&["file", "title"]));

    let bytes: Vec<u8> = (0u8..=255).chain(*b"end").collect();
    let encoded = base64::engine::general_purpose::STANDARD.encode(&bytes);
    let input =
        json!({"file": encoded, "file_filename": "report.pdf", "title": "Q3", "tags": ["a", "b"]});
    let r = run(&c, "upload_file", input.clone()).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let parts = r.structured_content.as_ref().unwrap()["parts"]
        .as_array()
        .unwrap()
        .clone();
    let file = parts.iter().find(|p| p["name"] == "file").unwrap();
    assert_eq!(file["filename"], "report.pdf");
    assert_eq!(file["contentType"], "application/octet-stream");
    assert_eq!(file["bytes"], json!(bytes));
    let fields: Vec<(String, String)> = parts
        .iter()
        .filter(|p| p["filename"].is_null())
        .map(|p| {
            (
                p["name"].as_str().unwrap().to_string(),
                p["text"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        fields,
        vec![
            ("tags".to_string(), "a".to_string()),
            ("tags".to_string(), "b".to_string()),
            ("title".to_string(), "Q3".to_string())
        ]
    );
    let ct = s.vendor.last().headers["content-type"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(ct.starts_with("multipart/form-data; boundary="), "{ct}");

    // a dry run previews the parts without the bytes
    let before = s.vendor.count();
    let r = call(
        &c,
        "run_tool",
        json!({"vendor": "shapes", "name": "upload_file", "input": input, "dryRun": true}),
    )
    .await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let preview = &r.structured_content.as_ref().unwrap()["request"]["body"]["multipart/form-data"];
    assert_eq!(
        preview[0],
        json!({"name": "file", "filename": "report.pdf", "bytes": 259}),
        "{preview}"
    );
    assert!(!r.structured_content.unwrap().to_string().contains(&encoded));
    assert_eq!(s.vendor.count(), before, "a dry run sends nothing");

    // not base64: invalid_input, nothing sent
    let r = run(
        &c,
        "upload_file",
        json!({"file": "not base64!", "title": "x"}),
    )
    .await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("base64"), "{}", text(&r));
    assert_eq!(s.vendor.count(), before);
    c.cancel().await.unwrap();
    s.app.stop().await;
}

#[tokio::test]
async fn images_compressed_and_latin1_answers_arrive_as_they_were_meant() {
    use base64::Engine;
    let s = shapes().await;
    let (c, _) = legacy_client(&s.app, &s.token, ProtocolVersion::V_2025_11_25).await;
    let r = run(&c, "get_png", json!({})).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let image = r
        .content
        .iter()
        .find_map(|c| c.as_image().cloned())
        .expect("image content");
    assert_eq!(image.mime_type, "image/png");
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(&image.data)
            .unwrap(),
        vendor::PNG
    );
    let r = run(&c, "get_gz", json!({})).await;
    let answer = r.structured_content.expect("JSON after decompression");
    assert_eq!(answer["zipped"], true);
    assert!(answer["acceptEncoding"].as_str().unwrap().contains("gzip"));
    let r = run(&c, "get_latin1", json!({})).await;
    assert_eq!(text(&r), "café crème");
    // a broken encoding is named as such
    let r = run(&c, "get_bad_gz", json!({})).await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("could not be decoded"), "{}", text(&r));
    c.cancel().await.unwrap();
    s.app.stop().await;
}
