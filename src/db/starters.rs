//! Queries of starter sets (issue 31; SPEC §1 "promoted by": rule): templates, their
//! tools, each agent's own starter tools and the template it uses.

use super::{Conn, DbResult, Pool};
use crate::{execute, on_db};
use sqlx::FromRow;

/// A `starter_templates` row with how many tools it lists and how many agents use it.
#[derive(Debug, Clone, FromRow, PartialEq, Eq)]
pub struct TemplateRow {
    pub id: i64,
    /// Unique name (the agent-name rules: `[A-Za-z0-9._-]`, 1–64 characters).
    pub name: String,
    /// Creation time (ms).
    pub created_at: i64,
    /// Tools it lists.
    pub tools: i64,
    /// Agents that use it.
    pub agents: i64,
}

const TEMPLATE_SELECT: &str = "SELECT t.id, t.name, t.created_at, \
     (SELECT COUNT(*) FROM starter_template_tools x WHERE x.template_id = t.id) AS tools, \
     (SELECT COUNT(*) FROM agents a WHERE a.starter_template_id = t.id) AS agents \
     FROM starter_templates t";

/// Inserts a template; returns its id. Errors: the name is taken (unique).
pub async fn insert_template(conn: &mut Conn, name: &str, now: i64) -> DbResult<i64> {
    on_db!(conn, |e| sqlx::query_scalar(
        "INSERT INTO starter_templates (name, created_at) VALUES ($1, $2) RETURNING id"
    )
    .bind(name)
    .bind(now)
    .fetch_one(e)
    .await)
}

/// Every template, by name.
pub async fn select_templates(pool: &Pool) -> DbResult<Vec<TemplateRow>> {
    on_db!(pool, |e| sqlx::query_as(&format!(
        "{TEMPLATE_SELECT} ORDER BY t.name"
    ))
    .fetch_all(e)
    .await)
}

/// The template with a name.
pub async fn select_template_by_name(pool: &Pool, name: &str) -> DbResult<Option<TemplateRow>> {
    on_db!(pool, |e| sqlx::query_as(&format!(
        "{TEMPLATE_SELECT} WHERE t.name = $1"
    ))
    .bind(name)
    .fetch_optional(e)
    .await)
}

/// Deletes a template: the agents that used it keep their own starter tools and use no
/// template from now on. Returns whether it existed.
pub async fn delete_template(conn: &mut Conn, id: i64) -> DbResult<bool> {
    execute!(
        &mut *conn,
        "UPDATE agents SET starter_template_id = NULL WHERE starter_template_id = $1",
        id
    )?;
    execute!(
        &mut *conn,
        "DELETE FROM starter_template_tools WHERE template_id = $1",
        id
    )?;
    Ok(execute!(conn, "DELETE FROM starter_templates WHERE id = $1", id)? > 0)
}

/// Lists a tool in a template unless it is there; returns whether it was added.
pub async fn insert_template_tool(
    conn: &mut Conn,
    template_id: i64,
    tool_id: i64,
    now: i64,
) -> DbResult<bool> {
    Ok(execute!(
        conn,
        "INSERT INTO starter_template_tools (template_id, tool_id, added_at) VALUES ($1, $2, $3) \
         ON CONFLICT (template_id, tool_id) DO NOTHING",
        template_id,
        tool_id,
        now
    )? > 0)
}

/// Takes a tool off a template's list; returns whether it was there.
pub async fn delete_template_tool(
    conn: &mut Conn,
    template_id: i64,
    tool_id: i64,
) -> DbResult<bool> {
    Ok(execute!(
        conn,
        "DELETE FROM starter_template_tools WHERE template_id = $1 AND tool_id = $2",
        template_id,
        tool_id
    )? > 0)
}

/// The ids of the tools a template lists, in the order they were added.
pub async fn select_template_tool_ids(pool: &Pool, template_id: i64) -> DbResult<Vec<i64>> {
    on_db!(pool, |e| {
        sqlx::query_scalar(
        "SELECT tool_id FROM starter_template_tools WHERE template_id = $1 ORDER BY added_at, tool_id"
    )
    .bind(template_id)
    .fetch_all(e)
    .await
    })
}

/// The agents that use a template: `(id, name)`, by name.
pub async fn select_template_agents(pool: &Pool, template_id: i64) -> DbResult<Vec<(i64, String)>> {
    on_db!(pool, |e| sqlx::query_as(
        "SELECT id, name FROM agents WHERE starter_template_id = $1 ORDER BY name"
    )
    .bind(template_id)
    .fetch_all(e)
    .await)
}

/// Makes an agent use a template (or none).
pub async fn update_agent_template(
    conn: &mut Conn,
    agent_id: i64,
    template_id: Option<i64>,
) -> DbResult<()> {
    execute!(
        conn,
        "UPDATE agents SET starter_template_id = $2 WHERE id = $1",
        agent_id,
        template_id
    )?;
    Ok(())
}

/// Puts a tool in an agent's own starter tools unless it is there; returns whether it
/// was added.
pub async fn insert_agent_starter_tool(
    conn: &mut Conn,
    agent_id: i64,
    tool_id: i64,
    now: i64,
) -> DbResult<bool> {
    Ok(execute!(
        conn,
        "INSERT INTO agent_starter_tools (agent_id, tool_id, added_at) VALUES ($1, $2, $3) \
         ON CONFLICT (agent_id, tool_id) DO NOTHING",
        agent_id,
        tool_id,
        now
    )? > 0)
}

/// Takes a tool out of an agent's own starter tools; returns whether it was there.
pub async fn delete_agent_starter_tool(
    conn: &mut Conn,
    agent_id: i64,
    tool_id: i64,
) -> DbResult<bool> {
    Ok(execute!(
        conn,
        "DELETE FROM agent_starter_tools WHERE agent_id = $1 AND tool_id = $2",
        agent_id,
        tool_id
    )? > 0)
}

/// An agent's starter set: `(tool id, listed as its own (0/1), listed by its template
/// (0/1))`, one row per tool, in the order they were first added.
pub async fn select_starter_tools(pool: &Pool, agent_id: i64) -> DbResult<Vec<(i64, i64, i64)>> {
    on_db!(pool, |e| sqlx::query_as(
        "SELECT tool_id, MAX(own) AS own, MAX(tpl) AS tpl FROM ( \
           SELECT tool_id, CAST(1 AS BIGINT) AS own, CAST(0 AS BIGINT) AS tpl, added_at \
             FROM agent_starter_tools WHERE agent_id = $1 \
           UNION ALL \
           SELECT x.tool_id, CAST(0 AS BIGINT), CAST(1 AS BIGINT), x.added_at \
             FROM starter_template_tools x JOIN agents a ON a.starter_template_id = x.template_id \
             WHERE a.id = $1 \
         ) s GROUP BY tool_id ORDER BY MIN(added_at), tool_id"
    )
    .bind(agent_id)
    .fetch_all(e)
    .await)
}
