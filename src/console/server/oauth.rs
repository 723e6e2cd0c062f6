//! The OAuth authorization endpoint as a console page (SPEC §10.1, issue 26.4):
//! `GET /oauth/authorize` checks the client's request and shows a signed-in person the
//! consent (the gate sends a signed-out person to `/login` and back); `POST
//! /oauth/authorize` is the person's decision: connect the client to an existing agent
//! or a new one, or deny. Plain HTML forms, so it works without JavaScript; the page
//! may not be framed (the gate's headers) and a decision needs the nonce its page was
//! rendered with (this session's) besides the gate's same-origin check.

use super::{person_of, ConsoleState};
use crate::service::oauth::{
    AgentChoice, AuthorizationRequest, AuthorizeRefusal, CheckedAuthorization,
};
use crate::service::Actor;
use axum::extract::{Form, RawQuery, State};
use axum::response::{Html, IntoResponse, Redirect, Response};
use html_escape::{encode_double_quoted_attribute as attr, encode_text as text};
use http::StatusCode;
use std::collections::HashMap;
use tower_sessions::Session;

/// The session key of the consent pages this session was shown: `(nonce, the request's
/// fingerprint)`, newest last.
const NONCE_KEY: &str = "oauth_consents";
/// Consent pages one session may have open at once (two clients signing in together).
const OPEN_CONSENTS: usize = 8;

/// The consent pages this session was shown and has not answered: (nonce, fingerprint
/// of the request), oldest first; empty when the session holds none or cannot be read.
async fn open_consents(session: &Session) -> Vec<(String, String)> {
    session
        .get(NONCE_KEY)
        .await
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// What a consent decision must match: the request the page was shown for.
fn fingerprint(c: &CheckedAuthorization) -> String {
    let parts = [
        Some(c.client.client_id.as_str()),
        Some(c.redirect_uri.as_str()),
        Some(c.code_challenge.as_str()),
        c.state.as_deref(),
        Some(c.resource.as_str()),
    ];
    crate::service::hash_token(&serde_json::to_string(&parts).unwrap_or_default())
}

/// The request's fields, as the consent form carries them back.
const FIELDS: [&str; 8] = [
    "response_type",
    "client_id",
    "redirect_uri",
    "code_challenge",
    "code_challenge_method",
    "state",
    "resource",
    "scope",
];

fn request_of(map: &HashMap<String, String>) -> AuthorizationRequest {
    let get = |k: &str| map.get(k).cloned();
    AuthorizationRequest {
        response_type: get("response_type"),
        client_id: get("client_id"),
        redirect_uri: get("redirect_uri"),
        code_challenge: get("code_challenge"),
        code_challenge_method: get("code_challenge_method"),
        state: get("state"),
        resource: get("resource"),
        scope: get("scope"),
    }
}

fn page(status: StatusCode, title: &str, body: &str) -> Response {
    let html = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"/>\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\
         <title>{} · Graft</title><link rel=\"stylesheet\" href=\"/pkg/graft.css\"/></head>\
         <body><main class=\"consent\">{body}</main></body></html>",
        text(title)
    );
    (status, Html(html)).into_response()
}

fn refused(reason: &str) -> Response {
    page(
        StatusCode::BAD_REQUEST,
        "Authorization refused",
        &format!(
            "<h1>This sign-in request cannot go on</h1><section class=\"card error-card\"><p class=\"error\">{}</p>\
             <p>Nothing was granted. Start again from the application you were connecting, or ask the person who runs Graft.</p></section>\
             <p><a href=\"/\">Graft's console</a></p>",
            text(reason)
        ),
    )
}

