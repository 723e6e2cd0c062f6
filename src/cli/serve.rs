//! `graft serve`: MCP and the console on one port (SPEC §3, §6).

use super::embed_with_bar;
use crate::config::Settings;
use crate::server::Application;
use crate::service::Graft;
use anyhow::Context;

/// `graft serve` (SPEC §7): checks the key, embeds what lacks embeddings, creates the
/// first console user, then serves MCP and the console until stopped.
pub(super) async fn serve(graft: Graft, settings: &Settings) -> anyhow::Result<()> {
    graft.check_secret_key().await?;
    if settings.secret_key_file.is_some() && settings.data_dir.join("secret.key").exists() {
        tracing::warn!(
            old = %settings.data_dir.join("secret.key").display(),
            "GRAFT_SECRET_KEY_FILE is set, but a key file is still beside the database: delete it once Graft runs with the new one (a copy of the data directory would otherwise still open the secrets it sealed)"
        );
    }
    let status = graft.search_status();
    match &status.model {
        Some(model) => {
            tracing::info!(%model, "search ranks by words and meaning (sentence embeddings)")
        }
        None => tracing::warn!(
            model_dir = %settings.default_model_dir().display(),
            "search is lexical-only: no embedding model (run scripts/get-model.sh, or set GRAFT_EMBEDDING_MODEL)"
        ),
    }
    if crate::telemetry::enabled() {
        tracing::info!(
            endpoint = %crate::telemetry::endpoint(),
            payloads = crate::telemetry::payloads(),
            "traces are exported (OTLP over HTTP, protobuf)"
        );
    }
    // embeddings a new model or another process's import lack, before serving
    embed_with_bar(&graft).await?;
    if let Some(password) = graft.ensure_admin().await? {
        tracing::warn!(
            "created the console user admin with password {password} (shown this once; change it on the Account page)"
        );
    }
    let listener = tokio::net::TcpListener::bind(settings.addr)
        .await
        .with_context(|| format!("cannot listen on {}", settings.addr))?;
    let app = Application::build(settings, graft, listener).await?;
    let mut addr = app.local_addr()?;
    if !addr.ip().is_loopback()
        && settings.public_url.is_none()
        && settings.allowed_hosts.is_empty()
    {
        tracing::warn!(
            %addr,
            "the console and /mcp answer only requests addressed to loopback names (localhost, 127.0.0.1): set GRAFT_PUBLIC_URL, or GRAFT_ALLOWED_HOSTS, to the name clients use to reach this machine"
        );
    }
    if addr.ip().is_unspecified() && settings.public_url.is_none() {
        tracing::warn!(
            %addr,
            "no GRAFT_PUBLIC_URL: links, client configurations and the OAuth metadata name {}, which no client can reach; set GRAFT_PUBLIC_URL to the URL clients use",
            settings.public_url()
        );
    }
    if addr.ip().is_unspecified() {
        // the address to print is one a browser can open here
        addr.set_ip(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST));
    }
    let https = settings
        .public_url
        .as_deref()
        .is_some_and(|u| u.starts_with("https://"));
    if !https && !addr.ip().is_loopback() {
        tracing::warn!(
            %addr,
            "the console is served over plain HTTP on an address others can reach: passwords and the session cookie cross the network in the clear, and the cookie goes to every port of this host. Put Graft behind HTTPS and set GRAFT_PUBLIC_URL=https://… (sessions over plain HTTP end after {} idle hours)",
            crate::config::PLAIN_HTTP_IDLE_HOURS
        );
    }
    tracing::info!(%addr, "graft serving MCP at http://{addr}/mcp and the console at http://{addr}/");
    app.run().await?;
    tracing::info!("graft stopped");
    Ok(())
}
