//! People in the console (SPEC §2 `users`, §6): signing in and out, who is signed in, and
//! changing one's password.

use crate::console::server_fns::ConsoleResult;
#[cfg(feature = "ssr")]
use crate::console::server_fns::{
    back_saying_saved, is_local_path, session, signed_in, with_status, ConsoleError, ConsoleState,
};
#[cfg(feature = "ssr")]
use crate::service::ServiceError;
use leptos::prelude::*;

/// Signs a person in: checks the password (argon2), stores the person in a new session
/// (the id is cycled against fixation) and goes to `next` (a local path) or `/`.
/// Errors: `Refused` for a wrong name or password (one message for both).
#[server(prefix = "/api", endpoint = "login")]
pub async fn login(name: String, password: String, next: Option<String>) -> ConsoleResult<()> {
    with_status(async move {
        let state = use_context::<ConsoleState>().ok_or(ConsoleError::Internal)?;
        let session = session().await?;
        // the client's address (the accept loop puts it on every request; a proxy in
        // front makes it the proxy's)
        let address = client_address(&state).await;
        match state.sign_ins.attempt(&name, address) {
            Err(r) => {
                return Err(ConsoleError::TooMany {
                    message: r.message,
                    retry_after: r.wait.as_secs().max(1),
                })
            }
            Ok(crate::console::server::Attempt::After(wait)) => tokio::time::sleep(wait).await,
            Ok(crate::console::server::Attempt::Go) => {}
        }
        let person = match state.graft.sign_in(&name, &password).await {
            Ok(p) => p,
            Err(e @ ServiceError::Busy { .. }) => {
                // never checked: not a failed attempt
                state.sign_ins.refund(&name, address);
                return Err(e.into());
            }
            Err(e) => return Err(e.into()),
        };
        let Some(person) = person else {
            return Err(ConsoleError::Refused("Wrong name or password.".into()));
        };
        state.sign_ins.succeeded(&name, address);
        state
            .graft
            .audit(
                &crate::service::Actor::Person(person.name.clone()),
                crate::domain::audit::AuditAction::SignIn,
                &person.name,
                Some(&format!("from {address}")),
            )
            .await?;
        crate::console::server::start_session(&session, &person)
            .await
            .map_err(|_| ConsoleError::Internal)?;
        let next = next
            .filter(|n| is_local_path(n))
            .unwrap_or_else(|| "/".into());
        leptos_axum::redirect(&next);
        Ok(())
    })
    .await
}

/// The address of the client of this request, for throttling
/// ([`crate::console::server::client_address`]).
#[cfg(feature = "ssr")]
pub(crate) async fn client_address(state: &ConsoleState) -> std::net::IpAddr {
    let peer = leptos_axum::extract::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .await
        .map(|c| c.0.ip())
        .unwrap_or(std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED));
    let headers = use_context::<http::request::Parts>()
        .map(|p| p.headers)
        .unwrap_or_default();
    crate::console::server::client_address(peer, &headers, &state.trusted_proxies)
}

/// Signs out: deletes the session and goes to `/login`.
#[server(prefix = "/api", endpoint = "logout")]
pub async fn logout() -> ConsoleResult<()> {
    with_status(async move {
        let session = session().await?;
        session.flush().await.map_err(|_| ConsoleError::Internal)?;
        leptos_axum::redirect("/login");
        Ok(())
    })
    .await
}

/// The signed-in person's name.
#[server(prefix = "/api", endpoint = "whoami")]
pub async fn whoami() -> ConsoleResult<String> {
    with_status(async move { Ok(signed_in().await?.1.name) }).await
}

/// Changes the signed-in person's password. Errors: at `current` (wrong), `new` (too
/// short), `confirm` (different).
#[server(prefix = "/api", endpoint = "change_password")]
pub async fn change_password(current: String, new: String, confirm: String) -> ConsoleResult<()> {
    with_status(async move {
        let (state, person) = signed_in().await?;
        if new != confirm {
            return Err(ConsoleError::field(
                "confirm",
                "the two new passwords differ",
            ));
        }
        if let Err(e) = crate::service::users::check_password(&new) {
            return Err(ConsoleError::field("new", e.to_string()));
        }
        // checking the current password is a sign-in: counted and throttled alike
        // (security review 32.14 follow-up: a stolen session must not guess it)
        let address = client_address(&state).await;
        if let Err(r) = state.sign_ins.attempt(&person.name, address) {
            return Err(ConsoleError::TooMany {
                message: r.message,
                retry_after: r.wait.as_secs().max(1),
            });
        }
        match state
            .graft
            .change_password(&person.name, &current, &new)
            .await
        {
            Ok(renewed) => {
                state.sign_ins.succeeded(&person.name, address);
                state
                    .graft
                    .audit(
                        &crate::service::Actor::Person(person.name.clone()),
                        crate::domain::audit::AuditAction::PasswordChange,
                        &person.name,
                        None,
                    )
                    .await?;
                // the person's other sessions ended; this one carries on at the new epoch
                let session = session().await?;
                crate::console::server::start_session(&session, &renewed)
                    .await
                    .map_err(|_| ConsoleError::Internal)?;
                back_saying_saved("password");
                Ok(())
            }
            Err(ServiceError::Invalid(m)) => Err(ConsoleError::field("current", m)),
            Err(e) => Err(e.into()),
        }
    })
    .await
}