/// The consent page for a checked request, with an error from a failed decision.
async fn consent(
    state: &ConsoleState,
    session: &Session,
    req: &AuthorizationRequest,
    checked: &CheckedAuthorization,
    person: &str,
    error: Option<&str>,
) -> Response {
    let nonce = crate::service::random_hex(16);
    let mut open = open_consents(session).await;
    open.push((nonce.clone(), fingerprint(checked)));
    let excess = open.len().saturating_sub(OPEN_CONSENTS);
    open.drain(..excess);
    if session.insert(NONCE_KEY, open).await.is_err() {
        return refused("the console could not keep your session; try again");
    }
    let agents: Vec<String> = state
        .graft
        .list_agents()
        .await
        .unwrap_or_default()
        .into_iter()
        .filter(|a| a.removed_at.is_none() && a.disabled_at.is_none())
        .map(|a| a.name)
        .collect();
    let c = &checked.client;
    let host = url::Url::parse(&checked.redirect_uri)
        .ok()
        .map(|u| match u.host_str() {
            Some(h) => h.to_string(),
            None => format!("{}:", u.scheme()),
        })
        .unwrap_or_default();
    let how = if c.by_metadata {
        format!(
            "It is known by its metadata document at <code>{}</code>.",
            text(&c.client_id)
        )
    } else {
        "It registered itself: anyone can register a client under any name, so connect it only if you started this sign-in from that application.".to_string()
    };
    let hidden: String = FIELDS
        .iter()
        .filter_map(|k| {
            let v = match *k {
                "response_type" => req.response_type.as_deref(),
                "client_id" => req.client_id.as_deref(),
                "redirect_uri" => Some(checked.redirect_uri.as_str()),
                "code_challenge" => req.code_challenge.as_deref(),
                "code_challenge_method" => req.code_challenge_method.as_deref(),
                "state" => req.state.as_deref(),
                "resource" => req.resource.as_deref(),
                _ => req.scope.as_deref(),
            }?;
            Some(format!(
                "<input type=\"hidden\" name=\"{k}\" value=\"{}\"/>",
                attr(v)
            ))
        })
        .collect();
    let options: String = agents
        .iter()
        .map(|a| format!("<option value=\"{0}\">{1}</option>", attr(a), text(a)))
        .collect();
    let existing = if agents.is_empty() {
        String::new()
    } else {
        format!(
            "<label class=\"check\"><input type=\"radio\" name=\"agent_kind\" value=\"existing\" checked/> An agent that exists</label>\
             <label>Agent <select name=\"agent\">{options}</select></label>"
        )
    };
    let new_checked = if agents.is_empty() { " checked" } else { "" };
    let error = error
        .map(|e| format!("<p class=\"error\" role=\"alert\">{}</p>", text(e)))
        .unwrap_or_default();
    let body = format!(
        "<h1>Connect {name} to Graft?</h1>\
         <section class=\"card\">\
         <p><strong>{name}</strong> asks to act as one of your agents on Graft: to see that agent's tools, search the toolbox, \
         promote, demote and call tools. Writes still wait for a person's approval on their first call.</p>\
         <p>Its sign-in answer goes to <strong>{host}</strong>. {how}</p>\
         <p>Signed in as {person}. The client's tokens last {ttl} and renew; revoke them any time on the agent's page.</p>\
         </section>\
         <form method=\"post\" action=\"/oauth/authorize\" class=\"card\">\
         {error}{hidden}<input type=\"hidden\" name=\"nonce\" value=\"{nonce}\"/>\
         <h2>As which agent?</h2><div class=\"stack\">{existing}\
         <label class=\"check\"><input type=\"radio\" name=\"agent_kind\" value=\"new\"{new_checked}/> A new agent</label>\
         <label>New agent name <input name=\"new_name\" placeholder=\"e.g. claude-web\"/></label>\
         <div class=\"pair\"><label>Cap <input name=\"cap\" inputmode=\"numeric\" placeholder=\"20\"/></label>\
         <label>Idle window (days) <input name=\"window\" inputmode=\"numeric\" placeholder=\"21\"/></label></div></div>\
         <p><button type=\"submit\" name=\"decision\" value=\"approve\" class=\"solid\">Approve</button> \
         <button type=\"submit\" name=\"decision\" value=\"deny\" class=\"danger\">Deny</button></p>\
         </form>",
        name = text(&c.name),
        host = text(&host),
        person = text(person),
        ttl = text(&lifetime(state.graft.oauth_settings().access_ttl)),
    );
    let status = if error.is_empty() {
        StatusCode::OK
    } else {
        StatusCode::BAD_REQUEST
    };
    page(status, &format!("Connect {}", c.name), &body)
}

/// `GET /oauth/authorize` (OAuth 2.1 §4.1.1): the consent page, or a refusal the page
/// shows (bad client or redirect URI) or sends to the client (anything else).
pub async fn authorize_page(
    State(state): State<ConsoleState>,
    session: Session,
    RawQuery(query): RawQuery,
) -> Response {
    let Some(person) = person_of(&state.graft, &session).await else {
        return Redirect::to("/login").into_response();
    };
    let mut map = HashMap::new();
    for (k, v) in url::form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
        if map.insert(k.to_string(), v.to_string()).is_some() {
            return refused(&format!("the request repeats the parameter {k}"));
        }
    }
    let req = request_of(&map);
    match state.graft.check_authorization(&req).await {
        Ok(checked) => consent(&state, &session, &req, &checked, &person.name, None).await,
        Err(AuthorizeRefusal::Show(reason)) => refused(&reason),
        Err(AuthorizeRefusal::Redirect(to)) => Redirect::to(&to).into_response(),
    }
}

/// `POST /oauth/authorize`: the person's decision on the page this session was shown.
pub async fn authorize_decision(
    State(state): State<ConsoleState>,
    session: Session,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let Some(person) = person_of(&state.graft, &session).await else {
        return Redirect::to("/login").into_response();
    };
    let req = request_of(&form);
    let checked = match state.graft.check_authorization(&req).await {
        Ok(c) => c,
        Err(AuthorizeRefusal::Show(reason)) => return refused(&reason),
        Err(AuthorizeRefusal::Redirect(to)) => return Redirect::to(&to).into_response(),
    };
    // the decision names a page this session was shown, for this very request; the
    // nonce is used up
    let mut open = open_consents(&session).await;
    let sent = form.get("nonce").cloned().unwrap_or_default();
    let Some(at) = open
        .iter()
        .position(|(n, f)| *n == sent && *f == fingerprint(&checked))
    else {
        return refused("this consent form is not one this session was shown for this request (or it was used already): open the sign-in link again");
    };
    open.remove(at);
    let _ = session.insert(NONCE_KEY, open).await;
    if form.get("decision").map(String::as_str) != Some("approve") {
        tracing::info!(client = %checked.client.name, by = %person.name, "a person denied an OAuth client");
        let to = state.graft.error_redirect(
            &checked.redirect_uri,
            checked.state.as_deref(),
            "access_denied",
            "the person denied the request",
        );
        return Redirect::to(&to).into_response();
    }
    let number = |k: &str| -> Result<Option<i64>, String> {
        match form.get(k).map(|v| v.trim()).filter(|v| !v.is_empty()) {
            None => Ok(None),
            Some(v) => v
                .parse()
                .map(Some)
                .map_err(|_| format!("{k} must be a whole number (got {v:?})")),
        }
    };
    let choice = match form.get("agent_kind").map(String::as_str) {
        Some("existing") => match form.get("agent").filter(|a| !a.is_empty()) {
            Some(a) => Ok(AgentChoice::Existing(a.clone())),
            None => Err("choose an agent, or a new one".to_string()),
        },
        Some("new") => {
            let name = form
                .get("new_name")
                .map(|n| n.trim().to_string())
                .unwrap_or_default();
            match (name.is_empty(), number("cap"), number("window")) {
                (true, _, _) => Err("give the new agent a name".to_string()),
                (_, Err(e), _) | (_, _, Err(e)) => Err(e),
                (false, Ok(cap), Ok(window)) => Ok(AgentChoice::New {
                    name,
                    cap,
                    idle_window_days: window,
                }),
            }
        }
        _ => Err("choose an agent, or a new one".to_string()),
    };
    let result = match choice {
        Ok(choice) => state
            .graft
            .grant_authorization(&Actor::Person(person.name.clone()), &checked, &choice)
            .await
            .map_err(|e| e.to_string()),
        Err(e) => Err(e),
    };
    match result {
        Ok(to) => Redirect::to(&to).into_response(),
        Err(e) => consent(&state, &session, &req, &checked, &person.name, Some(&e)).await,
    }
}

/// A lifetime in words: `an hour`, `30 minutes`, `45 seconds`, `2 days`.
fn lifetime(d: std::time::Duration) -> String {
    let s = d.as_secs();
    let (n, unit) = if s.is_multiple_of(86_400) && s >= 86_400 {
        (s / 86_400, "day")
    } else if s.is_multiple_of(3600) && s >= 3600 {
        (s / 3600, "hour")
    } else if s.is_multiple_of(60) && s >= 60 {
        (s / 60, "minute")
    } else {
        (s, "second")
    };
    match n {
        1 if unit == "hour" => "an hour".to_string(),
        1 => format!("a {unit}"),
        n => format!("{n} {unit}s"),
    }
}
